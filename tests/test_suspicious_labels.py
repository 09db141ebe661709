"""Labels that look like mistakes are caught before any work: a placeholder (SNLI's "-"), a
number among text labels, a continuous target; --drop-labels / drop_labels= sets their rows
aside into the removed rows; a class of a few rows beside large ones is named in a note."""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import run_in_process

import aflite
import aflite.algorithm.loop.inputs
from aflite.data import bundled_snli
from aflite.errors import DataError, LabelWarning
from aflite.io import read_labelled

pd = pytest.importorskip("pandas")

OPTS = ["--text-fields", "hypothesis", "--target-size", "400", "--n-partitions", "16",
        "--quiet", "--no-report"]  # fmt: skip


@pytest.fixture(scope="module")
def snli_rows():
    return [json.loads(r) for r in bundled_snli().read_text().splitlines()[:600]]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_placeholder_label_is_an_error_naming_the_line_and_the_option(snli_rows, tmp_path):
    rows = [dict(r) for r in snli_rows]
    rows[7]["label"] = "-"
    src = _write(tmp_path / "in.jsonl", rows)
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "out"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr == (
        f"aflite: error: {src}:8: field 'label' has a class that looks like a mistake: '-' (a "
        "placeholder, 1 row: line 8); fix it, or drop its rows with --drop-labels - "
        "(drop_labels=['-'])\n"
    )
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_number_among_text_labels_names_its_rows(snli_rows, tmp_path):
    rows = [dict(r) for r in snli_rows]
    for i in (10, 20, 30, 40):
        rows[i]["label"] = 1
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(rows, label="label", text="hypothesis")
    assert str(e.value) == (
        "data: row 11: field 'label' has a class that looks like a mistake: '1' (a number among "
        "text labels, 4 rows: row 11, row 21, row 31 and 1 more); fix it, or drop its rows with "
        "drop_labels=['1']"
    )
    # a DataFrame call names the keyword alone too: Python has no flags
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(pd.DataFrame(rows), label="label", text="hypothesis")
    assert str(e.value).endswith("drop its rows with drop_labels=['1']")
    assert "--" not in str(e.value)


def test_a_number_among_text_labels_in_a_csv_is_named_with_a_value_that_drops_it(tmp_path):
    # a CSV keeps every value as text: "1" beside "entailment" is told apart by reading as a
    # number, not by its type
    labels = ["entailment", "neutral", "contradiction"]
    src = tmp_path / "in.csv"
    src.write_text("id,hypothesis,label\n" + "".join(
        f"{i},word{i % 5} other{i % 7},{'1' if i in (7, 9) else labels[i % 3]}\n"
        for i in range(300)))  # fmt: skip
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "out"))
    assert (r.returncode, r.stderr) == (2, (
        f"aflite: error: {src}:9: field 'label' has a class that looks like a mistake: '1' (a "
        "number among text labels, 2 rows: line 9, line 11); fix it, or drop its rows with "
        "--drop-labels 1 (drop_labels=['1'])\n"))  # fmt: skip
    assert not (tmp_path / "out").exists()
    r = run_in_process("filter", str(src), *OPTS[:2], "--target-size", "0.8", "--n-partitions",
                       "8", "--no-report", "--out-dir", str(tmp_path / "out"),
                       "--drop-labels", "1")  # fmt: skip
    assert r.returncode == 0 and "few rows" not in r.stderr, r.stderr


def test_minus_one_among_class_numbers_is_the_no_gold_placeholder(snli_rows, tmp_path):
    codes = {"entailment": 0, "neutral": 1, "contradiction": 2}
    rows = [dict(r, label=codes[r["label"]]) for r in snli_rows]
    rows[7]["label"] = -1  # Hugging Face's SNLI: -1 where the annotators did not agree
    src = _write(tmp_path / "in.jsonl", rows)
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "out"))
    assert (r.returncode, r.stderr) == (2, (
        f"aflite: error: {src}:8: field 'label' has a class that looks like a mistake: '-1' (a "
        "placeholder: Hugging Face's 'no gold label', 1 row: line 8); fix it, or drop its rows "
        "with --drop-labels -1 (drop_labels=['-1'])\n"))  # fmt: skip
    # the advice, followed, runs
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "out"),
                       "--drop-labels", "-1")  # fmt: skip
    assert r.returncode == 0 and "few rows" not in r.stderr, r.stderr
    with pytest.raises(DataError, match=r"^DataFrame: row 7: .*'-1' \(a placeholder: Hugging "
                       r"Face's 'no gold label', 1 row: row 7\); fix it, or drop its rows with "
                       r"drop_labels=\['-1'\]$"):  # fmt: skip
        aflite.filter_dataset(pd.DataFrame(rows), label="label", text="hypothesis")
    # -1 / 0 / 1 with -1 a class of its own (sentiment) is no placeholder
    sentiment = [dict(r, label=i % 3 - 1) for i, r in enumerate(snli_rows)]
    assert set(read_labelled(sentiment, label="label", text="hypothesis").labels) == {
        "-1", "0", "1"}  # fmt: skip


@pytest.mark.parametrize("value", ["0.25", 0.25])
def test_a_continuous_target_is_named_as_such(value, tmp_path):
    rows = [{"t": f"w{i}", "y": value if i == 3 else str(i % 2) if isinstance(value, str) else i % 2}
            for i in range(20)]  # fmt: skip
    with pytest.raises(DataError, match=r"row 4: field 'y' holds a continuous number \(0.25\)"):
        read_labelled(rows, label="y")
    # whole numbers are classes, as before
    assert read_labelled([{"t": "a", "y": 0}, {"t": "b", "y": 1}], label="y").labels.tolist() == [
        "0", "1"]  # fmt: skip


def test_dropped_labels_go_to_the_removed_rows_through_cli_and_api(snli_rows, tmp_path):
    rows = [dict(r) for r in snli_rows]
    rows[7]["label"] = "-"
    for i in (10, 20, 30):
        rows[i]["label"] = 1
    src = _write(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out"
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(out), "--drop-labels", "-,1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].endswith(" and 4 by --drop-labels")
    kept = [json.loads(x)["id"] for x in (out / "kept.jsonl").read_text().splitlines()]
    removed = [json.loads(x) for x in (out / "removed.jsonl").read_text().splitlines()]
    assert sorted(kept + [x["id"] for x in removed]) == sorted(x["id"] for x in rows)
    dropped = {x["id"] for x in removed if x["aflite_phase"] == -1}
    assert dropped == {rows[i]["id"] for i in (7, 10, 20, 30)}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["review"]["drop_labels"] == ["-", "1"] and summary["review"]["dropped"] == 4

    api = aflite.filter_dataset(rows, label="label", text="hypothesis", id="id",
                                target_size=400, n_partitions=16, drop_labels=["-", "1"])  # fmt: skip
    assert sorted(api.kept["id"] if hasattr(api.kept, "columns") else
                  [x["id"] for x in api.kept]) == sorted(kept)  # fmt: skip
    assert set(api.scores.loc[api.scores["review"] == "drop", "id"]) == dropped


def test_unknown_dropped_label_and_items_are_refused(snli_rows, tmp_path):
    src = _write(tmp_path / "in.jsonl", snli_rows)
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "o"),
                       "--drop-labels", "neutrl")  # fmt: skip
    assert r.returncode == 2 and r.stderr == (
        f"aflite: error: --drop-labels: no row of {src} is labelled 'neutrl' (field 'label' "
        "holds contradiction, entailment, neutral); did you mean 'neutral'?\n"
    )
    items = [{"q": f"q{i}", "c": ["a", "b"], "answer": i % 2} for i in range(10)]
    with pytest.raises(DataError, match="--drop-labels: applies to class labels"):
        read_labelled(items, label="answer", choices="c", context="q", drop_labels=["1"])


def test_a_tiny_class_is_named_in_a_note_until_dropped(snli_rows, tmp_path):
    rows = [dict(r) for r in snli_rows]
    rows[5]["label"] = rows[6]["label"] = "contradicton"
    src = _write(tmp_path / "in.jsonl", rows)
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    assert (
        f"aflite: note: {src}: field 'label' has classes of a few rows beside large ones: "
        "'contradicton' (2 rows, did you mean 'contradiction'?); if they are mistakes, drop them "
        "with --drop-labels contradicton (drop_labels=['contradicton'])\n"
    ) in r.stderr
    with pytest.warns(LabelWarning) as got:
        aflite.filter_dataset(rows, label="label", text="hypothesis", target_size=400,
                              n_partitions=16)  # fmt: skip
    note = next(str(w.message) for w in got if issubclass(w.category, LabelWarning))
    assert note.endswith(
        "'contradicton' (2 rows, did you mean 'contradiction'?); if they are mistakes, drop them "
        "with drop_labels=['contradicton']"
    )
    r = run_in_process("filter", str(src), *OPTS, "--out-dir", str(tmp_path / "b"),
                       "--drop-labels", "contradicton")  # fmt: skip
    assert r.returncode == 0 and "few rows" not in r.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelWarning)
        aflite.filter_dataset(snli_rows, label="label", text="hypothesis", target_size=400,
                              n_partitions=16)  # fmt: skip


def test_audits_leave_dropped_labels_out_and_scores_say_how_to_fix(snli_rows, tmp_path):
    rows = [dict(r) for r in snli_rows]
    rows[7]["label"] = "-"
    src = _write(tmp_path / "in.jsonl", rows)
    clean = _write(tmp_path / "clean.jsonl", [r for i, r in enumerate(rows) if i != 7])
    r = run_in_process("audit", str(src), "--text-fields", "hypothesis", "--audits", "pmi")
    assert r.returncode == 2 and "--drop-labels - (drop_labels=['-'])" in r.stderr
    r = run_in_process("audit", str(src), "--text-fields", "hypothesis", "--audits", "pmi",
                       "--drop-labels", "-", "--compare", str(clean))  # fmt: skip
    want = run_in_process("audit", str(clean), "--text-fields", "hypothesis", "--audits", "pmi",
                          "--compare", str(clean))  # fmt: skip
    assert r.returncode == 0 and r.stdout == want.stdout  # the dropped row left out
    with pytest.raises(DataError, match=r"drop its rows with drop_labels=\['-'\]$"):
        aflite.audit(rows, label="label", text="hypothesis", audits="pmi")
    api = aflite.audit(rows, label="label", text="hypothesis", audits="pmi", drop_labels="-")
    assert api[0].summary == aflite.audit(rows[:7] + rows[8:], label="label", text="hypothesis",
                                          audits="pmi")[0].summary  # fmt: skip
    r = run_in_process("score", str(src), "--text-fields", "hypothesis",
                       "--out-dir", str(tmp_path / "s"))  # fmt: skip
    assert r.returncode == 2 and r.stderr.endswith(
        "fix it in the data, or set it aside with aflite filter --drop-labels -\n"
    )


def test_a_long_group_value_costs_its_own_length_not_every_rows(tmp_path):
    import tracemalloc

    rows = [{"id": i, "t": f"w{i % 7}", "g": f"p{i // 4}", "y": i % 2} for i in range(200)]
    rows[3]["g"] = "x" * 1_000_000
    tracemalloc.start()
    data = read_labelled(rows, label="y", text="t", group="g")
    aflite.algorithm.loop.inputs.encode_groups(list(data.groups), len(rows))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # fixed-width text: 200 rows x 1,000,000 characters x 4 bytes = 800 MB
    assert peak < 50_000_000 and len(data.groups[3]) == 1_000_000


def test_every_suspicious_class_is_named_at_once_with_one_value_to_drop_them(snli_rows):
    rows = [dict(r) for r in snli_rows]
    rows[7]["label"], rows[9]["label"], rows[12]["label"] = "-", "n/a", " "
    for i in (10, 20):
        rows[i]["label"] = 1
    with pytest.raises(DataError) as e:
        read_labelled(rows, label="label", text="hypothesis", drop_labels=())
    msg = str(e.value)
    assert msg.startswith("data: row 8: field 'label' has classes that look like a mistake: ")
    for part in ("'-' (a placeholder, 1 row: row 8)", "'n/a' (a placeholder, 1 row: row 10)",
                 "' ' (a placeholder, 1 row: row 13)",
                 "'1' (a number among text labels, 2 rows: row 11, row 21)"):  # fmt: skip
        assert part in msg, msg
    # one value, quoted for a shell where it needs to be, drops them all
    assert msg.endswith("--drop-labels '-,n/a, ,1' (drop_labels=['-', 'n/a', ' ', '1'])")
    # what is given already stays in the value the message offers
    with pytest.raises(DataError) as e:
        read_labelled(rows, label="label", text="hypothesis", drop_labels=["-"])
    assert "--drop-labels '-,n/a, ,1'" in str(e.value) and "'-' (a placeholder" not in str(e.value)
    read_labelled(rows, label="label", text="hypothesis", drop_labels=["-", "n/a", " ", "1"])


def test_drop_labels_in_python_takes_numbers_and_names_its_own_option(snli_rows):
    codes = {"entailment": 0, "neutral": 1, "contradiction": 2}
    rows = [dict(r, label=codes[r["label"]]) for r in snli_rows]
    opts = dict(label="label", text="hypothesis", target_size=0.8, n_partitions=16)
    for drop in (2, [2], ["2"], "2"):
        out = aflite.filter_dataset(rows, **opts, drop_labels=drop)
        assert (out.scores["review"] == "drop").sum() == sum(r["label"] == 2 for r in rows)
    with pytest.raises(DataError, match=r"^drop_labels: no row of data is labelled '3' "):
        aflite.filter_dataset(rows, **opts, drop_labels=3)


def test_an_audit_says_what_it_left_out(snli_rows, tmp_path):
    rows = [dict(r) for r in snli_rows]
    rows[7]["label"] = "-"
    src = _write(tmp_path / "in.jsonl", rows)
    r = run_in_process("audit", str(src), "--text-fields", "hypothesis", "--audits", "pmi",
                       "--drop-labels", "-")  # fmt: skip
    assert r.returncode == 0 and f"note: {src}: 1 row left out by --drop-labels" in r.stderr
