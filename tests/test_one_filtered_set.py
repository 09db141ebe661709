"""One filtered set: the same seed keeps the same rows whatever the storage order, the thread
count, the products' chunking, the caller's precision settings or the device. What another
machine would change is emulated here: rows stored in another order, other chunk sizes (other
reduction orders), one or two threads; and the operators a phase runs are checked against the
ones PyTorch documents as nondeterministic on CUDA."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import run_in_process
from torch.utils._python_dispatch import TorchDispatchMode

import aflite
from aflite.algorithm.loop.result import kept_fingerprint
from aflite.algorithm.models.ridge import direct, kernel
from aflite.algorithm.models.ridge import heldout as ridge_heldout
from aflite.algorithm.numerics import reduce

# Operators whose CUDA kernels add in an order that changes from run to run (their floating
# results move in the last bits), from torch.use_deterministic_algorithms' documentation.
ACCUMULATING = {
    "index_add", "index_add_", "scatter_add", "scatter_add_", "put", "put_", "scatter_reduce",
    "scatter_reduce_", "index_reduce", "index_reduce_", "histc", "cumsum", "cumsum_",
    "embedding_dense_backward", "_embedding_bag_backward",
}  # fmt: skip
# ... of which these add at an index: the order matters only where two adds meet
INDEXED = {"index_add", "index_add_", "scatter_add", "scatter_add_", "scatter_reduce",
           "scatter_reduce_", "index_reduce", "index_reduce_"}  # fmt: skip
# ... and those that write in an unspecified order: nondeterministic when two writes meet
WRITING = {"index_put", "index_put_", "_index_put_impl_", "scatter", "scatter_", "index_copy",
           "index_copy_"}  # fmt: skip


class NondeterministicOps(TorchDispatchMode):
    """Records every call of an operator above that could change a floating result on CUDA:
    floating accumulations (integer sums are exact in any order), ``bincount`` with weights,
    ``index_put(accumulate=True)``, and writes whose targets repeat."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        out = args[0] if args and isinstance(args[0], torch.Tensor) else None
        floating = out is not None and (out.is_floating_point() or out.is_complex())
        if name in ACCUMULATING and floating:
            # an add into targets that never meet has one order: only repeats are recorded
            if name not in INDEXED or _targets_repeat(name, args):
                self.found.append(name)
        elif name == "bincount" and (
            len(args) > 1 and args[1] is not None or kwargs.get("weights") is not None
        ):
            self.found.append("bincount with weights")
        elif name in WRITING and floating:
            accumulate = kwargs.get(
                "accumulate", args[3] if len(args) > 3 and name.endswith("put_") else False
            )
            if accumulate is True:
                self.found.append(f"{name}(accumulate=True)")
            elif _targets_repeat(name, args):
                self.found.append(f"{name} with repeated targets")
        return func(*args, **kwargs)


def _targets_repeat(name: str, args: tuple) -> bool:
    if "index_put" in name:
        idx = [i for i in args[1] if i is not None]
        if not idx:
            return False
        cols = torch.stack(
            [i.expand(torch.broadcast_shapes(*[j.shape for j in idx])).reshape(-1) for i in idx],
            dim=1,
        )
        return len(torch.unique(cols, dim=0)) < len(cols)
    if "scatter" in name:
        dim, index = args[1], args[2]
        flat = index.movedim(dim, 0).reshape(index.shape[dim], -1)
        return any(len(torch.unique(c)) < len(c) for c in flat.T)
    if "index_copy" in name or "index_add" in name or "index_reduce" in name:
        return len(torch.unique(args[2])) < len(args[2])
    return False


def _dense(n=300, d=40, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, d)).astype(np.float32)
    x[: n // 3, 0] += y[: n // 3]
    return x, y


def _sparse(n=400, d=200, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = (rng.random((n, d)) < 0.02).astype(np.float32)
    x[np.arange(n), y] += 1.0  # an artifact in three columns
    return x, y


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_a_phase_on_the_forms_cuda_runs_uses_no_operator_nondeterministic_there(form, monkeypatch):
    monkeypatch.setattr(reduce, "ordered_sums", lambda device: True)  # the sums a CUDA run makes
    # the dense forms are the ones a GPU runs (the sparse form needs the CPU's raw rows)
    x, y = _dense()
    with NondeterministicOps() as seen:
        aflite.filter(
            x,
            y,
            target_size=200,
            train_size=60,
            slice_size=20,
            n_partitions=8,
            model=aflite.RidgeEnsemble(form=form),
            groups=np.arange(300) // 2,
            ids=[f"r{i}" for i in range(300)],
            progress=False,
            seed=1,
            threads=1,  # a dispatch mode sees its own thread only
        )
    assert seen.found == []


@pytest.mark.parametrize("family", ["logistic", "choice"])
@pytest.mark.parametrize("partitions", ["blocks", "uniform"])
def test_the_iterative_families_use_no_operator_nondeterministic_on_cuda(
    family, partitions, monkeypatch
):
    # the sums a CUDA run makes, checked here on the CPU
    monkeypatch.setattr(reduce, "ordered_sums", lambda device: True)
    if family == "choice":
        rng = np.random.default_rng(0)
        y = rng.integers(0, 4, 300)
        x = rng.normal(size=(300, 4, 8)).astype(np.float32)
        x[np.arange(150), y[:150], 0] += 2.0
        model = "linear"
    else:
        x, y = _dense()
        model = aflite.LinearEnsemble()
    with NondeterministicOps() as seen:
        res = aflite.filter(
            x,
            y,
            target_size=200,
            train_size=60,
            slice_size=20,
            n_partitions=8,
            partitions=partitions,
            model=model,
            ids=[f"r{i}" for i in range(300)],
            progress=False,
            seed=1,
            threads=1,  # a dispatch mode sees its own thread only
        )
    assert seen.found == []
    assert res.history[0].solver["solver"] == ("choice" if family == "choice" else "primal")


def test_the_ordered_sums_equal_index_add():
    rng = np.random.default_rng(0)
    idx = torch.as_tensor(rng.integers(0, 5, 40))
    for src in (torch.randn(40, dtype=torch.float64), torch.randn(40, 3, 7)):
        want = torch.zeros(5, *src.shape[1:], dtype=src.dtype).index_add_(0, idx, src)
        got = reduce.add_rows(torch.zeros_like(want), idx, src, ordered=True)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_the_recorder_catches_what_it_is_for():
    with NondeterministicOps() as seen:
        torch.zeros(3).index_add_(0, torch.tensor([0, 0]), torch.ones(2))
        torch.zeros(3)[torch.tensor([1, 1])] = torch.tensor([1.0, 2.0])
        torch.zeros(3, dtype=torch.int64).index_add_(
            0, torch.tensor([0, 0]), torch.ones(2, dtype=torch.int64)
        )
        torch.zeros(3)[torch.tensor([0, 2])] = torch.tensor([1.0, 2.0])
        torch.zeros(2, 3).scatter_add_(1, torch.tensor([[0, 2], [1, 1]]), torch.ones(2, 2))
        torch.zeros(2, 3).scatter_add_(1, torch.tensor([[0, 2], [1, 0]]), torch.ones(2, 2))
    assert seen.found == ["index_add_", "index_put_ with repeated targets", "scatter_add_"]


def _tall(n=3000, d=16, seed=0):
    return _dense(n, d, seed)  # t = 450 >> d: the primal form, blocks kept from phase to phase


def _items(n=240, k=4, d=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k, d)).astype(np.float32)
    y = rng.integers(0, k, n)
    x[np.arange(n // 3), y[: n // 3], 0] += 1.5  # a give-away on a third of the items
    return x, y


@pytest.mark.parametrize(
    "make, form",
    [(_dense, "dual"), (_tall, "primal"), (_sparse, "sparse"), (_items, "primal")],
)  # fmt: skip
def test_the_same_seed_keeps_the_same_rows_in_any_storage_order_chunking_and_thread_count(
    make, form, monkeypatch
):
    """For the exact family at every shape (t > d, t <= d dense or sparse, items): rows
    stored in another order, one or two threads, and the products cut into other chunks
    (what another BLAS does: another order of the same sums) keep the same rows."""
    x, y = make()
    n = len(y)
    ids = [f"row-{i:04d}" for i in range(n)]
    kw = dict(
        target_size=int(0.6 * n),
        train_size=int(0.15 * n),
        slice_size=int(0.05 * n),
        n_partitions=32,
        threshold=0.5,
        model="ridge",
        seed=7,
        progress=False,
    )
    base = aflite.filter(x, y, ids=ids, threads=1, **kw)
    kept = base.fingerprint(ids)
    assert 0 < len(base.removed)
    assert base.history[0].solver["form"] == form
    for seed in (0, 1):
        perm = np.random.default_rng(seed).permutation(n)
        moved = aflite.filter(x[perm], y[perm], ids=[ids[i] for i in perm], threads=2, **kw)
        assert moved.fingerprint([ids[i] for i in perm]) == kept
    # other reduction orders: the products cut into other chunks, the blocks' sums in halves
    monkeypatch.setattr(ridge_heldout, "heldout_stats", _chunked(ridge_heldout.heldout_stats))
    monkeypatch.setattr(direct, "gram64", _halves(direct.gram64))
    with monkeypatch.context() as m:
        m.setattr(kernel, "_kernel", _chunked_kernel(kernel._kernel))
        assert aflite.filter(x, y, ids=ids, threads=2, **kw).fingerprint(ids) == kept


def _halves(fn):
    """``z^T z`` as the sum of its two halves' products: the same sums in another order."""

    def run(z, out):
        h = len(z) // 2
        fn(z[:h], out)
        rest = torch.empty_like(out)
        fn(z[h:], rest)
        out.add_(rest)

    return run


@pytest.mark.parametrize("make", [_dense, _sparse])
def test_logistic_regression_keeps_the_same_rows_at_any_thread_count_and_says_what_it_cannot(
    make, tmp_path
):
    """Logistic regression's passes are cut into the same tasks whatever the thread count,
    so one and two threads keep the same rows; its fits stop at a tolerance, so the row
    order or another machine can move a prediction near zero margin: a run says so."""
    x, y = make()
    n = len(y)
    kw = dict(target_size=int(0.6 * n), train_size=int(0.15 * n), slice_size=int(0.05 * n),
              n_partitions=16, threshold=0.5, model="linear", seed=7, progress=False)  # fmt: skip
    one = aflite.filter(x, y, threads=1, **kw)
    assert aflite.filter(x, y, threads=2, **kw).fingerprint() == one.fingerprint()
    assert not aflite.MODELS["linear"].exact and aflite.MODELS["ridge"].exact
    from aflite.data import bundled_snli

    rows = bundled_snli().read_text().splitlines()[:300]
    (tmp_path / "in.jsonl").write_text("\n".join(rows) + "\n")
    r = run_in_process("filter", str(tmp_path / "in.jsonl"), "--text-fields", "hypothesis",
                       "--model", "linear", "--n-partitions", "8", "--out-dir",
                       str(tmp_path / "o"), "--no-report")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "logistic regression's kept set can move with the row order" in r.stderr + r.stdout


def _chunked(fn):
    def run(rows, *args, **kwargs):
        store = rows.store
        ranges = store.ranges
        store.ranges = lambda step: ranges(max(1, step // 7))
        try:
            return fn(rows, *args, **kwargs)
        finally:
            store.ranges = ranges

    return run


def _chunked_kernel(fn):
    def run(store):
        return fn(store).clone()

    return run


def test_a_shuffled_file_gives_the_same_kept_set_and_fingerprint(tmp_path):
    from aflite.data import bundled_snli

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:900]]
    shuffled = [rows[i] for i in np.random.default_rng(3).permutation(len(rows))]
    prints = []
    for name, data in (("a", rows), ("b", shuffled)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in data))
        r = run_in_process("filter", str(path), "--text-fields", "hypothesis", "--group-field",
                           "premise", "--n-partitions", "32", "--out-dir", str(tmp_path / name),
                           "--quiet", "--no-report")  # fmt: skip
        assert r.returncode == 0, r.stderr
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        assert summary["parameters"]["model_family"] == "ridge"
        kept = sorted(json.loads(line)["id"] for line in (tmp_path / name / "kept.jsonl").open())
        prints.append((summary["kept_fingerprint"], kept))
        assert f"kept set fingerprint {summary['kept_fingerprint']}" in r.stdout
    assert prints[0] == prints[1]
    assert prints[0][0] == kept_fingerprint(prints[0][1])  # the fingerprint of those ids


def test_the_callers_precision_settings_do_not_change_the_kept_set():
    x, y = _sparse()
    kw = dict(
        target_size=250,
        train_size=60,
        slice_size=20,
        n_partitions=16,
        threshold=0.5,
        seed=3,
        progress=False,
    )
    base = aflite.filter(x, y, model="ridge", **kw)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium")  # bfloat16 products where the CPU has them
        with torch.autocast("cpu", dtype=torch.bfloat16):
            other = aflite.filter(x, y, model="ridge", **kw)
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(before)
    np.testing.assert_array_equal(base.kept, other.kept)


@pytest.mark.parametrize("partitions", ["blocks", "uniform"])
def test_a_score_never_rests_on_a_fit_far_from_converged(partitions):
    x, y = _dense()
    cut_short = aflite.LinearEnsemble(max_iter=2, tol=1e-8)
    ps = aflite.predictability_scores(
        x, y, n_partitions=8, train_size=60, model=cut_short, partitions=partitions
    )
    assert ps.info["n_left_out"] == 8 and (ps.n_heldout == 0).all()
    ok = aflite.predictability_scores(
        x, y, n_partitions=8, train_size=60, model="linear", partitions=partitions
    )
    assert ok.info["n_left_out"] == 0 and (ok.n_heldout > 0).all()
