"""SIGINT and SIGTERM: one line with the resume hint, exit 130 / 143, the checkpoint kept, and
``--resume`` finishing with the kept rows of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

import aflite.cli.main as cli_main
from aflite.cli.main import app
from aflite.cli.signals import Interrupted, install_signal_handlers, restore_signal_handlers
from aflite.data import bundled_snli
from aflite.jobs import FilterJob, run_filter_job

HINT = "aflite: interrupted; run the same command with --resume to continue"

# many short phases (min-bias off, a low threshold, small slices), so a signal lands mid-run
OPTIONS = dict(
    text=["hypothesis"],
    id="id",
    target_size=300,
    train_size=120,
    slice_size=20,
    threshold=0.3,
    min_bias=None,
    n_partitions=12,
    seed=5,
    report=False,
)
ARGS = [
    "--text-fields", "hypothesis", "--id-field", "id", "--target-size", "300",
    "--train-size", "120", "--slice-size", "20", "--threshold", "0.3", "--min-bias", "off",
    "--n-partitions", "12", "--seed", "5", "--no-report", "--quiet",
]  # fmt: skip


@pytest.fixture(scope="module")
def snli_900(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "snli.jsonl"
    path.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:900]))
    return path


@pytest.fixture(scope="module")
def reference_kept(snli_900, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref")
    job = FilterJob(input=str(snli_900), out_dir=str(out), cache_dir=None, **OPTIONS)
    outcome = run_filter_job(job, progress=False, log=lambda s: None)
    assert len(outcome.result.history) >= 10  # long enough to be interrupted
    return [json.loads(line)["id"] for line in (out / "kept.jsonl").read_text().splitlines()]


def _manifest_phase(ckpt):
    try:
        return json.loads((ckpt / "manifest.json").read_text())["phase"]
    except (OSError, ValueError, KeyError):  # not there yet, or caught mid-rename
        return None


@pytest.mark.slow
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_exits_with_hint_and_resume_matches(tmp_path, snli_900, reference_kept, sig, code):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "aflite", "filter", str(snli_900), *ARGS, "--out-dir", str(out)]
    # a shell without job control starts background jobs with SIGINT ignored; undo that
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    ckpt = out / ".checkpoint"
    deadline = time.time() + 120
    # the manifest moves on after a phase's state file is written; wait for it, not the state
    while _manifest_phase(ckpt) is None and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert not (out / "kept.jsonl").exists(), "the run finished before the signal"
    assert proc.returncode == code, stderr
    assert stderr.strip().splitlines() == [HINT]
    manifest = json.loads((ckpt / "manifest.json").read_text())
    assert manifest["phase"] >= 1

    r = CliRunner().invoke(app, ["filter", str(snli_900), *ARGS, "--out-dir", str(out), "--resume"])
    assert r.exit_code == 0, r.output
    assert "resuming from phase" in r.output
    kept = [json.loads(line)["id"] for line in (out / "kept.jsonl").read_text().splitlines()]
    assert kept == reference_kept
    assert not ckpt.exists()


def _main(monkeypatch, capsys, argv: list[str]) -> tuple[int, str]:
    """Run ``main()`` in-process: (exit code, stderr)."""
    monkeypatch.setattr(sys, "argv", ["aflite", *argv])
    with pytest.raises(SystemExit) as exc:
        cli_main.main()
    code = exc.value.code
    return (0 if code is None else code), capsys.readouterr().err


def test_interrupt_in_filter_names_resume(monkeypatch, capsys, tmp_path):
    import aflite.jobs

    def interrupted(*a, **k):
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(aflite.jobs, "run_filter_job", interrupted)
    src = tmp_path / "d.jsonl"
    src.write_text('{"hypothesis": "a", "label": "x"}\n')
    code, err = _main(monkeypatch, capsys, ["filter", str(src), "--text-fields", "hypothesis"])
    assert code == 143
    assert err.strip() == HINT


def test_interrupt_elsewhere_has_no_resume_hint(monkeypatch, capsys, tmp_path):
    import aflite.reports.html

    def interrupted(*a, **k):
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(aflite.reports.html, "write_report", interrupted)
    (tmp_path / "summary.json").write_text("{}")
    code, err = _main(monkeypatch, capsys, ["report", str(tmp_path)])
    assert code == 130
    assert err.strip() == "aflite: interrupted"


def test_keyboard_interrupt_and_exit_codes_are_not_swallowed(monkeypatch, capsys, tmp_path):
    import typer

    import aflite.reports.html

    def ctrl_c(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(aflite.reports.html, "write_report", ctrl_c)
    (tmp_path / "summary.json").write_text("{}")
    code, _ = _main(monkeypatch, capsys, ["report", str(tmp_path)])
    assert code == 130  # typer returns 130 instead of exiting; main() must not exit 0

    def exit_3(*a, **k):
        raise typer.Exit(3)

    monkeypatch.setattr(aflite.reports.html, "write_report", exit_3)
    code, _ = _main(monkeypatch, capsys, ["report", str(tmp_path)])
    assert code == 3


def test_usage_error_exits_2(monkeypatch, capsys):
    code, err = _main(monkeypatch, capsys, ["filter", "--no-such-option"])
    assert code == 2
    assert "--no-such-option" in err


def test_handlers_raise_interrupted_and_respect_ignored_signals():
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        previous = install_signal_handlers()
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # ignored by the parent: kept
        with pytest.raises(Interrupted) as exc:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs at the next bytecode; the sleep is interrupted
        assert exc.value.exit_code == 143 and not exc.value.resumable
        restore_signal_handlers(previous)
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


def test_main_puts_the_callers_handlers_back(monkeypatch, capsys):
    before = signal.getsignal(signal.SIGINT)
    _main(monkeypatch, capsys, ["filter", "--no-such-option"])
    assert signal.getsignal(signal.SIGINT) is before
