from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

# Under pytest-xdist each worker gets its share of the cores: without this every worker's
# BLAS and torch would start one thread per core and the workers would fight over them.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _THREADS = str(max(1, len(os.sched_getaffinity(0)) // _WORKERS))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "AFLITE_THREADS"):
        os.environ.setdefault(_var, _THREADS)

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def planted_data(n=1200, d=12, n_classes=3, share=0.3, seed=0):
    """Noise features plus one indicator column per class that reveals the label for a known
    ``share`` of rows: the kind of artifact a give-away token creates."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    x = rng.normal(size=(n, d)).astype(np.float32)
    planted = rng.random(n) < share
    x[:, :n_classes] = 0.0
    x[planted, y[planted]] = 1.0
    return x, y, planted


@pytest.fixture
def planted():
    return planted_data()


def run_in_process(*args: str) -> subprocess.CompletedProcess:
    """``aflite ARGS`` through the entry point ``main()`` in this process: the exit code,
    stdout and stderr a subprocess would give, without an interpreter's start-up (seconds
    here). The environment is restored afterwards (``--quiet`` sets variables)."""
    from aflite.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_argv = dict(os.environ), sys.argv
    code = 0
    try:
        sys.argv = ["aflite", *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else int(e.code is not None)
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["aflite", *args], code, out.getvalue(), err.getvalue())


def cli(*args: object) -> tuple[int, str, str]:
    """``aflite ARGS`` in this process: (exit code, stdout, stderr)."""
    r = run_in_process(*map(str, args))
    return r.returncode, r.stdout, r.stderr


# the inputs documentation-style command lines name: a local INPUT that is not there fails
# before the options are checked to the end, so tests of option parsing run beside these
PLACEHOLDER_INPUTS = ("data.jsonl", "x.jsonl", "in.jsonl", "snli.jsonl", "train.csv", "train.jsonl",
                      "data.parquet", "copa.jsonl", "hellaswag.jsonl", "winogrande.jsonl")  # fmt: skip
PLACEHOLDER_FOLDERS = ("photos", "snli_dd")


@pytest.fixture
def placeholder_inputs(tmp_path, monkeypatch):
    """Run in a folder holding empty files under the names command-line examples use."""
    for name in PLACEHOLDER_INPUTS:
        (tmp_path / name).touch()
    for name in PLACEHOLDER_FOLDERS:
        (tmp_path / name).mkdir()
    (tmp_path / "src").symlink_to(Path(__file__).resolve().parents[1] / "src")  # the repo's data
    monkeypatch.chdir(tmp_path)
    return tmp_path
