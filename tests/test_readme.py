"""The README's Python section runs top to bottom as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_python_examples():
    assert len(_python_blocks()) >= 2


@pytest.mark.slow
def test_the_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for i, block in enumerate(_python_blocks()):
        try:
            exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)
        except Exception as e:  # name the block, not just the line inside it
            raise AssertionError(
                f"README python block {i + 1} fails: {type(e).__name__}: {e}"
            ) from e
    assert (tmp_path / "run").is_dir()


@pytest.mark.slow
def test_the_demo_prints_what_the_readme_shows(tmp_path, monkeypatch):
    """The README's demo block is what ``aflite demo`` prints on this machine: the same seed
    keeps the same rows on every machine, so its counts, figures and the kept set's
    fingerprint hold wherever the suite runs."""
    from conftest import run_in_process

    text = README.read_text()
    block = re.search(r"```\n(kept \d+ of 6000 rows.*?)```", text, flags=re.S).group(1)
    shown = [line for line in block.splitlines() if line.strip()]
    monkeypatch.chdir(tmp_path)
    r = run_in_process("demo", "--quiet")
    assert r.returncode == 0, r.stderr
    printed = r.stdout.splitlines()
    assert [line for line in printed if line in shown] == shown, "\n".join(printed)
