"""One AFLITE phase: block and uniform partitions vs loops of scikit-learn fits, at equal
accuracy, and against the phase's useful work.

For every case aflite scores the rows (m=64 partitions) twice: on block partitions (the
default) and on uniform partitions. A loop of scikit-learn ``LogisticRegression`` fits on the
*same* partitions, run to a tight tolerance, is each run's converged reference. Printed per
case: Pearson r and top-500 overlap of the scores with the reference, iterations and seconds;
the block run's speed against the converged loop and against a loop loosened until it agrees
with the reference as well as aflite does (the fair ratio at equal accuracy); and the
**useful-work floor**: the products a phase cannot avoid (forward and gradient over each
classifier's own t rows, 2*2*m*t*d*C FLOP per pass, times the passes, plus predicting each
row's held-out classifiers) at the sgemm peak measured in the same run, with the fraction of
it the block run reached.

    python benchmarks/bench_phase.py                        # every case, full size
    python benchmarks/bench_phase.py --cases snli-ngrams-t300,phase-20k
    python benchmarks/bench_phase.py --quick                # smaller sizes, m=16
    python benchmarks/bench_phase.py --quick --tol 1e-3     # another solver tolerance
    python benchmarks/bench_phase.py --cases phase-20k,phase-20k-c20 --ridge  # + the exact family
    python benchmarks/bench_phase.py --cases phase-20k,phase-20k-c20 --ridge-only
    python benchmarks/bench_phase.py --scale            # whole runs at N=200,000, d=256, m=64
    python benchmarks/bench_phase.py --smoke                # one tiny case, m=4: checks it runs

With ``--ridge`` every case also times the exact family (``model="ridge"``, its default form
for the shapes) on block partitions: against a loop of scikit-learn ``RidgeClassifier`` fits
on the same partitions (whose held-out counts it must equal), against the converged
logistic loop of the same case, at m = ``--ridge-partitions`` (1,024) against the logistic
phase at m, and against its useful-work floor: the Gram or kernel products, the
factorisations and the held-out predictions at the sgemm peak.

``--scale`` times whole runs instead (``aflite.filter`` with the command line's defaults,
``PRESETS["practical"]``, m = 64 for both families): N = 200,000 rows of d = 256 embedding-like
features, 3 classes, the exact family against logistic regression, alternating A B A B, and
prints the ratio of the medians (``--threads``, default 1 here too; ``--scale-threads 2`` for
both cores).

Runs on ``--threads`` worker threads (default 1: pin the process with ``taskset -c N`` to
time one core).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from _data import embedding_like, snli_minilm, snli_ngrams
from sklearn.linear_model import LogisticRegression

import aflite
from aflite.algorithm.numerics.store import standardise

TIGHT = 1e-6
LOOSE = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6)


def _offset(make, value):
    def f():
        x, y = make()
        return x.astype(np.float64) + value, y

    return f


def _rows(make, n):
    def f():
        x, y = make()
        return x[:n], y[:n]

    return f


CASES = {
    # name: (features, t as rows or a fraction of N)
    "snli-ngrams-t300": (snli_ngrams, 300),
    "snli-ngrams-t1000": (snli_ngrams, 1000),
    "snli-ngrams-t3000": (snli_ngrams, 3000),
    "snli-minilm": (snli_minilm, 0.1),
    "synthetic-wide": (lambda: embedding_like(2000, 2000), 200),
    "classes-20": (lambda: embedding_like(6000, 256, n_classes=20), 0.1),
    "offset-1e4": (_offset(snli_minilm, 1e4), 0.1),
    "phase-20k": (lambda: embedding_like(20_000, 1024), 0.1),
    "phase-20k-c20": (lambda: embedding_like(20_000, 1024, n_classes=20), 0.1),
}


def sklearn_loop(xs, y, mask, tol):
    correct = np.zeros(len(y))
    held = np.zeros(len(y))
    iters = []
    start = time.perf_counter()
    for j in range(mask.shape[1]):
        tr = mask[:, j]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LogisticRegression(tol=tol, max_iter=100_000).fit(xs[tr], y[tr])
        iters.append(int(clf.n_iter_[0]))
        correct[~tr] += clf.predict(xs[~tr]) == y[~tr]
        held[~tr] += 1
    return correct / np.maximum(held, 1), time.perf_counter() - start, int(np.median(iters))


def agreement(ref, scores, top=500):
    r = float(np.corrcoef(ref, scores)[0, 1])
    a = set(np.argsort(-ref, kind="stable")[:top])
    b = set(np.argsort(-scores, kind="stable")[:top])
    return r, len(a & b) / top


def sgemm_peak(n=4096, reps=3):
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def useful_flops(n, d, c, m, t, mean_iterations):
    """Forward + gradient over each classifier's own rows per pass, and the held-out
    predictions: what any layout of the phase has to compute."""
    return m * (mean_iterations + 1) * 4.0 * t * d * c + 2.0 * m * (n - t) * d * c


def run_aflite(x, y, m, t, partitions, tol, threads):
    start = time.perf_counter()
    ps = aflite.predictability_scores(
        x,
        y,
        n_partitions=m,
        train_size=t,
        seed=0,
        device="cpu",
        partitions=partitions,
        model=aflite.LinearEnsemble(tol=tol),
        threads=threads,
    )
    return ps, time.perf_counter() - start


def run_case(
    name, make, t_spec, m, top, tol, threads, peak, ridge_m=0, skip_loose=False, ridge_only=False
):
    x, y = make()
    n, d = x.shape
    c = len(np.unique(y))
    t = int(round(t_spec * n)) if isinstance(t_spec, float) else t_spec
    aflite.predictability_scores(x[:500], y[:500], n_partitions=2, train_size=50)  # warm-up
    xs = standardise(x)
    print(f"{name}: N={n} d={d} classes={c} m={m} t={t}", flush=True)
    if ridge_only:
        return run_ridge(x, y, m, t, 0, threads, peak, logistic_secs=None, loop_secs=None)
    out = {}
    for partitions in ("blocks", "uniform"):
        ps, secs = run_aflite(x, y, m, t, partitions, tol, threads)
        ref, t_ref, it_ref = sklearn_loop(xs, y, ps.train_mask, TIGHT)
        r, ov = agreement(ref, ps.scores, top)
        info = ps.info
        out[partitions] = (ps, secs, ref, t_ref, r, ov)
        print(
            f"  aflite {partitions:7s} {info['solver']:6s}: {secs:7.2f} s, "
            f"{info['iterations']} iterations (mean {info['mean_iterations']:.0f}), residual "
            f"{info['residual']:.1e} | r={r:.4f} top-{top}={ov:.3f} | converged scikit-learn "
            f"loop (median {it_ref} iterations) {t_ref:.1f} s -> {t_ref / secs:.1f}x",
            flush=True,
        )
    ps, secs, ref, t_ref, r, ov = out["blocks"]
    print(f"  blocks vs uniform: {out['uniform'][1] / secs:.1f}x faster", flush=True)
    for loose in () if skip_loose else LOOSE:
        scores, t_loose, it = sklearn_loop(xs, y, ps.train_mask, loose)
        r_l, ov_l = agreement(ref, scores, top)
        if r_l >= r and ov_l >= ov:
            print(
                f"  scikit-learn loop loosened to tol={loose:g} (median {it} iterations), "
                f"r={r_l:.4f} top-{top}={ov_l:.3f}: {t_loose:.1f} s -> {t_loose / secs:.1f}x "
                "at equal accuracy",
                flush=True,
            )
            break
    else:
        if not skip_loose:
            print("  no loosened tolerance reached aflite's agreement", flush=True)
    floor = useful_flops(n, d, c, m, t, ps.info["mean_iterations"]) / peak
    print(
        f"  useful-work floor {floor:.2f} s at {peak / 1e9:.0f} GFLOP/s: the block run "
        f"reached {floor / secs:.0%} of it",
        flush=True,
    )
    if ridge_m:
        run_ridge(x, y, m, t, ridge_m, threads, peak, logistic_secs=secs, loop_secs=t_ref)
    return secs, ps.info


def ridge_loop(xs, y, mask, alpha):
    """A loop of scikit-learn RidgeClassifier fits on the partitions of ``mask``: held-out
    correct counts and seconds."""
    from sklearn.linear_model import RidgeClassifier

    correct = np.zeros(len(y))
    start = time.perf_counter()
    for j in range(mask.shape[1]):
        tr = mask[:, j]
        clf = RidgeClassifier(alpha=alpha * tr.sum()).fit(xs[tr], y[tr])
        correct[~tr] += clf.predict(xs[~tr]) == y[~tr]
    return correct, time.perf_counter() - start


def ridge_floor(form, n, d, c, m, t, steps=0):
    """FLOP a phase of the exact family cannot avoid: the Gram matrices (primal: every
    current row's once) or the kernel (dual: once a run, counted here), one factorisation
    per part, and the held-out predictions; cg: its passes over each part's rows (the steps
    it took, the first sums and the bound's residual) and the predictions."""
    predict = 2.0 * m * (n - t) * d * c
    if form == "cg":
        return (steps + 2) * 4.0 * t * d * c * m + predict
    if form == "primal":
        return 2.0 * n * d * d + m * d**3 / 3 + predict
    return 2.0 * n * n * d + m * t**3 / 3 + predict


def run_ridge(x, y, m, t, ridge_m, threads, peak, *, logistic_secs, loop_secs):
    n, d = x.shape
    c = len(np.unique(y))
    model = aflite.RidgeEnsemble()
    aflite.predictability_scores(x[:500], y[:500], n_partitions=2, train_size=50, model=model)
    start = time.perf_counter()
    ps = aflite.predictability_scores(
        x, y, n_partitions=m, train_size=t, seed=0, device="cpu", model=model, threads=threads
    )
    secs = time.perf_counter() - start
    form = ps.info["form"]
    correct, t_loop = ridge_loop(standardise(x).astype(np.float64), y, ps.train_mask, model.alpha)
    same = (
        "equal"
        if np.array_equal(correct, ps.n_correct)
        else (f"{int((correct != ps.n_correct).sum())} rows differ")
    )
    versus = "" if loop_secs is None else f" | converged logistic loop -> {loop_secs / secs:.1f}x"
    print(
        f"  ridge ({form}, m={m}): {secs:.2f} s | scikit-learn RidgeClassifier loop on the same "
        f"partitions {t_loop:.1f} s -> {t_loop / secs:.1f}x, held-out counts {same}{versus}",
        flush=True,
    )
    if form != "sparse":
        floor = ridge_floor(form, n, d, c, m, t, ps.info.get("cg_steps", 0)) / peak
        print(
            f"  ridge useful-work floor {floor:.2f} s at {peak / 1e9:.0f} GFLOP/s: reached "
            f"{floor / secs:.0%} of it",
            flush=True,
        )
    if not ridge_m:
        return secs
    start = time.perf_counter()
    big_ps = aflite.predictability_scores(
        x, y, n_partitions=ridge_m, train_size=t, seed=0, device="cpu", model=model, threads=threads
    )
    big = time.perf_counter() - start
    print(
        f"  ridge ({big_ps.info['form']}) m={ridge_m}: {big:.2f} s = "
        f"{big / logistic_secs:.2f}x the logistic phase at "
        f"m={m} ({logistic_secs:.2f} s)",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="1/4 of the rows, m=16, top-100")
    ap.add_argument("--tol", type=float, default=aflite.LinearEnsemble().tol)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ridge", action="store_true", help="also time the exact family")
    ap.add_argument("--ridge-partitions", type=int, default=1024)
    ap.add_argument(
        "--ridge-only",
        action="store_true",
        help="time only the exact family (and its scikit-learn loop)",
    )
    ap.add_argument(
        "--skip-loose",
        action="store_true",
        help="leave out the search for a loosened scikit-learn loop",
    )
    ap.add_argument(
        "--smoke", action="store_true", help="N=400, d=32, m=4, with --ridge: checks it runs"
    )
    ap.add_argument("--scale", action="store_true", help="whole runs, N=200,000, d=256, m=64")
    ap.add_argument("--scale-threads", type=int, default=None, help="threads of --scale runs")
    ap.add_argument("--reps", type=int, default=2, help="alternating runs of --scale")
    args = ap.parse_args()
    if args.scale:
        run_scale(200_000, 256, 64, args.scale_threads or args.threads, args.reps)
        return
    torch.set_num_threads(args.threads)  # the scikit-learn loop and the peak on as many cores
    m, top = (16, 100) if args.quick else (args.partitions, 500)
    cases = {name: CASES[name] for name in args.cases.split(",")}
    if args.smoke:
        m, top, args.ridge, args.ridge_partitions = 4, 20, True, 8
        cases = {"smoke": (lambda: embedding_like(400, 32), 40)}
    size = 512 if args.smoke else 4096
    peak = sgemm_peak(size)
    print(
        f"threads={args.threads} float32, aflite {aflite.__version__}, tol={args.tol:g}; "
        f"sgemm peak {peak / 1e9:.0f} GFLOP/s ({size}^3)",
        flush=True,
    )
    for name, (make, t_spec) in cases.items():
        if args.quick:
            full_make = make
            make = lambda full_make=full_make: _shrink(full_make)  # noqa: E731
            t_spec = t_spec if isinstance(t_spec, float) else max(20, t_spec // 4)
        run_case(
            name,
            make,
            t_spec,
            m,
            top,
            args.tol,
            args.threads,
            peak,
            ridge_m=args.ridge_partitions if args.ridge else 0,
            skip_loose=args.skip_loose,
            ridge_only=args.ridge_only,
        )
    if args.smoke:  # and the whole runs of --scale, small
        run_scale(4000, 32, 8, args.threads, 1)


def run_scale(n: int, d: int, m: int, threads: int, reps: int) -> None:
    """Whole filter runs of both families on the same rows, alternating, and their ratio."""
    x, y = embedding_like(n, d)
    print(f"scale: N={n:,} d={d} classes=3 m={m}, PRESETS['practical'], threads={threads}")
    opts = aflite.PRESETS["practical"]
    times: dict[str, list[float]] = {"ridge": [], "linear": []}
    kept = {}
    for _ in range(reps):
        for family in times:
            start = time.perf_counter()
            res = aflite.filter(x, y, options=opts, model=family, n_partitions=m, seed=0,
                                progress=False, threads=threads)  # fmt: skip
            times[family].append(time.perf_counter() - start)
            kept[family] = (len(res.kept), len(res.history))
    med = {f: float(np.median(t)) for f, t in times.items()}
    for family, t in times.items():
        print(f"  {family:6s}: median {med[family]:.2f} s of {', '.join(f'{v:.2f}' for v in t)}; "
              f"kept {kept[family][0]:,} in {kept[family][1]} phases", flush=True)  # fmt: skip
    print(f"  the exact family {med['linear'] / med['ridge']:.2f}x logistic regression", flush=True)


def _shrink(make):
    x, y = make()
    n = len(y) // 4
    return x[:n], y[:n]


if __name__ == "__main__":
    main()
