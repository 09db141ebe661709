"""Every mistake in the data or the options is one line, exit code 2, in well under a second:
the data is read and checked, and every option too, before anything imports torch, SciPy or
scikit-learn (seconds on their own). Each case runs the command line as a new process, as a
user does, and times it: its CPU time, which a busy machine does not stretch, and its wall
time, with a margin for one that is."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aflite.data import bundled_snli

HEAVY = ("torch", "scipy", "sklearn")
# the process's own CPU time: about 0.45 s here, 2 s when torch loads first; a loaded machine
# stretches the wall time, not this
CPU_BUDGET_S = 1.0
# its wall time, under a second on an idle 2-core machine; the margin is for the suite's other
# processes and anyone else's
WALL_BUDGET_S = 2.5


def _rows(n: int = 60) -> list[dict]:
    labels = ("entailment", "neutral", "contradiction")
    return [{"id": i, "hypothesis": f"w{i % 5} x{i % 7}", "label": labels[i % 3]}
            for i in range(n)]  # fmt: skip


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _inputs(tmp: Path) -> dict[str, str]:
    dash = _rows()
    dash[5]["label"] = "-"
    no_label = [{k: v for k, v in r.items() if k != "label"} for r in _rows()]
    (tmp / "empty.jsonl").write_text("")
    (tmp / "ragged.csv").write_text("hypothesis,label\na b,neutral\na,b,c\n")
    (tmp / "latin1.jsonl").write_bytes('{"hypothesis": "café", "label": "x"}\n'.encode("latin-1"))
    return {
        "empty": str(tmp / "empty.jsonl"),
        "ragged": str(tmp / "ragged.csv"),
        "latin1": str(tmp / "latin1.jsonl"),
        "dash": _jsonl(tmp / "dash.jsonl", dash),
        "nolabel": _jsonl(tmp / "nolabel.jsonl", no_label),
        "good": _jsonl(tmp / "good.jsonl", _rows()),
    }


# (name, command line with {input} names and {out}, what the error says)
CASES = [
    ("empty file", ["filter", "{empty}"], ": no rows"),
    ("ragged CSV", ["filter", "{ragged}"], ":3: more values than header fields"),
    ("not UTF-8", ["filter", "{latin1}"], ": not UTF-8 text"),
    ("placeholder label", ["filter", "{dash}"], "'-' (a placeholder"),
    ("missing label field", ["filter", "{nolabel}"], "field 'label' is missing"),
    ("wrong text field", ["filter", "{good}", "--text-fields", "hypothesys"], "did you mean"),
    ("a size the rows cannot take", ["filter", "{good}", "--target-size", "100"],
     "--target-size: 100 is not smaller than the 60 rows"),
    ("a label to drop that is not there", ["filter", "{good}", "--drop-labels", "neutrl"],
     "did you mean 'neutral'"),
    ("a bad option", ["filter", "{good}", "--threshold", "75"], "--threshold: must be in"),
    ("score: placeholder label", ["score", "{dash}"], "'-' (a placeholder"),
    ("audit: placeholder label", ["audit", "{dash}", "--text-fields", "hypothesis"],
     "'-' (a placeholder"),
    ("audit: a t the rows cannot take",
     ["audit", "{good}", "--text-fields", "hypothesis", "--bias-train-size", "100"],
     "--bias-train-size 100 is 100 rows"),
]  # fmt: skip


def _run(args: list[str], **env: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """``python -X importtime -m aflite ARGS``: its wall time, its CPU time and what it
    printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "aflite", *args],
                       capture_output=True, text=True, timeout=120,
                       env=os.environ | env)  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, r


def _fast_error(args: list[str], **env: str) -> tuple[str, list[str]]:
    """The one line of error and the heavy modules imported; the best wall and CPU times of
    up to three runs must be within their budgets (one run slowed by the suite's other
    processes is no failure)."""
    wall = cpu = float("inf")
    for _ in range(3):
        took, used, r = _run(args, **env)
        wall, cpu = min(wall, took), min(cpu, used)
        if wall < WALL_BUDGET_S and cpu < CPU_BUDGET_S:
            break
    lines = r.stderr.splitlines()
    imported = [
        line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")
    ]
    said = [line for line in lines if not line.startswith("import time:")]
    assert r.returncode == 2 and r.stdout == "" and len(said) == 1, r.stderr[-2000:]
    assert cpu < CPU_BUDGET_S, f"{' '.join(args)}: {cpu:.2f} s of CPU"
    assert wall < WALL_BUDGET_S, f"{' '.join(args)}: {wall:.2f} s"
    return said[0], [m for m in HEAVY if m in imported]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_mistake_is_one_line_in_under_a_second_before_torch(case, tmp_path):
    _, args, says = case
    names = _inputs(tmp_path)
    out = tmp_path / "out"
    args = [a.format(**names) for a in args]
    if args[0] != "audit":
        args += ["--out-dir", str(out)]
    line, heavy = _fast_error(args)
    assert line.startswith("aflite: error: ") and says in line, line
    assert heavy == [], f"{line}: imported {heavy}"
    assert not out.exists()  # nothing written


def test_cuda_where_there_is_none_is_refused_without_torch(tmp_path):
    from aflite._internal.checks import _may_have_cuda

    if _may_have_cuda():
        pytest.skip("a GPU driver is here: torch answers whether CUDA runs")
    line, heavy = _fast_error(["filter", str(bundled_snli()), "--device", "cuda",
                               "--out-dir", str(tmp_path / "out")])  # fmt: skip
    assert line == (
        "aflite: error: --device: device 'cuda' was requested but CUDA is not available here"
    )
    assert heavy == []


def test_a_bad_thread_count_in_the_environment_is_refused_before_torch(tmp_path):
    line, heavy = _fast_error(["filter", str(bundled_snli()), "--out-dir", str(tmp_path / "o")],
                              AFLITE_THREADS="many")  # fmt: skip
    assert line == "aflite: error: AFLITE_THREADS must be a positive whole number, got 'many'"
    assert heavy == []


def test_the_python_api_reads_the_data_before_torch(tmp_path):
    path = _inputs(tmp_path)["dash"]
    code = (
        "import sys, aflite\n"
        "try:\n"
        f"    aflite.filter_dataset({path!r}, label='label', text='hypothesis')\n"
        "except aflite.errors.DataError as e:\n"
        "    print(type(e).__name__, [m for m in ('torch', 'scipy', 'sklearn') if m in "
        "sys.modules])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout == "DataError []\n", r.stdout + r.stderr
