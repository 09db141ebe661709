"""The documentation runs as written: every page's Python blocks run top to bottom, the README's
demo block is what ``aflite demo`` prints, every link between pages lands on a page and heading
that exist, and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc gives a heading (what GitHub gives, for these)."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return re.sub(r"[ ]+", "-", s)


def test_the_pages_have_python_examples():
    assert len(_python_blocks(README)) >= 1
    assert sum(len(_python_blocks(p)) for p in PAGES) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if _python_blocks(p)], ids=lambda p: p.name)
def test_each_pages_python_blocks_run_in_order(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(_python_blocks(page)):
        try:
            exec(compile(block, f"{page.name} python block {i + 1}", "exec"), namespace)
        except Exception as e:  # name the block, not just the line inside it
            raise AssertionError(
                f"{page.name} python block {i + 1} fails: {type(e).__name__}: {e}"
            ) from e


def test_links_between_pages_land_on_a_page_and_a_heading():
    broken = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
                continue
            if anchor and dest.suffix == ".md":
                heads = re.findall(r"^#{1,6} (.*)$", dest.read_text(encoding="utf-8"), flags=re.M)
                if anchor not in {_slug(h) for h in heads}:
                    broken.append(f"{page.name}: {target}")
    assert not broken, broken


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200 and max(map(len, lines)) <= 400


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "index.html").exists()


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


def test_every_entry_of_the_output_folder_is_listed_or_said_in_the_readme(tmp_path):
    """The demo's printed line lists the files to open; anything else in the folder is said
    in the README's line beside it, and in the command line's page."""
    from conftest import run_in_process

    from aflite.data import bundled_snli

    src = tmp_path / "in.jsonl"
    src.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:300]))
    out = tmp_path / "out"
    r = run_in_process("filter", str(src), "--text-fields", "hypothesis", "--n-partitions", "8",
                       "--out-dir", str(out), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    listed = next(line for line in r.stdout.splitlines() if line.startswith("outputs in "))
    printed = set(listed.split(": ", 1)[1].split(", "))
    others = sorted(set(os.listdir(out)) - printed)
    assert others == ["result"]
    readme = README.read_text()
    after_demo = readme[readme.index("outputs in aflite-demo/") :].split("\n\n")[1]
    cli_page = (ROOT / "docs" / "cli.md").read_text()
    for name in others:
        assert f"`{name}/`" in after_demo and "aflite report" in after_demo, after_demo
        assert f"`{name}/` (the `FilterResult`" in cli_page
