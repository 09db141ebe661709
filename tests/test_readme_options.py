"""The documentation offers only what the product accepts: every documented feature spec parses,
every ``aflite ...`` command line in its code blocks parses (flags, types, choices), the
``filter`` lines pass the job's option checks, and every ``--flag`` it names exists (the README
and the pages under docs/)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

import aflite.jobs
from aflite.cli.main import app
from aflite.features.build import parse_feature_spec
from aflite.features.registry import FEATURE_KINDS

# option parsing runs beside files under the names the examples use
pytestmark = pytest.mark.usefixtures("placeholder_inputs")


README = Path(__file__).resolve().parents[1] / "README.md"
# the README and every page of the documentation
TEXT = "\n\n".join(
    p.read_text(encoding="utf-8") for p in [README, *sorted((README.parent / "docs").glob("*.md"))]
)
ROOT = typer.main.get_command(app)


def _command_lines() -> list[str]:
    """Each ``aflite ...`` line of the bash blocks, continuation lines joined."""
    lines = []
    for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", TEXT, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        lines += [
            line.strip() for line in joined.splitlines() if line.strip().startswith("aflite ")
        ]
    return lines


def _resolve(argv: list[str]):
    """(the command, its path, its arguments) of ``aflite ARGS``."""
    cmd, path = ROOT, []
    while hasattr(cmd, "commands") and argv and argv[0] in cmd.commands:
        path.append(argv[0])
        cmd, argv = cmd.commands[argv[0]], argv[1:]
    return cmd, path, argv


def _flags(cmd) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}


def _all_flags() -> set[str]:
    found = {"--version", "--help"}
    todo = [ROOT]
    while todo:
        cmd = todo.pop()
        found |= _flags(cmd)
        if hasattr(cmd, "commands"):
            todo += list(cmd.commands.values())
    return found


COMMANDS = _command_lines()


def test_the_readme_shows_commands():
    assert len(COMMANDS) >= 15
    assert any(c.startswith("aflite filter ") for c in COMMANDS)


@pytest.mark.parametrize("line", COMMANDS)
def test_each_documented_command_line_parses(line, monkeypatch, tmp_path):
    argv = shlex.split(line.replace(" ... ", " data.jsonl "), comments=True)[1:]
    if argv == ["--version"]:
        return
    cmd, path, args = _resolve(argv)
    assert path, f"no such command: {line}"
    unknown = [
        a.split("=")[0] for a in args if a.startswith("--") and a.split("=")[0] not in _flags(cmd)
    ]
    assert not unknown, f"{line}: {unknown} not options of aflite {' '.join(path)}"
    ctx = cmd.make_context(" ".join(["aflite", *path]), list(args))  # types and choices
    if "features" in ctx.params and ctx.params["features"] is not None:
        parse_feature_spec(ctx.params["features"])
    if path == ["filter"]:
        # every option that needs no data is checked when the job's config is made
        seen = []

        def check_only(job, **_):
            seen.append(job)
            raise SystemExit(0)

        monkeypatch.setattr(aflite.jobs, "run_filter_job", check_only)
        with pytest.raises(SystemExit):
            cmd.invoke(ctx)
        assert len(seen) == 1


def _feature_table_specs() -> list[str]:
    table = TEXT.split("| spec | what |", 1)[1].split("\n\n", 1)[0]
    specs = []
    for code in re.findall(r"`([^`]+)`", table):
        kind = code.split(":", 1)[0]
        # NAME_OR_PATH, FILE[#KEY]: placeholders, not specs to run
        if kind in FEATURE_KINDS and not re.search(r"[A-Z]{3,}", code):
            specs.append(code)
    return specs


def test_the_feature_table_lists_specs():
    specs = _feature_table_specs()
    assert "ngrams" in specs and len([s for s in specs if s.startswith("ngrams:")]) >= 2


@pytest.mark.parametrize("spec", _feature_table_specs())
def test_each_documented_feature_spec_is_accepted(spec):
    parse_feature_spec(spec)


def test_every_flag_the_readme_names_exists():
    # flags in the prose (`--min-bias 0.02`) and in inline aflite commands; the benchmark
    # scripts' and pip's flags are theirs
    spans = [s for s in re.findall(r"`([^`\n]+)`", TEXT) if s.startswith(("--", "aflite "))]
    named = {f for s in spans for f in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", s)}
    assert len(named) >= 20
    scripts = {
        f
        for script in (README.parent / "benchmarks").glob("*.py")
        for f in re.findall(r"[\"'](--[a-z][a-z0-9-]*)[\"']", script.read_text(encoding="utf-8"))
    }
    missing = sorted(named - _all_flags() - scripts)
    assert not missing, missing
