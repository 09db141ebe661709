"""Every script under benchmarks/ runs: each with ``--smoke`` (tiny sizes, the script's own code
path end to end, no data from outside the repository, no GPU needed) exits 0 and prints its
usual lines. A new benchmark cannot be added without a smoke run: the listing test fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

# each script, and what its smoke run must print (on any machine: with or without CUDA,
# Chromium or the data under ../shared)
EXPECTED = {
    "bench_bf16.py": [
        "block pass products float32",
        "mean iterations to 1e-2",
        "held-out predictions changed by a bfloat16 prediction pass",
    ],
    "bench_busy.py": ["busy: pinned to core", "the pinned time"],
    "bench_choice.py": ["aflite   :", "torch    :", "held-out hits that differ"],
    "bench_defaults.py": ["SNLI hypothesis-only: kept", "naive Bayes, char 2-4-gram counts"],
    "bench_families.py": ["logistic seed 0 vs 1: r 0.", "ridge alpha=1: vs logistic"],
    "bench_fidelity.py": [
        "| Phi | evaluator | trained on | size | held-out |",
        "| hypothesis n-grams | logreg | D(Phi) (AFLITE) |",
        "skipped the minilm, minilm-ft arm(s)",
    ],
    "bench_gpu_profile.py": ["N=2,000 d=16", "two phases", "Self CPU time total"],
    "bench_memory.py": ["mmap :", "x features"],
    "bench_ngram_memory.py": ["dense matrix", "peak above the rows already read"],
    "bench_outcome.py": ["planted        ridge", "planted        linear", "probe columns"],
    "bench_phase.py": [
        "aflite blocks",
        "aflite uniform",
        "useful-work floor",
        "held-out counts equal",
        "the exact family",
    ],
    "bench_pmi.py": ["counting:", "top unigrams of 'woman'", "targets:"],
    # both families keep one process's set on the local cluster; the arithmetic for 10^9 rows
    "bench_ray.py": [
        "linear: kept set fingerprint",
        "ridge: kept set fingerprint",
        "in one process (the same)",
        "driver peak memory above its start",
        "10^9 rows: 4.10 TB of features",
        "the sums dominate beyond",
    ],
    "bench_preconditioner.py": ["exact: mean", "low-rank: mean", "scores r 0.9"],
    "bench_report_rows.py": ["300 rows: report.html"],
    "bench_scorers.py": ["synthetic embedding-like features", "Spearman correlation"],
    "bench_snli_scale.py": ["N=4,000 d=64", "phases: 10; kept 2,000", "total:"],
    # the same seed keeps the same rows whatever their order and the thread count
    "bench_stability.py": ["seed-to-seed Jaccard", "(identical)"],
    "gpu_checks.sh": ["=== two phases profiled", "=== N=2,000,000", "=== done"],
}


def _scripts() -> list[str]:
    """The scripts, the longest smoke runs first (so that two workers end together)."""
    names = [p.name for p in BENCH.iterdir() if p.suffix in (".py", ".sh")]
    longest = ["gpu_checks.sh", "bench_busy.py"]
    return sorted((n for n in names if not n.startswith("_")), key=lambda n: (n not in longest, n))


def test_every_benchmark_has_a_smoke_run():
    scripts = _scripts()
    missing = sorted(set(scripts) - set(EXPECTED))
    assert not missing, f"add a --smoke run of {missing} and its expected lines to EXPECTED"
    assert not set(EXPECTED) - set(scripts), "EXPECTED names a script that is gone"
    for name in scripts:
        assert "--smoke" in (BENCH / name).read_text(), f"{name} takes no --smoke"


@pytest.mark.slow
@pytest.mark.parametrize("name", _scripts())
def test_smoke_run(name):
    path = BENCH / name
    cmd = ["bash", str(path)] if name.endswith(".sh") else [sys.executable, str(path)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(BENCH), *filter(None, [env.get("PYTHONPATH")])]
    )
    # the shell script's python3 is this interpreter; no run may reach the network
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HF_HUB_OFFLINE"] = "1"
    run = subprocess.run(
        [*cmd, "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, f"{name} --smoke exited {run.returncode}:\n{out[-4000:]}"
    assert "Traceback" not in out, out[-4000:]
    for line in EXPECTED[name]:
        assert line in run.stdout, f"{name} --smoke did not print {line!r}:\n{out[-4000:]}"
    if name == "gpu_checks.sh":
        # the four steps of bench_snli_scale.py ran: both families, the paper's schedule, N x 2
        assert run.stdout.count("kept set fingerprint") >= 4, out[-4000:]
