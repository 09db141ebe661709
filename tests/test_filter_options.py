"""How the filter's options meet the data and the output folder, through the command line and
the Python API alike: a training part too small for the classes, options that do not apply
with ``--by``, rows dropped by ``--drop-ids`` in the counts, and ``--resume`` on a finished
run."""

from __future__ import annotations

import json

import pytest
from conftest import run_in_process

import aflite
from aflite.data import bundled_snli
from aflite.errors import DataError
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
    job = FilterJob(input=snli300, text_fields=("hypothesis",), train_size=size,
                    out_dir=str(out))  # fmt: skip
    with pytest.raises(DataError) as e:
        run_filter_job(job, progress=False, log=lambda s: None)
    assert str(e.value) == f"--train-size: {message}" and not out.exists()
    with pytest.raises(DataError) as e:
        aflite.filter_dataset(_rows(300), label="label", text="hypothesis", train_size=size)
    assert str(e.value) == f"train_size: {message}"


def test_one_training_row_per_class_is_enough(snli300):
    out = aflite.filter_dataset(_rows(300), label="label", text="hypothesis", train_size=3,
                                n_partitions=4, target_size=290)  # fmt: skip
    assert len(out.kept) + len(out.removed) == 300


def test_compare_refuses_a_training_part_smaller_than_the_classes(tmp_path):
    from aflite.experiments import compare_experiment

    rows = [{"hypothesis": r["hypothesis"], "label": r["label"]} for r in _rows(400)]
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows[:300]))
    dev.write_text("".join(json.dumps(r) + "\n" for r in rows[300:]))
    with pytest.raises(DataError) as e:
        compare_experiment(str(train), str(dev), train_size=2)
    assert str(e.value) == "train_size: 2 gives each classifier 2 training rows, fewer than " \
        "the 3 classes"
    r = run_in_process("experiment", "compare", str(train), "--dev", str(dev),
                       "--text-fields", "hypothesis", "--train-size", "2")  # fmt: skip
    assert r.returncode == 2 and "gives each classifier 2 training rows, fewer than the 3 " \
        "classes" in r.stderr, r.stderr
