"""RunFolder: the output folder's life as one object (each step is also covered through the
jobs in test_out_dir.py, test_run_faults.py and test_kill_points.py)."""

from __future__ import annotations

import pytest

from aflite.errors import DataError
from aflite.jobs.run_folder import RunFolder


def _earlier_run(out):
    out.mkdir()
    (out / "summary.json").write_text('{"outputs": {"notes": "notes.txt"}}')
    (out / "kept.jsonl").write_text("{}\n")
    (out / "notes.txt").write_text("listed by the summary")
    (out / "mine.txt").write_text("not an output")


def test_an_earlier_run_is_refused_then_replaced_only_when_asked(tmp_path):
    out, data = tmp_path / "out", tmp_path / "in.jsonl"
    data.write_text("{}\n")
    _earlier_run(out)
    with pytest.raises(DataError, match="holds a previous run .*pass --overwrite"):
        with RunFolder.open(out, overwrite=False, resume=False, data=str(data)):
            pass

    def write(stage):
        (stage / "summary.json").write_text("{}")
        (stage / "removed.jsonl").write_text("{}\n")

    with RunFolder.open(out, overwrite=True, resume=False, data=str(data)) as folder:
        assert (out / "kept.jsonl").exists()  # nothing goes before the new outputs are in
        folder.publish(write)
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt", "removed.jsonl", "summary.json"]
    assert folder.finished == {}


def test_the_input_inside_an_earlier_run_is_never_removed(tmp_path):
    out = tmp_path / "out"
    _earlier_run(out)
    with pytest.raises(DataError, match="the input is an output of the run"):
        with RunFolder.open(out, overwrite=True, resume=False, data=str(out / "kept.jsonl")):
            pass


def test_a_changed_input_is_found_before_the_outputs(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("{}\n")
    with RunFolder.open(tmp_path / "out", overwrite=False, resume=False, data=str(data)) as f:
        f.check_input()
        data.write_text('{"a": 1}\n')
        with pytest.raises(DataError, match="the input changed while the run was using it"):
            f.check_input()
        with pytest.raises(DataError, match="the input changed"):
            f.publish(lambda stage: (stage / "summary.json").write_text("{}"))
    assert not (tmp_path / "out").exists()  # nothing was written: the folder went again


def test_the_lock_refuses_a_second_run_and_an_unused_folder_goes_again(tmp_path):
    out = tmp_path / "out"
    with RunFolder.open(out, overwrite=False, resume=False):
        with pytest.raises(DataError, match="another aflite run .* is writing here"):
            with RunFolder.open(out, overwrite=False, resume=False):
                pass
    assert not out.exists()  # made for the run, left empty: removed


def test_outputs_are_published_as_a_set_summary_last_or_not_at_all(tmp_path):
    folder = RunFolder(tmp_path / "out")

    def write(stage):
        (stage / "summary.json").write_text("{}")
        (stage / "kept.jsonl").write_text("{}\n")
        return "written"

    assert folder.publish(write) == "written"
    assert sorted(p.name for p in folder.path.iterdir()) == ["kept.jsonl", "summary.json"]
    assert folder.finished == {}

    def fail(stage):
        (stage / "removed.jsonl").write_text("{}\n")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        folder.publish(fail)
    assert sorted(p.name for p in folder.path.iterdir()) == ["kept.jsonl", "summary.json"]
