"""A reviewer's decisions back into the filter (--keep-ids / --drop-ids, keep_ids= / drop_ids=),
exports for annotation tools (aflite export), and what the run reports about itself: one bias
figure per set, word lists cut only between words."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch
from conftest import planted_data, run_in_process

import aflite
from aflite.algorithm.loop.selection import select_slice
from aflite.errors import DataError
from aflite.io.decisions import resolve_decisions

# --- protection in the algorithm ------------------------------------------------------


def test_protected_rows_are_never_eligible():
    correct = np.array([10, 10, 9, 8, 2, 1])
    heldout = np.full(6, 10)
    labels = np.zeros(6, dtype=np.int64)
    protected = np.array([True, False, True, False, False, False])
    g = torch.Generator().manual_seed(0)
    opts = dict(k=3, threshold=0.5, strategy="slicing", balance=None, device=torch.device("cpu"))
    picked, scores, n_eligible = select_slice(correct, heldout, labels, generator=g, **opts)
    assert sorted(picked.tolist()) == [0, 1, 2]
    g = torch.Generator().manual_seed(0)
    picked, scores, n_eligible = select_slice(
        correct, heldout, labels, generator=g, protected=protected, **opts
    )
    assert picked.tolist() == [1, 3] and n_eligible == 2  # 0 and 2 score higher, protected
    assert scores.tolist() == [1.0, 0.8]


def test_filter_keeps_protected_planted_rows():
    x, y, planted = planted_data(n=600, share=0.3, seed=1)
    opts = dict(target_size=300, train_size=100, slice_size=40, threshold=0.5, n_partitions=16)
    plain = aflite.filter(x, y, **opts)
    guard = np.flatnonzero(planted)[:30]
    assert np.isin(guard, plain.removed).sum() > 20  # what protection has to prevent
    protected = np.zeros(len(y), bool)
    protected[guard] = True
    res = aflite.filter(x, y, protected=protected, **opts)
    assert np.isin(guard, res.kept).all() and not np.isin(guard, res.removed).any()
    with pytest.raises(ValueError, match="protected must be a boolean mask of 600 rows"):
        aflite.filter(x, y, protected=protected[:10], **opts)


# --- decisions files ---------------------------------------------------------------------


def test_decision_files_skip_comments_and_name_file_and_line(tmp_path):
    ids = ["a", "b", 3, "d"]
    keep = tmp_path / "keep.txt"
    keep.write_text("# reviewed 2 rows\na\n\n 3 \n")
    d = resolve_decisions(ids, keep=keep)
    assert d.protected.tolist() == [True, False, True, False] and not d.dropped.any()
    bad = tmp_path / "drop.txt"
    bad.write_text("b\nzz\n")
    with pytest.raises(DataError, match=rf"^{bad}:2: unknown id 'zz'"):
        resolve_decisions(ids, drop=bad)
    both = tmp_path / "both.txt"
    both.write_text("d\na\n")
    with pytest.raises(DataError, match=rf"{both}:2: id 'a' is also to be kept \({keep}:2\)"):
        resolve_decisions(ids, keep=keep, drop=both)
    with pytest.raises(DataError, match=r"drop_ids\[1\]: unknown id 'q'"):
        resolve_decisions(ids, drop=["b", "q"])
    with pytest.raises(DataError, match="no such file"):
        resolve_decisions(ids, keep=tmp_path / "missing.txt")


@pytest.fixture(scope="module")
def snli_small(tmp_path_factory):
    from aflite.data import bundled_snli

    d = tmp_path_factory.mktemp("snli")
    lines = bundled_snli().read_text().splitlines()[:500]
    (d / "in.jsonl").write_text("\n".join(lines) + "\n")
    return d / "in.jsonl", [json.loads(line) for line in lines]


FILTER = ["--text-fields", "hypothesis", "--id-field", "id", "--target-size", "300",
          "--train-size", "150", "--slice-size", "40", "--threshold", "0.5",
          "--min-bias", "off", "--n-partitions", "8", "--quiet", "--no-report"]  # fmt: skip


@pytest.fixture(scope="module")
def reviewed(snli_small, tmp_path_factory):
    """A plain run, then the same run with 5 of its removed rows kept and 5 kept rows dropped."""
    src, rows = snli_small
    d = tmp_path_factory.mktemp("reviewed")
    r = run_in_process("filter", str(src), *FILTER, "--out-dir", str(d / "plain"))
    assert r.returncode == 0, r.stderr
    removed = [
        json.loads(x)["id"] for x in (d / "plain" / "removed.jsonl").read_text().split("\n") if x
    ]
    kept = [json.loads(x)["id"] for x in (d / "plain" / "kept.jsonl").read_text().split("\n") if x]
    keep, drop = removed[:5], kept[:5]
    (d / "keep.txt").write_text("\n".join(keep) + "\n")
    (d / "drop.txt").write_text("# dropped by hand\n" + "\n".join(drop) + "\n")
    r = run_in_process(
        "filter", str(src), *FILTER, "--out-dir", str(d / "out"),
        "--keep-ids", str(d / "keep.txt"), "--drop-ids", str(d / "drop.txt"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return d, keep, drop


@pytest.mark.slow
def test_reviewer_decisions_are_applied_and_recorded(reviewed):
    import pyarrow.parquet as pq

    d, keep, drop = reviewed
    out = d / "out"
    kept = [json.loads(x) for x in (out / "kept.jsonl").read_text().splitlines()]
    removed = [json.loads(x) for x in (out / "removed.jsonl").read_text().splitlines()]
    assert set(keep) <= {r["id"] for r in kept}
    by_id = {r["id"]: r for r in removed}
    assert all(by_id[i]["aflite_phase"] == -1 and by_id[i]["aflite_score"] is None for i in drop)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["review"] == {
        "keep_ids": str(d / "keep.txt"), "drop_ids": str(d / "drop.txt"),
        "protected": 5, "dropped": 5, "protected_kept": 5,
    }  # fmt: skip
    assert summary["counts"]["dropped_by_review"] == 5
    assert summary["counts"]["kept"] + summary["counts"]["removed"] == 500
    scores = pq.read_table(out / "scores.parquet").to_pydict()
    review = dict(zip(scores["id"], scores["review"]))
    assert [review[i] for i in keep] == ["keep"] * 5 and [review[i] for i in drop] == ["drop"] * 5
    assert sum(v is not None for v in review.values()) == 10


def test_unknown_ids_are_one_line_errors_before_anything_is_written(snli_small, tmp_path):
    src, _ = snli_small
    ids = tmp_path / "keep.txt"
    ids.write_text("snli-dev-0\nnot-an-id\n")
    r = run_in_process("filter", str(src), *FILTER, "--out-dir", str(tmp_path / "o"),
                       "--keep-ids", str(ids))  # fmt: skip
    assert r.returncode == 2
    assert (
        r.stderr
        == f"aflite: error: {ids}:2: unknown id 'not-an-id' (not among the input's row ids)\n"
    )
    assert not (tmp_path / "o").exists()


def test_filter_dataset_takes_decisions():
    rows = [
        {"text": ("nobody " if i % 3 == 0 else "") + f"w{i % 7} x{i % 5}", "label": int(i % 3 == 0),
         "id": f"r{i}"}
        for i in range(300)
    ]  # fmt: skip
    plain = aflite.filter_dataset(rows, label="label", target_size=200, seed=0)
    gone = list(plain.removed["id"] if hasattr(plain.removed, "columns") else
                [r["id"] for r in plain.removed])[:4]  # fmt: skip
    out = aflite.filter_dataset(
        rows, label="label", target_size=200, seed=0, keep_ids=gone, drop_ids=["r1", "r2"]
    )
    kept_ids = {r["id"] for r in out.kept}
    assert set(gone) <= kept_ids and not {"r1", "r2"} & kept_ids
    frame = out.scores.set_index("id")
    assert frame.loc["r1", "review"] == "drop" and frame.loc[gone[0], "review"] == "keep"
    assert frame["phase_removed"].isna()[["r1", "r2"]].all()
    assert len(out.kept) + len(out.removed) == 300
    with pytest.raises(DataError, match=r"keep_ids\[0\]: unknown id 'nope'"):
        aflite.filter_dataset(rows, label="label", target_size=200, keep_ids=["nope"])


# --- exports ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_with_report(reviewed, snli_small):
    """The plain run of ``reviewed``: exports read its scores, texts and why-removed n-grams."""
    d, _, _ = reviewed
    return d / "plain", {r["id"]: r for r in snli_small[1]}


@pytest.mark.slow
def test_exports_in_each_tools_format(run_with_report, tmp_path):
    out, rows = run_with_report
    removed = [json.loads(x) for x in (out / "removed.jsonl").read_text().splitlines()]
    extra = json.loads((out / "result" / "report_extra.json").read_text())
    grams = {c: [r[0] for r in t["rows"]] for c, t in extra["why_removed"]["classes"].items()}

    r = run_in_process("export", str(out), "--to", "label-studio")
    assert (
        r.returncode == 0
        and r.stdout == f"wrote {len(removed)} rows to {out}/export-label-studio-removed.json\n"
    )
    tasks = json.loads((out / "export-label-studio-removed.json").read_text())
    assert len(tasks) == len(removed) and all(set(t) == {"data", "meta"} for t in tasks)
    for t, row in zip(tasks, removed):
        assert t["data"]["id"] == row["id"] and t["data"]["hypothesis"] == row["hypothesis"]
        assert t["data"]["premise"] == row["premise"]  # the context, though not filtered on
        assert t["meta"]["score"] == pytest.approx(row["aflite_score"])
        assert t["meta"]["phase"] == row["aflite_phase"] and t["meta"]["split"] == "removed"
        assert set(t["meta"]["why_removed"]) <= set(grams.get(row["label"], []))
        for g in t["meta"]["why_removed"]:
            assert g in row["hypothesis"].lower()
    assert any(t["meta"]["why_removed"] for t in tasks)

    target = tmp_path / "records.json"
    r = run_in_process(
        "export", str(out), "--to", "argilla", "--rows", "all", "--output", str(target)
    )
    assert r.returncode == 0, r.stderr
    records = json.loads(target.read_text())
    assert len(records) == 500 and all(set(x) == {"id", "fields", "metadata"} for x in records)
    first = rows[records[0]["id"]]
    assert records[0]["fields"] == {"hypothesis": first["hypothesis"], "premise": first["premise"]}
    assert {x["metadata"]["split"] for x in records} == {"kept", "removed"}
    for x in records:  # Argilla metadata: terms, integers, floats; nothing null
        assert all(v is not None for v in x["metadata"].values())

    r = run_in_process("export", str(out), "--to", "csv", "--output", str(tmp_path / "r.csv"))
    with open(tmp_path / "r.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [t["id"] for t in table] == [x["id"] for x in removed]
    assert list(table[0]) == ["id", "label", "split", "phase", "score", "review", "hypothesis",
                              "premise", "why_removed"]  # fmt: skip
    # n-grams are looked for in the fields filtered on only, whichever fields are carried
    r = run_in_process("export", str(out), "--to", "csv", "--fields", "premise",
                       "--output", str(tmp_path / "p.csv"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "p.csv", newline="") as fh:
        only = list(csv.DictReader(fh))
    assert list(only[0])[6:] == ["premise", "why_removed"]
    assert [t["why_removed"] for t in only] == [t["why_removed"] for t in table]
    assert all(t["premise"] == rows[t["id"]]["premise"] for t in only)
    r = run_in_process("export", str(out), "--to", "csv", "--fields", "premise,genre",
                       "--output", str(tmp_path / "g.csv"))  # fmt: skip
    assert r.returncode == 2 and not (tmp_path / "g.csv").exists()
    assert r.stderr == (f"aflite: error: --fields: no text field 'genre' in {out} "
                        "(it has hypothesis, premise)\n")  # fmt: skip
    r = run_in_process("export", str(out), "--to", "csv", "--fields", "Premises")
    assert r.returncode == 2 and r.stderr.endswith("; did you mean 'premise'?\n")
    r = run_in_process("export", str(out), "--to", "csv", "--fields", " , ")
    assert r.returncode == 2
    assert r.stderr == (
        "aflite: error: --fields: no field named; leave the option out for the default fields\n"
    )


def test_export_errors_name_the_flag_or_folder(tmp_path):
    out = tmp_path  # the flags are checked before the folder is read
    r = run_in_process("export", str(out), "--to", "prodigy")
    assert r.returncode == 2
    assert (
        r.stderr
        == "aflite: error: --to: unknown format 'prodigy' (choose from label-studio, argilla, csv)\n"
    )
    r = run_in_process("export", str(out), "--to", "csv", "--rows", "kept")
    assert r.returncode == 2 and "--rows: must be one of removed, all" in r.stderr
    r = run_in_process("export", str(tmp_path), "--to", "csv")
    assert r.returncode == 2 and "no summary.json here" in r.stderr
    (tmp_path / "summary.json").write_text('{"kind": "scores"}')
    r = run_in_process("export", str(tmp_path), "--to", "csv")
    assert r.returncode == 2 and "not a filter run's output folder" in r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]  # nothing written


# --- small truths -------------------------------------------------------------------------


def test_one_bias_figure_for_the_kept_set_when_the_last_phase_removed_nothing():
    x, y, _ = planted_data(n=1200, share=0.3, seed=3)
    res = aflite.filter(x, y, target_size=0.3, train_size=150, slice_size=40, threshold=0.3,
                        min_bias=0.03, seed=0)  # fmt: skip
    assert res.stop_reason == "chance" and res.history[-1].n_removed == 0
    assert res.final_bias == res.history[-1].representation_bias
    figure = f"{res.final_bias:.3f}"
    assert f"({figure} <=" in res.stop_message and f"-> {figure} " in res.summary()
    assert res.final_bias == pytest.approx(np.nanmean(res.kept_scores))


def test_word_lists_are_cut_between_words():
    from aflite._internal.text import word_list

    words = ["nobody", "sleeping", "cat", "outdoors", "tall", "asleep", "eating", "swimming"]
    text = word_list(words, limit=30)
    assert text == "nobody, sleeping, cat (+5 more)"
    assert word_list(["supercalifragilistic"], limit=5) == "supercalifragilistic"
    assert word_list(words[:3]) == "nobody, sleeping, cat"
    from aflite.audits.word_label import word_label_pmi

    texts = ["nobody sleeping outdoors tall asleep eating swimming wonderful"] * 30 + ["a b"] * 30
    res = word_label_pmi(texts, ["c"] * 30 + ["e"] * 30, min_count=5)
    listed = res.summary.split("top by PMI: ")[1]
    for part in listed.split("; "):
        names = part.split(": ", 1)[1].split(" (+")[0].split(", ")
        vocab = {r[2] for r in res.rows}
        assert all(n in vocab for n in names), names


def test_the_report_names_the_decision_files(tmp_path):
    from aflite.reports import render_report

    review = {"keep_ids": "keep.txt", "protected": 1, "drop_ids": "drop.txt", "dropped": 2}
    summary = {"input": "x.jsonl", "counts": {"input": 4, "kept": 2, "removed": 2}}
    (tmp_path / "summary.json").write_text(json.dumps(summary | {"review": review}))
    page = render_report(tmp_path)
    assert "<td>--keep-ids</td><td>keep.txt: 1 row</td>" in page
    assert "<td>--drop-ids</td><td>drop.txt: 2 rows</td>" in page
