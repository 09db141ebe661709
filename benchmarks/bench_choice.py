"""One AFLITE phase of the choice-wise linear model: seconds against per-partition references.

Multiple-choice items (default N=10,000 items, K=4 choices, d=384 embedding-like features,
m=64 partitions, t=10%): the right choice leans a little along one direction. aflite fits
all m models at once on the default block design and counts each item's held-out hits. The
references fit the same objective (C * sum CE + 0.5 ||w||^2 on the same standardised
features) one partition at a time, on the same training parts:

* K choices: full-batch torch L-BFGS (strong Wolfe line search, float32, the same relative
  gradient tolerance), one fit per partition;
* two choices (``--choices 2``): also scikit-learn's ``LogisticRegression(fit_intercept=False)``
  on the choices' difference, one fit per partition.

The references time ``--ref-partitions`` fits (default 16) and scale to m; the printed ratio
is reference seconds per phase over aflite's. The largest relative weight difference between
aflite and the torch reference on the timed partitions is printed as a check.

    taskset -c 1 python benchmarks/bench_choice.py
    python benchmarks/bench_choice.py --choices 2
    python benchmarks/bench_choice.py --smoke    # 400 items, d=32, m=8: checks it runs
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _data import embedding_like


def items(n: int, k: int, d: int, seed: int = 0):
    x, _ = embedding_like(n * k, d, 2, seed=seed)
    x = x.reshape(n, k, d)
    rng = np.random.default_rng(seed + 1)
    y = rng.integers(0, k, n)
    direction = rng.normal(size=d).astype(np.float32)
    x[np.arange(n), y] += 0.005 * direction / np.linalg.norm(direction) * np.sqrt(d)
    return x, y


def torch_fit(xs, y, c: float, tol: float):
    import torch

    w = torch.zeros(xs.shape[2], requires_grad=True)
    opt = torch.optim.LBFGS(
        [w],
        lr=1,
        max_iter=1000,
        history_size=5,
        tolerance_grad=0.0,
        tolerance_change=0.0,
        line_search_fn="strong_wolfe",
    )
    g0 = [None]

    def closure():
        opt.zero_grad()
        loss = c * torch.nn.functional.cross_entropy(xs @ w, y, reduction="sum") + 0.5 * w @ w
        loss.backward()
        gn = float(w.grad.norm())
        if g0[0] is None:
            g0[0] = gn
        elif gn <= tol * g0[0]:  # the same stopping rule as aflite's solver
            raise StopIteration
        return loss

    try:
        opt.step(closure)
    except StopIteration:
        pass
    return w.detach(), opt.state[w]["n_iter"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--choices", type=int, default=4)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--train", type=float, default=0.1)
    ap.add_argument("--ref-partitions", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--smoke", action="store_true", help="400 items, d=32, m=8, 2 reference fits")
    args = ap.parse_args()
    if args.smoke:
        args.items, args.dim, args.partitions, args.ref_partitions = 400, 32, 8, 2

    import torch

    from aflite._internal.threads import compute_threads
    from aflite.algorithm import ChoiceEnsemble
    from aflite.algorithm.loop.partitions import block_design
    from aflite.algorithm.models.choice.fit import _hits, choice_heldout_counts, fit_choices
    from aflite.algorithm.numerics.blocks import default_block_rows, plan_blocks
    from aflite.algorithm.numerics.item_store import choice_store

    n, k, d, m = args.items, args.choices, args.dim, args.partitions
    t = int(round(args.train * n))
    dev = torch.device(args.device)
    x, y = items(n, k, d)
    print(f"{n} items x {k} choices x {d} features, m={m}, t={t}, {args.threads} thread(s), {dev}")
    model = ChoiceEnsemble()
    store = choice_store(x, dev)
    yt = torch.as_tensor(y, device=dev)
    neg = torch.zeros((n, k), device=dev)

    def phase():
        gen = torch.Generator(device=dev).manual_seed(0)
        design = block_design(
            n, m, t, block_rows=default_block_rows(k * d, dev), generator=gen, device=dev
        )
        plan = plan_blocks(
            store,
            yt,
            design,
            torch.arange(n, device=dev),
            k,
            task_rows=(1 << 18 if dev.type == "cuda" else 4096) // k,
        )
        fit = fit_choices(store, yt, neg, model, plan=plan)
        correct, held = choice_heldout_counts(store, yt, neg, fit, plan=plan)
        return design, fit, correct, held

    with compute_threads(args.threads):
        phase()  # warm-up
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0, c0 = time.perf_counter(), time.process_time()
        design, fit, correct, held = phase()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        ours, ours_cpu = time.perf_counter() - t0, time.process_time() - c0
    r = fit.report
    bias = float((correct / held.clamp_min(1)).mean())
    print(
        f"aflite   : {ours:7.2f} s per phase, {ours_cpu:.2f} s CPU  (iterations max {r.iterations}, mean "
        f"{r.mean_iterations:.1f}, residual {r.residual:.1e}; bias {bias:.3f}, chance {1 / k:.3f})"
    )

    train = design.train_mask().bool().cpu().numpy()
    xs = store.standardised().view(n, k, d).cpu()
    y_cpu = torch.as_tensor(y)
    n_ref = min(args.ref_partitions, m)
    torch.set_num_threads(args.threads)
    t0, c0 = time.perf_counter(), time.process_time()
    worst, differ, n_held = 0.0, 0, 0
    refs, iters = [], []
    for j in range(n_ref):
        w, its = torch_fit(xs[train[:, j]], y_cpu[train[:, j]], model.C, model.tol)
        refs.append(w)
        iters.append(its)
        ours_w = fit.weights[:, j].cpu()
        worst = max(worst, float((ours_w - w).norm() / w.norm()))
    ref = (time.perf_counter() - t0) * m / n_ref
    ref_cpu = (time.process_time() - c0) * m / n_ref
    zero = torch.zeros((n, k))
    keys = torch.as_tensor(store.rows)  # the items' input positions draw the ties
    for j, w in enumerate(refs):
        held_j = ~train[:, j]
        x_j, y_j, neg_j, keys_j = xs[held_j], y_cpu[held_j], zero[held_j], keys[held_j]
        a = _hits(x_j, y_j, neg_j, fit.weights[:, j : j + 1].cpu(), keys_j)
        b = _hits(x_j, y_j, neg_j, w[:, None], keys_j)
        differ += int((a != b).sum())
        n_held += int(held_j.sum())
    print(
        f"torch    : {ref:7.2f} s per phase, {ref_cpu:.2f} s CPU  ({n_ref} of {m} fits timed, "
        f"scaled; iterations max {max(iters)})  ratio {ref / ours:.1f}x wall, "
        f"{ref_cpu / ours_cpu:.1f}x CPU"
    )
    print(
        f"           largest relative weight difference {worst:.1e}; held-out hits that differ "
        f"{differ} of {n_held}"
    )
    if k == 2:
        from sklearn.linear_model import LogisticRegression

        z = (xs[:, 0] - xs[:, 1]).numpy()
        t0, c0 = time.perf_counter(), time.process_time()
        for j in range(n_ref):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                LogisticRegression(C=model.C, fit_intercept=False, tol=model.tol).fit(
                    z[train[:, j]], (y[train[:, j]] == 0).astype(int)
                )
        sk = (time.perf_counter() - t0) * m / n_ref
        sk_cpu = (time.process_time() - c0) * m / n_ref
        print(
            f"sklearn  : {sk:7.2f} s per phase, {sk_cpu:.2f} s CPU  (difference reduction, "
            f"{n_ref} of {m} fits timed, scaled)  ratio {sk / ours:.1f}x wall, "
            f"{sk_cpu / ours_cpu:.1f}x CPU"
        )


if __name__ == "__main__":
    main()
