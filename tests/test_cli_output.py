"""What the command line writes where: results on stdout; progress bars, notes and warnings on
stderr; files a pipe or grep can read."""

from __future__ import annotations

import json
import random

import pytest
from conftest import run_in_process

SMALL_RUN = ("--train-size", "40", "--slice-size", "10", "--n-partitions", "4", "--min-bias", "off",
             "--target-size", "80", "--no-report")  # fmt: skip


def _rows(n=120, seed=0):
    rng = random.Random(seed)
    words = "cat dog sat ran the a big small red blue".split()
    rows = []
    for i in range(n):
        label = ("yes", "no")[i % 2]
        text = " ".join(rng.choice(words) for _ in range(5)) + (" nobody" * (i % 4 == 1))
        rows.append({"id": f"r{i}", "text": text, "label": label})
    return rows


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    return path


def test_a_redirected_stdout_holds_the_result_alone(small, tmp_path):
    out = tmp_path / "out"
    # no --quiet: the bar is drawn, on stderr
    r = run_in_process("filter", str(small), *SMALL_RUN, "--out-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("kept 80 of 120 rows, removed 40")
    assert r.stdout.splitlines()[-1].startswith(f"outputs in {out}/: kept.jsonl")
    assert "filtering" not in r.stdout and "picked" not in r.stdout
    assert "filtering" in r.stderr and "40/40" in r.stderr
    assert "picked text field text (the only text column)" in r.stderr


def test_a_blank_label_is_empty_in_every_format(tmp_path):
    import aflite
    from aflite.errors import DataError

    csv = tmp_path / "in.csv"
    csv.write_text("text,label\na b,x\nc d,\ne f,y\n")
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(
        '{"text": "a b", "label": "x"}\n{"text": "c d", "label": ""}\n{"text": "e f", "label": "y"}\n'
    )
    for path, at in ((csv, f"{csv}:3"), (jsonl, f"{jsonl}:2")):
        expected = f"{at}: field 'label' is empty"
        r = run_in_process("filter", str(path), "--out-dir", str(tmp_path / "out"), "--quiet")
        assert (r.returncode, r.stderr) == (2, f"aflite: error: {expected}\n")
        with pytest.raises(DataError) as e:
            aflite.filter_dataset(str(path), label="label")
        assert str(e.value) == expected


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_csv_rows_are_written_with_the_inputs_line_ending(tmp_path, ending):
    path = tmp_path / "in.csv"
    lines = ["id,text,label"] + [f"{r['id']},{r['text']},{r['label']}" for r in _rows()]
    path.write_bytes(ending.join(lines + [""]).encode())
    out = tmp_path / "out"
    r = run_in_process("filter", str(path), *SMALL_RUN, "--out-dir", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    for name in ("kept.csv", "removed.csv"):
        data = (out / name).read_bytes().decode()
        assert data.count(ending) > 40 and data.endswith(ending)
        assert "\r" not in data.replace(ending, "") and "\n" not in data.replace(ending, "")


def test_audit_sentences_stay_on_one_line_in_a_file(small, tmp_path):
    doc = tmp_path / "audits.json"
    r = run_in_process("audit", str(small), "--text-fields", "text", "--audits", "pmi",
                       "--quiet", "--json", str(doc))  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(doc.read_text())["audits"][0]["summary"]
    assert len(summary) > 100  # longer than the 80 columns a file used to be wrapped at
    assert summary in r.stdout.splitlines()


def test_the_readme_names_the_columns_each_row_file_carries(tmp_path):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    outputs = " ".join(readme[readme.index("Outputs in `--out-dir`:") :].split()[:60])
    assert "`kept.*` and `warmup.*` (the input's rows, untouched" in outputs
    assert "`removed.*` (the input's rows plus `aflite_score`" in outputs
    assert "and `aflite_phase`" in outputs
    path = tmp_path / "in.csv"
    path.write_text("id,text,label\n" + "".join(f"{r['id']},{r['text']},{r['label']}\n"
                                                for r in _rows()))  # fmt: skip
    out = tmp_path / "out"
    r = run_in_process("filter", str(path), *SMALL_RUN, "--out-dir", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert (out / "kept.csv").read_text().splitlines()[0] == "id,text,label"
    assert (out / "removed.csv").read_text().splitlines()[0] == (
        "id,text,label,aflite_score,aflite_phase"
    )


def test_off_a_terminal_progress_is_a_line_a_phase_and_audits_are_summed_up(small, tmp_path):
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(small), *SMALL_RUN, "--audits", "pmi,partial", "--out-dir", str(out)
    )
    assert r.returncode == 0, r.stderr
    phases = [line for line in r.stderr.splitlines() if line.startswith("filtering: phase ")]
    assert phases and phases[0].startswith("filtering: phase 0: 120 rows, bias ")
    assert any(line.startswith("filtering: done  size ") for line in r.stderr.splitlines())
    audits = [line for line in r.stdout.splitlines() if line.startswith("audit (")]
    assert [a.split(")")[0] for a in audits] == ["audit (before"] * 2 + ["audit (kept"] * 2
    assert " accuracy " in audits[1] and "vs majority class" in audits[1]


def test_the_picked_fields_note_names_only_the_options_of_what_was_picked(small, tmp_path):
    r = run_in_process(
        "filter",
        str(small),
        *SMALL_RUN,
        "--text-fields",
        "text",
        "--out-dir",
        str(tmp_path / "a"),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    assert "picked id field id (a column named id); name others with --id-field\n" in r.stderr


def test_progress_off_a_terminal_is_a_line_at_a_steady_interval_and_one_at_the_end(capsys):
    from aflite._internal import progress

    with progress.progress_bar("embedding") as update:
        for done in range(0, 1001, 100):
            update(done, 1000)  # far faster than the interval: the first and the last only
    assert capsys.readouterr().err == "embedding: 0/1000 (0%)\nembedding: 1000/1000 (100%)\n"
