"""CUDA gives the CPU's results for the same partitions (within the solver's tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import aflite
from aflite.algorithm import LinearEnsemble
from aflite.algorithm.models.linear.ensemble import fit_ensemble, heldout_counts
from aflite.algorithm.numerics.store import FeatureStore

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


def _problem(n=4000, d=64, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = (rng.normal(size=(n, d)) + 0.4 * np.eye(3, d)[y]).astype(np.float32)
    train = np.zeros((n, 16), dtype=np.float32)
    for j in range(16):
        train[rng.permutation(n)[:800], j] = 1
    return x, y, train


def _scores(x, y, train, device, solver):
    dev = torch.device(device)
    store = FeatureStore(x, dev)
    tr = torch.as_tensor(train, device=dev)
    yt = torch.as_tensor(y, device=dev)
    ens, _ = fit_ensemble(store, yt, tr, 3, LinearEnsemble(solver=solver))
    correct, held = heldout_counts(store, yt, ens, 1.0 - tr)
    return (correct / held).cpu().numpy()


@pytest.mark.parametrize("solver", ["primal", "span"])
def test_cuda_scores_equal_cpu_for_the_same_partitions(solver):
    x, y, train = _problem()
    cpu, gpu = _scores(x, y, train, "cpu", solver), _scores(x, y, train, "cuda", solver)
    # identical up to a rare flipped prediction where a margin is within the tolerance
    assert np.mean(np.abs(cpu - gpu) < 1e-6) > 0.995
    assert np.max(np.abs(cpu - gpu)) <= 2 / 16 + 1e-6


def test_filter_runs_on_cuda_and_is_seed_deterministic():
    x, y, _ = _problem()
    a = aflite.filter(x, y, target_size=2000, train_size=800, slice_size=200, device="cuda", seed=1)
    b = aflite.filter(x, y, target_size=2000, train_size=800, slice_size=200, device="cuda", seed=1)
    np.testing.assert_array_equal(a.kept, b.kept)
    assert a.params["device"].startswith("cuda")


def test_cuda_example_scores_equal_cpu():
    """The same folds and the same row order (drawn on the CPU) on either device: the
    training dynamics and the out-of-fold fits agree within float32 rounding."""
    from aflite.scoring import score_examples

    x, y, _ = _problem(n=3000, d=32)
    names = ["datamap", "pvi", "aum", "el2n", "forgetting"]
    cpu = score_examples(x, y, scorers=names, device="cpu", seed=0)
    gpu = score_examples(x, y, scorers=names, device="cuda", seed=0)
    np.testing.assert_array_equal(cpu.folds, gpu.folds)
    for col in ("confidence", "variability", "pvi", "aum", "el2n"):
        np.testing.assert_allclose(gpu.columns[col], cpu.columns[col], atol=2e-3, rtol=2e-3)
    assert (gpu.columns["region"] == cpu.columns["region"]).mean() > 0.98


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_the_exact_family_keeps_the_cpus_rows_on_cuda_with_tf32_on(form):
    """One filtered set on any device: the same partitions (drawn on the CPU), float64
    answers, no atomic adds; the caller's TF32 setting changes nothing."""
    x, y, _ = _problem(n=3000, d=512 if form == "dual" else 64)
    ids = [f"r{i}" for i in range(len(y))]
    kw = dict(
        target_size=1800,
        train_size=300 if form == "dual" else 600,
        slice_size=150,
        n_partitions=32,
        threshold=0.5,
        model=aflite.RidgeEnsemble(form=form),
        ids=ids,
        seed=4,
        progress=False,
    )
    cpu = aflite.filter(x, y, device="cpu", **kw)
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        runs = [aflite.filter(x, y, device="cuda", **kw) for _ in range(2)]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    for gpu in runs:
        assert gpu.fingerprint(ids) == cpu.fingerprint(ids)
        assert gpu.history[0].solver["form"] == form


def test_two_cuda_runs_of_the_logistic_family_give_the_same_bits():
    """Block sums go through a one-hot product on CUDA, not atomics (index_add_): two runs
    with the same seed give the same scores to the last bit."""
    x, y, _ = _problem(n=20_000, d=128)
    kw = dict(n_partitions=32, train_size=2000, model="linear", device="cuda", seed=3)
    a = aflite.predictability_scores(x, y, **kw)
    b = aflite.predictability_scores(x, y, **kw)
    assert a.info["solver"] == "primal"
    np.testing.assert_array_equal(a.n_correct, b.n_correct)
    np.testing.assert_array_equal(a.n_heldout, b.n_heldout)


# An L-BFGS step synchronises only where a decision needs the host (its line search and its
# stop); a phase adds a fixed few (the design, the counts). Bounds by design, per iteration.
SYNCS_PER_ITERATION = 8
SYNCS_PER_PHASE = 60


def test_a_phase_synchronises_with_the_host_a_stated_number_of_times():
    import warnings

    from aflite._internal.transfer import counting

    x, y, _ = _problem(n=40_000, d=256)
    kw = dict(
        target_size=36_000,
        n_partitions=64,
        train_size=4000,
        slice_size=2000,
        threshold=0.0,
        model="linear",
        device="cuda",
        progress=False,
        score_kept=False,
    )
    aflite.filter(x, y, **kw)  # kernels and caches
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as seen, counting() as moves:
            warnings.simplefilter("always")
            res = aflite.filter(x, y, **kw)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    syncs = sum("synchroniz" in str(w.message) for w in seen)
    phases = len(res.history)
    print(
        f"\nsyncs per phase {syncs / phases:.0f}; down {moves.down_bytes / phases:,.0f} B in "
        f"{moves.down_calls / phases:.0f} calls, up {moves.up_bytes:,} B in {moves.up_calls} "
        f"calls; iterations {[h.solver.get('iterations') for h in res.history]}"
    )
    assert moves.down_bytes / phases <= 24 * 40_000
    iterations = sum(h.solver["iterations"] for h in res.history)
    assert syncs <= SYNCS_PER_ITERATION * iterations + SYNCS_PER_PHASE * phases


def test_items_with_the_exact_family_keep_the_cpus_rows_on_cuda():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 1200)
    x = rng.normal(size=(1200, 4, 32)).astype(np.float32)
    x[np.arange(400), y[:400], 0] += 1.5
    kw = dict(target_size=900, train_size=0.2, slice_size=100, threshold=0.5, model="ridge",
              seed=1, progress=False)  # fmt: skip
    cpu = aflite.filter(x, y, device="cpu", **kw)
    gpu = aflite.filter(x, y, device="cuda", **kw)
    assert gpu.history[0].solver["solver"] == "choice-ridge"
    assert gpu.fingerprint() == cpu.fingerprint()
