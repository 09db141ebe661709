"""How the filter's options meet the data and the output folder, through the command line and
the Python API alike: a training part too small for the classes, options that do not apply
with ``--by``, rows dropped by ``--drop-ids`` in the counts, and ``--resume`` on a finished
run."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import run_in_process

import aflite
from aflite.data import bundled_snli
from aflite.errors import DataError, OptionWarning
from aflite.jobs import FilterJob, run_filter_job


def _rows(n: int) -> list[dict]:
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()[:n]]


@pytest.fixture(scope="module")
def snli300(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "s300.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(300)))
    return str(path)


# --- a training part smaller than the number of classes ---------------------------------------


@pytest.mark.parametrize(
    "size, message",
    [
        (2, "2 gives each classifier 2 training rows, fewer than the 3 classes"),
        (0.005, "0.005 of 300 rows gives each classifier 2 training rows, fewer than the 3 "
                "classes"),
    ],
)  # fmt: skip
def test_a_training_part_smaller_than_the_classes_is_refused_everywhere(
    snli300, tmp_path, size, message
):
    out = tmp_path / "out"
    r = run_in_process("filter", snli300, "--text-fields", "hypothesis", "--train-size",
                       str(size), "--out-dir", str(out), "--quiet")  # fmt: skip
    assert r.returncode == 2 and r.stderr == f"aflite: error: --train-size: {message}\n"
    assert not out.exists()
    job = FilterJob(input=snli300, text=("hypothesis",), train_size=size,
                    out_dir=str(out))  # fmt: skip
    with pytest.raises(DataError) as e:
        run_filter_job(job, progress=False, log=lambda s: None)
    assert str(e.value) == f"--train-size: {message}" and not out.exists()
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(_rows(300), label="label", text="hypothesis", train_size=size)
    assert str(e.value) == f"train_size: {message}"


def test_the_training_part_is_sized_on_the_rows_left_after_drop_ids(snli300, tmp_path):
    # 0.01 of the 300 rows read is 3 rows, but of the 240 left to filter only 2
    drop = tmp_path / "drop.txt"
    drop.write_text("".join(r["id"] + "\n" for r in _rows(60)))
    message = "0.01 of 240 rows gives each classifier 2 training rows, fewer than the 3 classes"
    out = tmp_path / "out"
    r = run_in_process("filter", snli300, "--text-fields", "hypothesis", "--train-size", "0.01",
                       "--drop-ids", str(drop), "--out-dir", str(out), "--quiet")  # fmt: skip
    assert r.returncode == 2 and r.stderr == f"aflite: error: --train-size: {message}\n"
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(_rows(300), label="label", text="hypothesis", train_size=0.01,
                              drop_ids=str(drop))  # fmt: skip
    assert str(e.value) == f"train_size: {message}"


def test_the_array_filter_refuses_a_training_part_smaller_than_the_classes():
    import numpy as np

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(60, 4)), np.arange(60) % 3
    with pytest.raises(ValueError, match=r"^train_size: 2 gives each classifier 2 training "
                       r"rows, fewer than the 3 classes$"):  # fmt: skip
        aflite.filter(x, y, target_size=40, train_size=2, slice_size=5)


def test_items_are_not_held_to_a_training_row_per_answer_position():
    # an item holds all its choices, so a part of 2 items trains on every choice; the answer
    # positions are labels of items, not classes a part must cover
    import numpy as np
    from test_choice_input import artifact_items

    x = np.random.default_rng(0).normal(size=(60, 4, 3))
    res = aflite.filter(x, np.arange(60) % 4, target_size=50, train_size=2, slice_size=5,
                        n_partitions=4)  # fmt: skip
    assert len(res.kept) + len(res.removed) == 60
    out = aflite.filter_dataset(artifact_items(60), label="label", choices="endings", context="ctx",
                                choice_context="none", features="ngrams:min_df=1", train_size=2,
                                n_partitions=4, target_size=50)  # fmt: skip
    assert len(out.kept) + len(out.removed) == 60


def test_labels_that_are_not_one_dimensional_are_named_before_their_classes():
    import numpy as np

    y = np.arange(30) % 3
    with pytest.raises(ValueError, match=r"labels must be 1-D, got shape \(30, 3\)"):
        aflite.filter(np.zeros((30, 4)), np.eye(3)[y], target_size=10, train_size=1)


def test_one_training_row_per_class_is_enough(snli300):
    out = aflite.filter_dataset(_rows(300), label="label", text="hypothesis", train_size=3,
                                n_partitions=4, target_size=290)  # fmt: skip
    assert len(out.kept) + len(out.removed) == 300


def _train_dev(tmp_path, n_train, n_dev):
    """train.jsonl and dev.jsonl of hypotheses and labels, the first rows and the next ones."""
    rows = [{"hypothesis": r["hypothesis"], "label": r["label"]} for r in _rows(n_train + n_dev)]
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows[:n_train]))
    dev.write_text("".join(json.dumps(r) + "\n" for r in rows[n_train:]))
    return train, dev


def test_compare_refuses_a_training_part_smaller_than_the_classes(tmp_path):
    from aflite.experiments import compare_experiment

    train, dev = _train_dev(tmp_path, 300, 100)
    with pytest.raises(DataError) as e:
        compare_experiment(str(train), str(dev), train_size=2)
    assert (
        str(e.value) == "train_size: 2 gives each classifier 2 training rows, fewer than "
        "the 3 classes"
    )
    r = run_in_process("experiment", "compare", str(train), "--dev", str(dev),
                       "--text-fields", "hypothesis", "--train-size", "2")  # fmt: skip
    assert r.returncode == 2 and r.stderr.endswith(
        "aflite: error: --train-size: 2 gives each classifier 2 training rows, fewer than the 3 "
        "classes\n"
    ), r.stderr


def test_compare_names_dev_s_training_part_in_the_size_given(tmp_path):
    # a count of D applies to dev in proportion: 30 of 300 rows is 2 of dev's 20
    train, dev = _train_dev(tmp_path, 300, 20)
    r = run_in_process("experiment", "compare", str(train), "--dev", str(dev),
                       "--text-fields", "hypothesis", "--train-size", "30")  # fmt: skip
    assert r.returncode == 2 and r.stderr.endswith(
        "aflite: error: --train-size: 30 of 300 rows, in proportion 0.1 of the 20 rows of dev, "
        "gives each classifier 2 training rows, fewer than the 3 classes\n"
    ), r.stderr


# --- rows dropped by --drop-ids in the counts -------------------------------------------------


def test_rows_dropped_by_review_are_counted_apart_and_every_row_is_in_one_output(snli300, tmp_path):
    rows = _rows(300)
    drop = tmp_path / "drop.txt"
    drop.write_text(f"{rows[0]['id']}\n{rows[7]['id']}\n")
    out = tmp_path / "out"
    r = run_in_process("filter", snli300, "--text-fields", "hypothesis", "--n-partitions", "8",
                       "--drop-ids", str(drop), "--out-dir", str(out), "--quiet",
                       "--no-report")  # fmt: skip
    assert r.returncode == 0, r.stderr
    counts = json.loads((out / "summary.json").read_text())["counts"]
    assert counts["dropped_by_review"] == 2 and counts["input"] == 300
    assert counts["removed"] == counts["removed_by_filter"] + 2
    first = r.stdout.splitlines()[0]
    phases = len(json.loads((out / "summary.json").read_text())["history"])
    assert first == (
        f"kept {counts['kept']} of 300 rows, removed {counts['removed_by_filter']} in "
        f"{phases} phase{'s' * (phases != 1)} and 2 by --drop-ids"
    )
    kept = [json.loads(line) for line in (out / "kept.jsonl").read_text().splitlines()]
    removed = [json.loads(line) for line in (out / "removed.jsonl").read_text().splitlines()]
    ids = [x["id"] for x in kept + removed]
    assert sorted(ids) == sorted(x["id"] for x in rows) and len(set(ids)) == 300
    marked = {x["id"] for x in removed if x["aflite_phase"] == -1}
    assert marked == {rows[0]["id"], rows[7]["id"]}

    res = aflite.filter_dataset(rows, label="label", text="hypothesis", n_partitions=8,
                                drop_ids=[rows[0]["id"], rows[7]["id"]])  # fmt: skip
    n_filter = len(res.removed) - 2
    assert res.result.summary().splitlines()[0] == (
        f"kept {len(res.kept)} of 300 rows, removed {n_filter} in "
        f"{len(res.result.history)} phase{'s' * (len(res.result.history) != 1)} and 2 by drop_ids"
    )
    assert len(res.kept) + len(res.removed) == 300


# --- --resume on a finished run ---------------------------------------------------------------


def _files(folder):
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*")) if p.is_file()
    }  # fmt: skip


def test_resume_on_a_finished_run_says_so_and_rewrites_nothing(snli300, tmp_path):
    import dataclasses

    out = tmp_path / "r1"
    args = ["filter", snli300, "--text-fields", "hypothesis", "--n-partitions", "8",
            "--out-dir", str(out), "--quiet", "--no-report"]  # fmt: skip
    assert run_in_process(*args).returncode == 0
    before = _files(out)
    r = run_in_process(*args, "--resume")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{out} already holds a finished run; nothing to resume\n" and not r.stderr
    assert _files(out) == before

    logged = []
    job = FilterJob(input=snli300, text=("hypothesis",), n_partitions=8,
                    out_dir=str(out), report=False, resume=True)  # fmt: skip
    outcome = run_filter_job(job, progress=False, log=logged.append)
    assert logged == [] and outcome.summary_text.endswith("nothing to resume")
    summary = json.loads((out / "summary.json").read_text())
    assert len(outcome.result.kept) == summary["counts"]["kept"]
    assert _files(out) == before

    # another run's folder is not this one's to resume: the first option that differs named
    with pytest.raises(DataError) as e:
        run_filter_job(dataclasses.replace(job, seed=1), progress=False, log=logged.append)
    assert (
        str(e.value) == f"{out}: holds a finished run with --seed 0, not 1, nothing to "
        "resume; pass --overwrite instead of --resume to replace it"
    )
    r = run_in_process(*args, "--resume", "--seed", "1")
    assert r.returncode == 2 and r.stderr == f"aflite: error: {e.value}\n"
    assert _files(out) == before


def test_resume_on_a_finished_run_of_another_input_or_without_its_result(tmp_path):
    import shutil

    data, out = tmp_path / "data.jsonl", tmp_path / "r1"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(300)))
    args = ["filter", str(data), "--text-fields", "hypothesis", "--n-partitions", "8",
            "--out-dir", str(out), "--quiet", "--no-report"]  # fmt: skip
    assert run_in_process(*args).returncode == 0
    before = _files(out)
    # the same options and the same path, but the file now holds other rows
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(301)[1:]))
    r = run_in_process(*args, "--resume")
    assert r.returncode == 2 and r.stderr == (
        f"aflite: error: {out}: holds a finished run of another input ({data} has changed "
        "since), nothing to resume; pass --overwrite instead of --resume to replace it\n"
    )
    other = tmp_path / "other.jsonl"
    other.write_text(data.read_text())
    r = run_in_process("filter", str(other), *args[2:], "--resume")
    assert r.returncode == 2 and r.stderr == (
        f"aflite: error: {out}: holds a finished run of another input ({data}; {other} holds "
        "other rows), nothing to resume; pass --overwrite instead of --resume to replace it\n"
    )
    assert _files(out) == before
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(300)))
    shutil.rmtree(out / "result")
    r = run_in_process(*args, "--resume")
    assert r.returncode == 2 and r.stderr == (
        f"aflite: error: {out / 'result'}: the finished run's result is missing or damaged, "
        "nothing to resume; pass --overwrite to run it again\n"
    )


# --- options that do not apply with --by ------------------------------------------------------


def test_options_of_the_phases_given_with_by_are_named_as_ignored(snli300, tmp_path):
    out = tmp_path / "out"
    args = ["filter", snli300, "--text-fields", "hypothesis", "--by", "predictability",
            "--n-partitions", "4", "--target-size", "0.9", "--out-dir", str(out), "--quiet",
            "--no-report"]  # fmt: skip

    def ignored(r):  # stderr also holds the run's other notes and warnings
        return [
            line
            for line in r.stderr.splitlines()
            if "do not apply" in line or "does not apply" in line
        ]

    r = run_in_process(*args, "--threshold", "0.9", "--strategy", "greedy")
    assert r.returncode == 0, r.stderr
    assert ignored(r) == [
        "aflite: note: --threshold 0.9 and --strategy greedy do not apply with --by "
        "predictability; ignored"
    ]
    # the defaults, even typed out, and the options --by reads are no news
    r = run_in_process(*args, "--overwrite", "--threshold", "0.6", "--slice-size", "10",
                       "--min-bias", "off")  # fmt: skip
    assert r.returncode == 0 and ignored(r) == [], r.stderr

    job = FilterJob(input=snli300, text=("hypothesis",), by="predictability",
                    n_partitions=4, target_size=0.9, out_dir=str(out), overwrite=True,
                    report=False, model="ridge", partitions="uniform")  # fmt: skip
    with pytest.warns(OptionWarning) as seen:
        run_filter_job(job, progress=False, log=lambda s: None)
    assert [str(w.message) for w in seen if w.category is OptionWarning] == [
        "partitions='uniform' does not apply with by='predictability'; ignored"
    ]


def test_the_by_note_names_only_options_given_over_the_preset(snli300, tmp_path):
    out = tmp_path / "out"
    args = ["filter", snli300, "--text-fields", "hypothesis", "--by", "predictability",
            "--n-partitions", "4", "--target-size", "0.9", "--out-dir", str(out), "--quiet",
            "--no-report", "--overwrite"]  # fmt: skip

    def notes(r):
        assert r.returncode == 0, r.stderr
        return [line for line in r.stderr.splitlines() if "apply with --by" in line]

    # the paper preset's threshold and partitions are not the user's to be told about
    assert notes(run_in_process(*args, "--preset", "paper")) == []
    config = tmp_path / "run.toml"
    config.write_text('preset = "paper"\n')
    assert notes(run_in_process(*args, "--config", str(config))) == []
    assert notes(run_in_process(*args, "--preset", "paper", "--threshold", "0.9")) == [
        "aflite: note: --threshold 0.9 does not apply with --by predictability; ignored"
    ]


def test_no_note_without_by():
    job = FilterJob(input="x.jsonl", threshold=0.9, strategy="greedy")
    assert job.ignored_options(cli=True) is None


def test_score_refuses_a_training_part_smaller_than_the_classes(snli300, tmp_path):
    out = tmp_path / "out"
    r = run_in_process("score", snli300, "--text-fields", "hypothesis", "--scorers",
                       "predictability", "--train-size", "2", "--out-dir", str(out),
                       "--quiet")  # fmt: skip
    assert r.returncode == 2 and r.stderr == (
        "aflite: error: --train-size: 2 gives each classifier 2 training rows, fewer than the "
        "3 classes\n"
    )
    assert not out.exists()
    with pytest.raises(DataError) as e:
        aflite.score_dataset(_rows(300), label="label", text="hypothesis",
                             scorers=["predictability"], train_size=0.005)  # fmt: skip
    assert str(e.value) == (
        "train_size: 0.005 of 300 rows gives each classifier 2 training rows, fewer than the 3 "
        "classes"
    )


def test_by_help_names_as_not_applying_exactly_the_options_it_ignores():
    from aflite._internal.options import config_fields, flag
    from aflite.config.filter import NOT_FOR_BY, FilterConfig

    help_ = next(f for f in config_fields(FilterConfig) if f.name == "by").metadata["help"]
    ignored = help_.split("; ")[-1]
    flags = [flag(n) for n in NOT_FOR_BY]
    assert ignored.startswith(", ".join(flags[:-1]) + " and " + flags[-1] + " do not apply")
    for applies in ("--slice-size", "--min-bias", "--target-size", "--train-size"):
        assert applies in help_ and applies not in ignored


# the fields' names before they took the Python API's (label, text, id, group)
_OLD_NAMES = {"label": "label_field", "text": "text_fields", "id": "id_field",
              "group": "group_field"}  # fmt: skip


def _old_names(options: dict) -> dict:
    return {_OLD_NAMES.get(k, k): v for k, v in options.items()}


def test_runs_written_under_the_options_older_names_still_resume(snli300, tmp_path):
    from aflite.io.checkpoint import MANIFEST

    # a finished run whose summary names the options as older versions did
    out = tmp_path / "done"
    args = ["filter", snli300, "--text-fields", "hypothesis", "--id-field", "id",
            "--n-partitions", "8", "--out-dir", str(out), "--quiet", "--no-report"]  # fmt: skip
    assert run_in_process(*args).returncode == 0
    summary = json.loads((out / "summary.json").read_text())
    assert {"label", "text", "id"} <= set(summary["options"])
    summary["options"] = _old_names(summary["options"])
    (out / "summary.json").write_text(json.dumps(summary))
    r = run_in_process(*args, "--resume")
    assert r.returncode == 0 and "already holds a finished run" in r.stdout, r.stderr
    assert r.stdout == f"{out} already holds a finished run; nothing to resume\n"

    # an interrupted run whose checkpoint names them so: resumed, the same rows kept
    job = FilterJob(input=snli300, text=("hypothesis",), id="id", n_partitions=8,
                    target_size=0.6, slice_size=0.02, min_bias=None, threshold=0.4,
                    out_dir=str(tmp_path / "cut"),
                    report=False)  # fmt: skip
    whole = run_filter_job(
        dataclasses.replace(job, out_dir=str(tmp_path / "whole")), progress=False
    )
    with pytest.raises(KeyboardInterrupt):
        run_filter_job(job, progress=False, log=lambda s: None, stop_after_phases=1)
    manifest = tmp_path / "cut" / ".checkpoint" / MANIFEST
    doc = json.loads(manifest.read_text())
    doc["identity"]["job"] = _old_names(doc["identity"]["job"])
    manifest.write_text(json.dumps(doc))
    resumed = run_filter_job(dataclasses.replace(job, resume=True), progress=False)
    assert resumed.result.kept.tolist() == whole.result.kept.tolist()
    assert len(resumed.result.history) == len(whole.result.history) > 1
