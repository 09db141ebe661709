"""CUDA gives the CPU's results (within float tolerance) for the same partitions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import aflite
from aflite.algorithm.linear import (
    LinearEnsemble,
    batched_logistic_fit,
    gram_preconditioner,
    heldout_correct,
)
from aflite.algorithm.scoring import _moments

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


def _scores(x, y, train, device):
    dev = torch.device(device)
    xt = torch.as_tensor(x, device=dev)
    std = _moments(x, dev)
    tr = torch.as_tensor(train, device=dev)
    chol = gram_preconditioner(xt, std, 800, 1.0)
    w, prob = batched_logistic_fit(
        xt, std, torch.as_tensor(y, device=dev), tr, 3, model=LinearEnsemble(), chol=chol
    )
    correct, held = heldout_correct(w, prob, 1.0 - tr)
    return (correct / held).cpu().numpy()


def test_cuda_scores_equal_cpu_for_the_same_partitions():
    x, y, train = _problem()
    cpu, gpu = _scores(x, y, train, "cpu"), _scores(x, y, train, "cuda")
    # identical up to a rare flipped prediction where a margin is within float error
    assert np.mean(np.abs(cpu - gpu) < 1e-6) > 0.995
    assert np.max(np.abs(cpu - gpu)) <= 2 / 16 + 1e-6


def test_filter_runs_on_cuda_and_is_seed_deterministic():
    x, y, _ = _problem()
    a = aflite.filter(x, y, target_size=2000, train_size=800, slice_size=200, device="cuda", seed=1)
    b = aflite.filter(x, y, target_size=2000, train_size=800, slice_size=200, device="cuda", seed=1)
    np.testing.assert_array_equal(a.kept, b.kept)
    assert a.params["device"].startswith("cuda")
