"""Rows held in shards: sums over shards add up to the same bits however the shards are spread
over workers, and a run over shards keeps one process's set whatever the number of workers,
a worker lost mid-phase and a resumed run included.

The workers here are the Ray backend's own (its store, its models, its worker class), run in
this process: only the transport is replaced (tests/test_ray.py runs them on a cluster)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

import aflite
from aflite._internal.transfer import counting
from aflite.algorithm.numerics.shard_set import add_partials
from aflite.algorithm.numerics.shards import (
    ShardedFeatures,
    owned_nodes,
    tree_height,
    tree_value,
)
from aflite.algorithm.numerics.store import chunk_moments, feature_moments, merge_moments

pytest.importorskip("ray", reason="the Ray backend's errors need: pip install 'aflite[ray]'")
from aflite.distributed import RayBackend  # noqa: E402
from aflite.distributed.ray_store import WorkerLost, lost  # noqa: E402
from aflite.distributed.ray_worker import ShardWorker  # noqa: E402


class InProcess(RayBackend):
    """The Ray backend with its workers in this process. ``kill_at``: the ``run`` call
    (counted from 1) before which worker 0 is replaced by a fresh one, as Ray restarts a
    worker that died: it holds nothing."""

    def __init__(self, n_workers: int, kill_at: int | None = None) -> None:
        super().__init__(n_workers)
        self.kill_at, self.runs = kill_at, 0

    def _new_worker(self, node):
        return ShardWorker(1, False)

    def _send(self, w, method, args):
        if method == "run":
            self.runs += 1
            if self.runs == self.kill_at:
                self.workers[0] = ShardWorker(1, False)
        try:
            return True, getattr(self.workers[w], method)(*args)
        except Exception as e:  # noqa: BLE001 - sorted out as Ray's replies are
            return False, e

    def _started(self, handles):
        return len(handles)

    def _receive(self, handles):
        for ok, value in handles:
            if not ok:
                raise WorkerLost(str(value)) if lost(value) else value
        return [value for _, value in handles]

    def _ping(self, w):
        return self.workers[w].token

    def _kill(self, w):
        pass

    def put(self, value, copies=1):
        return value


def _data(n=3000, d=24, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    x = (rng.normal(size=(n, d)) + 0.6 * np.eye(classes, d)[y]).astype(np.float32)
    x[: n // 10, 1] += 2.0 * (y[: n // 10] == 1)  # a give-away in some rows
    return x, y


KW = dict(target_size=0.8, slice_size=0.06, train_size=0.1, threshold=0.5, seed=3)


def _fingerprint(kept) -> str:
    return hashlib.sha256(np.sort(np.asarray(kept)).tobytes()).hexdigest()[:12]


def test_sharded_features_read_their_parts(tmp_path):
    x, _ = _data(n=50, d=3)
    saved = ShardedFeatures.save(x, tmp_path, rows=16)
    assert saved.shape == (50, 3) and saved.n_parts == 4 and saved.dtype == np.float32
    assert np.array_equal(saved[10:40], x[10:40])
    idx = np.array([49, 0, 17, 16, 33])
    assert np.array_equal(saved[idx], x[idx])
    assert np.array_equal(ShardedFeatures.split(x, 7)[:], x)
    with pytest.raises(ValueError, match="same number of features"):
        ShardedFeatures([x, x[:, :2]])
    with pytest.raises(ValueError, match="not \\(n, d\\)"):
        ShardedFeatures([x[:, 0]])
    with pytest.raises(ValueError, match="a list"):
        ShardedFeatures(x)
    items = np.zeros((6, 3, 2), dtype=np.float32)
    assert ShardedFeatures([items, items[:2]]).shape == (8, 3, 2)
    with pytest.raises(ValueError, match="same number of \\(choices, features\\)"):
        ShardedFeatures([items, items[:, :2]])


def _items(n=1500, k=4, d=12, seed=0):
    """Items with a planted give-away in a third of them, and every seventh padded."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k, d)).astype(np.float32)
    y = rng.integers(0, k - 1, n)
    x[np.arange(n // 3), y[: n // 3], 0] += 2.0
    x[::7, k - 1] = np.nan  # a padded last choice (never the answer)
    return x, y


ITEMS_KW = dict(target_size=0.8, slice_size=0.05, seed=1, n_partitions=16)


@pytest.mark.parametrize("model", ["choice", "choice-ridge"])
def test_items_on_any_number_of_workers_keep_one_process_set(model):
    """Multiple-choice items, each worker holding its shards' items (an array's one shard, or
    four parts), padding included: one process's kept set at 1, 2 and 3 workers."""
    x, y = _items()
    for given in (x, ShardedFeatures.split(x, 400)):
        local = aflite.filter(given, y, model=model, **ITEMS_KW)
        assert len(local.history) >= 3
        for workers in (1, 2, 3):
            backend = InProcess(workers)
            remote = aflite.filter(given, y, model=model, backend=backend, **ITEMS_KW)
            assert _fingerprint(remote.kept) == _fingerprint(local.kept), (given, workers)
            assert [h.n_removed for h in remote.history] == [h.n_removed for h in local.history]
            record = remote.history[0].solver
            assert record["shards"] == (1 if given is x else 4)
            # a phase moves weights and sums, and O(items) of design and counts; for
            # choice-ridge each worker's subtrees of the blocks' sums, B x (d+2)^2 float64
            moved = record["sent_bytes"] + record["received_bytes"]
            if given is x:  # one shard: the whole phase on its worker
                assert moved < 64 * len(y), (workers, moved)
            elif model == "choice":
                assert moved < x.nbytes / 2, (workers, moved)
            else:
                sums = record["blocks"] * (x.shape[2] + 2) ** 2 * 8
                assert moved <= 2 * workers * sums + 64 * len(y), (workers, moved)
            # each worker holds its own shards' items, not a copy of all of them
            held = [w.stored() for w in backend.workers]
            assert sum(sum(h.values()) for h in held) == x.shape[0] * x.shape[1] * x.shape[2] * 4


@pytest.mark.parametrize("model", ["choice", "choice-ridge"])
def test_items_in_shards_keep_one_set_at_any_thread_count(model):
    x, y = _items()
    parts = ShardedFeatures.split(x, 400)
    one = aflite.filter(parts, y, model=model, threads=1, **ITEMS_KW)
    two = aflite.filter(parts, y, model=model, threads=2, **ITEMS_KW)
    assert _fingerprint(one.kept) == _fingerprint(two.kept) and len(one.history) >= 3
    assert [h.solver.get("iterations") for h in one.history] == [
        h.solver.get("iterations") for h in two.history
    ]


def test_items_of_many_blocks_gather_each_part_sums_with_the_same_set(monkeypatch):
    """Where every block's sums would pass BLOCK_BYTES, choice-ridge over shards gathers each
    part's own sums, a group at a time: the same kept set, in one process and on workers."""
    import aflite.algorithm.models.ridge.items as ridge_items

    x, y = _items()
    parts = ShardedFeatures.split(x, 400)
    blocks = aflite.filter(parts, y, model="choice-ridge", **ITEMS_KW)
    monkeypatch.setattr(ridge_items, "BLOCK_BYTES", 1)
    local = aflite.filter(parts, y, model="choice-ridge", **ITEMS_KW)
    remote = aflite.filter(parts, y, model="choice-ridge", backend=InProcess(3), **ITEMS_KW)
    assert _fingerprint(local.kept) == _fingerprint(blocks.kept) == _fingerprint(remote.kept)
    record = remote.history[0].solver
    assert record["part_sums"] == ITEMS_KW["n_partitions"] and "blocks" not in record
    sums = record["part_sums"] * (x.shape[2] + 2) ** 2 * 8
    moved = record["sent_bytes"] + record["received_bytes"]
    assert moved <= 2 * 3 * sums + 64 * len(y)


def test_items_in_parts_are_scored_as_the_array():
    """Scorers read items in parts whole: the same scores as the array."""
    from aflite.scoring import score_examples

    x, y = _items(n=400)
    a = score_examples(x, y, scorers=["pvi"], seed=0)
    b = score_examples(ShardedFeatures.split(x, 150), y, scorers=["pvi"], seed=0)
    assert np.array_equal(a.columns["pvi"], b.columns["pvi"])


@pytest.mark.parametrize("model", ["choice", "choice-ridge"])
def test_items_lost_mid_phase_are_given_back_and_the_set_is_the_same(model):
    x, y = _items()
    parts = ShardedFeatures.split(x, 400)
    local = aflite.filter(parts, y, model=model, **ITEMS_KW)
    backend = InProcess(2, kill_at=4)  # inside the first phase
    remote = aflite.filter(parts, y, model=model, backend=backend, **ITEMS_KW)
    assert backend.restarts == 1 and np.array_equal(remote.kept, local.kept)


@pytest.mark.parametrize("workers", [0, 2])
def test_bad_items_in_parts_are_named_where_they_are_read(workers):
    """Items in parts are checked where they are read (a worker): the item's input number."""
    x, y = _items(n=300)
    x[250, 1, 3] = np.nan  # one feature of a real choice
    kw = {} if workers == 0 else {"backend": InProcess(workers)}
    with pytest.raises(ValueError, match="NaN or inf in item 250, choice 1"):
        aflite.filter(ShardedFeatures.split(x, 100), y, model="choice", target_size=0.9, **kw)
    x, y = _items(n=300)
    y[140] = 3  # item 140's last choice is padding
    with pytest.raises(ValueError, match="item 140: answer 3 points at a padded"):
        aflite.filter(ShardedFeatures.split(x, 100), y, model="choice", target_size=0.9, **kw)


def test_moments_merge_shard_by_shard():
    x, _ = _data(n=4000, d=5)
    x += 1e4  # an offset the chunked merge must not lose
    parts = ShardedFeatures.split(x, 1500)
    mean, std = feature_moments(parts)
    n, m, m2 = merge_moments([chunk_moments(x[s : s + 1500]) for s in range(0, 4000, 1500)])
    assert np.array_equal(mean, m) and np.array_equal(std, np.sqrt(m2 / n))
    # one shard: the array's own moments, to the last bit
    one = feature_moments(ShardedFeatures([x]))
    assert all(np.array_equal(a, b) for a, b in zip(one, feature_moments(x)))
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=0), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
def test_every_spread_of_shards_over_workers_adds_the_same_bits(n):
    rng = np.random.default_rng(n)
    leaves = [torch.from_numpy(rng.normal(size=64) * 10.0 ** rng.integers(-8, 8)) for _ in range(n)]
    one = tree_value(tree_height(n), 0, n, leaves.__getitem__, add_partials)
    spreads = [
        [list(range(n))],
        [[i] for i in range(n)],
        [list(range(0, n, 2)), list(range(1, n, 2))],
    ]
    spreads += [np.array_split(np.arange(n), k).__iter__() for k in (2, 3)]
    for spread in spreads:
        groups = [list(map(int, g)) for g in spread if len(g)]
        known = {}
        for g in groups:
            nodes = owned_nodes(g, n)
            covered = sorted(k for lv, i in nodes for k in range(i << lv, min((i + 1) << lv, n)))
            assert covered == sorted(g)  # every shard of the worker's, once
            for node in nodes:
                known[node] = tree_value(*node, n, leaves.__getitem__, add_partials)
        got = tree_value(tree_height(n), 0, n, lambda i: None, add_partials, known)
        assert torch.equal(got, one)
    assert len(owned_nodes(list(range(n)), n)) == 1  # all shards: the root alone


@pytest.mark.parametrize("model", ["linear", "ridge"])
def test_one_part_is_the_array(model):
    """An input in one part is one shard: the phases run as they do on the array."""
    x, y = _data()
    a = aflite.filter(x, y, model=model, **KW)
    b = aflite.filter(ShardedFeatures([x]), y, model=model, **KW)
    assert np.array_equal(a.kept, b.kept) and len(a.history) >= 2


def test_shards_in_one_process_keep_one_set_at_any_thread_count():
    x, y = _data()
    parts = ShardedFeatures.split(x, 700)
    one = aflite.filter(parts, y, model="linear", threads=1, **KW)
    two = aflite.filter(parts, y, model="linear", threads=2, **KW)
    assert np.array_equal(one.kept, two.kept)
    assert [h.solver["iterations"] for h in one.history] == [
        h.solver["iterations"] for h in two.history
    ]


@pytest.mark.parametrize("model", ["linear", "ridge"])
def test_any_number_of_workers_keeps_one_process_set(model):
    x, y = _data()
    parts = ShardedFeatures.split(x, 700)  # 5 shards
    local = aflite.filter(parts, y, model=model, **KW)
    assert len(local.history) >= 2
    for workers in (1, 2, 3, 5):
        backend = InProcess(workers)
        with counting() as moves:
            remote = aflite.filter(parts, y, model=model, backend=backend, **KW)
        assert _fingerprint(remote.kept) == _fingerprint(local.kept), workers
        record = remote.history[0].solver
        assert record["workers"] == workers and record["shards"] == 5
        assert moves.sent_bytes >= x.nbytes  # the features went to the workers, once


@pytest.mark.parametrize("model", ["linear", "ridge"])
def test_a_worker_lost_mid_phase_is_given_its_shards_and_the_phase_is_done_again(model):
    x, y = _data()
    parts = ShardedFeatures.split(x, 700)
    local = aflite.filter(parts, y, model=model, **KW)
    backend = InProcess(2, kill_at=7)  # inside the first phase's fit
    remote = aflite.filter(parts, y, model=model, backend=backend, **KW)
    assert backend.restarts == 1 and np.array_equal(remote.kept, local.kept)


def test_a_phase_moves_o_of_steps_times_weights_plus_rows():
    """Bytes a phase moves: the design's O(rows) and, per step, the weights out and one sum
    per worker back; never O(rows x d) or O(rows x m)."""
    n, d, m = 24000, 64, 16
    x, y = _data(n=n, d=d)
    res = aflite.filter(ShardedFeatures.split(x, n // 4), y, model="linear", backend=InProcess(2),
                        n_partitions=m, **{**KW, "target_size": 0.9})  # fmt: skip
    rec = res.history[0].solver
    weights = m * 3 * (d + 1) * 4  # m x C x (d+1) float32
    passes = 2 * rec["iterations"] + 4  # the objective's (a trial step and a retry), the rest
    traffic = rec["sent_bytes"] + rec["received_bytes"]
    # per pass the weights to 2 workers and a sum back from each; per row 40 bytes at most
    assert traffic <= 2 * 2 * passes * weights + 40 * n
    assert traffic < x.nbytes / 2


def test_a_resumed_run_over_shards_keeps_the_uninterrupted_set():
    x, y = _data()
    parts = ShardedFeatures.split(x, 700)
    whole = aflite.filter(parts, y, model="ridge", **KW)
    states = []

    def stop_after_two(state):
        states.append(state)
        if len(state.history) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        aflite.filter(parts, y, model="ridge", backend=InProcess(2), checkpoint=stop_after_two,
                      **KW)  # fmt: skip
    resumed = aflite.filter(parts, y, model="ridge", backend=InProcess(3), resume=states[-1], **KW)
    assert np.array_equal(resumed.kept, whole.kept)


@pytest.mark.parametrize(("alpha", "t"), [(0.3, 600), (0.3, 40), (1e-7, 600), (1e-4, 40)])
def test_the_exact_family_over_shards_counts_what_one_process_counts(alpha, t):
    """Conjugate gradients over the shards (and, where a part's bound certifies too little,
    its own gathered sums solved directly) give the counts of one process's direct forms:
    the primal design (t > d) and the dual one (t < d), two phases (kept blocks)."""
    from aflite._internal.device import make_generator
    from aflite.algorithm.loop.phases import PhaseRunner
    from aflite.algorithm.models import MODELS
    from aflite.algorithm.models.ridge.model import RidgeModel
    from aflite.algorithm.models.ridge.settings import RidgeEnsemble
    from aflite.algorithm.models.ridge.sharded import ShardedRidgeModel

    x, y = _data(n=5000, d=60)
    parts = ShardedFeatures.split(x, 1700)
    later = np.sort(np.random.default_rng(5).choice(5000, 4200, replace=False))

    def phases(model):
        cpu = torch.device("cpu")
        runner = PhaseRunner(parts, y, 3, model=model, family=MODELS["ridge"], n_partitions=24,
                             train_size=t, groups=None, device=cpu,
                             generator=make_generator(0, cpu))  # fmt: skip
        return runner.run(np.arange(5000)), runner.run(later)

    local = phases(RidgeModel(RidgeEnsemble(alpha)))
    shards = phases(ShardedRidgeModel(RidgeEnsemble(alpha)))
    for a, b in zip(local, shards):
        assert np.array_equal(a.correct, b.correct) and np.array_equal(a.heldout, b.heldout)
    if alpha < 1e-3:
        assert shards[0].info["direct_parts"] > 0  # the direct path ran
