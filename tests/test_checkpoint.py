"""Checkpoints under a manifest: a resume continues only its own run, from files that hash
right, and a kill between any two writes leaves a loadable checkpoint."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import planted_data

import aflite
from aflite.errors import DataError
from aflite.io.checkpoint import Checkpoint

ID = {"input": "a.jsonl", "fingerprint": "f1", "seed": 0}


def _states(tmp_path):
    """The FilterStates an uninterrupted run passes to its checkpoint callback."""
    x, y, _ = planted_data(n=400)
    seen = []
    res = aflite.filter(
        x,
        y,
        target_size=200,
        train_size=80,
        slice_size=30,
        n_partitions=8,
        seed=0,
        checkpoint=lambda s: seen.append(
            aflite.algorithm.FilterState(
                **{
                    **s.__dict__,
                    "rows": s.rows.copy(),
                    "removed": list(s.removed),
                    "removed_phase": list(s.removed_phase),
                    "removed_score": list(s.removed_score),
                    "history": list(s.history),
                }
            )
        ),
    )
    return x, y, res, seen


def test_state_round_trips_and_older_state_files_go(tmp_path):
    x, y, res, seen = _states(tmp_path)
    assert len(seen) >= 2
    ck = Checkpoint(tmp_path / "ck", ID)
    ck.start(x)
    assert Checkpoint(tmp_path / "ck", ID).load()[1] is None  # killed inside phase 0
    for s in seen:
        ck.save(s)
    phi, state = Checkpoint(tmp_path / "ck", ID).load()
    np.testing.assert_array_equal(phi, x)
    np.testing.assert_array_equal(state.rows, seen[-1].rows)
    assert state.removed == seen[-1].removed and len(state.history) == len(seen[-1].history)
    names = sorted(p.name for p in (tmp_path / "ck").iterdir())
    n = len(seen[-1].history)
    assert names == sorted(["features.npy", "manifest.json", f"state-{n}.json", f"state-{n}.npz"])


def test_a_fresh_start_clears_another_runs_state(tmp_path):
    x, _, _, seen = _states(tmp_path)
    old = Checkpoint(tmp_path / "ck", ID)
    old.start(x)
    old.save(seen[-1])
    fresh = Checkpoint(tmp_path / "ck", {**ID, "seed": 5})
    fresh.start(x)
    assert fresh.load()[1] is None
    assert not list((tmp_path / "ck").glob("state-*"))


def test_a_kill_between_writes_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    x, _, _, seen = _states(tmp_path)
    ck = Checkpoint(tmp_path / "ck", ID)
    ck.start(x)
    ck.save(seen[0])

    def killed(**_):
        raise KeyboardInterrupt

    # the state files of the next phase are written, the manifest is not
    monkeypatch.setattr(ck, "_write_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        ck.save(seen[1])
    phi, state = Checkpoint(tmp_path / "ck", ID).load()
    assert len(state.history) == len(seen[0].history)


@pytest.mark.parametrize(
    "damage, message",
    [
        (
            lambda d: (d / "manifest.json").write_text('{"identity": '),
            "damaged checkpoint manifest",
        ),
        (lambda d: (d / "features.npy").write_bytes(b"\x93NUMPY tampered"), "does not match"),
        (lambda d: next(d.glob("state-*.npz")).unlink(), "missing or does not match"),
        (
            lambda d: (d / "manifest.json").write_text(
                json.dumps(
                    {
                        **json.loads((d / "manifest.json").read_text()),
                        "files": {"../outside.npy": "0" * 64},
                    }
                )
            ),
            "names '../outside.npy', not a file of this checkpoint",
        ),
    ],
)
def test_damaged_or_tampered_checkpoints_are_refused_in_one_line(tmp_path, damage, message):
    x, _, _, seen = _states(tmp_path)
    ck = Checkpoint(tmp_path / "ck", ID)
    ck.start(x)
    ck.save(seen[0])
    damage(tmp_path / "ck")
    with pytest.raises(DataError, match=message) as err:
        Checkpoint(tmp_path / "ck", ID).load()
    assert "\n" not in str(err.value)


def test_another_runs_checkpoint_is_refused_and_no_checkpoint_is_none(tmp_path):
    x, _, _, _ = _states(tmp_path)
    assert Checkpoint(tmp_path / "ck", ID).load() is None
    Checkpoint(tmp_path / "ck", ID).start(x)
    with pytest.raises(DataError, match="belongs to another input or other options"):
        Checkpoint(tmp_path / "ck", {**ID, "seed": 1}).load()


def _tamper(d, **changes):
    doc = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps({**doc, **changes}))


OUTSIDE = [
    ({"phase": "x/../../../outside_state"}, "phase 'x/../../../outside_state' is not a phase"),
    ({"phase": True}, "phase True is not a phase number"),
    ({"phase": -1}, "phase -1 is not a phase number"),
    ({"files": {"features.npy": "0" * 64, "x/../../outside": "0" * 64}}, "names 'x/../../outside'"),
    ({"files": {"features.npy": "0" * 64, "/etc/passwd": "0" * 64}}, "names '/etc/passwd'"),
    ({"files": {"features.npy": "0" * 64, "sub/state-1.npz": "0" * 64}}, "names 'sub/state-1.npz'"),
    ({"files": {"features.npy": "0" * 64, "state-1\\x.npz": "0" * 64}}, "not a file of this"),
    ({"files": {"features.npy": ["not", "a", "digest"]}}, "names 'features.npy'"),
    ({"files": {}}, "does not list features.npy"),
]


@pytest.mark.parametrize("changes, message", OUTSIDE)
def test_a_manifest_naming_anything_but_its_own_files_is_refused(tmp_path, changes, message):
    x, _, _, seen = _states(tmp_path)
    ck = Checkpoint(tmp_path / "ck", ID)
    ck.start(x)
    ck.save(seen[0])
    # a state that would load, planted outside the checkpoint folder
    for suffix in ("npz", "json"):
        (tmp_path / f"outside_state.{suffix}").write_bytes(
            next((tmp_path / "ck").glob(f"state-*.{suffix}")).read_bytes()
        )
    _tamper(tmp_path / "ck", **changes)
    with pytest.raises(DataError, match="damaged checkpoint manifest") as err:
        Checkpoint(tmp_path / "ck", ID).load()
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_tampered_manifest_is_one_line_on_resume_through_the_command_line(tmp_path):
    from conftest import run_in_process

    from aflite.data import bundled_snli

    src = tmp_path / "in.jsonl"
    src.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:200]))
    out = tmp_path / "out"
    args = ["filter", str(src), "--text-fields", "hypothesis", "--target-size", "150",
            "--slice-size", "10", "--n-partitions", "8", "--out-dir", str(out), "--quiet",
            "--no-report"]  # fmt: skip
    from aflite.jobs import FilterJob, run_filter_job

    job = FilterJob(input=str(src), text=["hypothesis"], target_size=150, slice_size=10,
                    n_partitions=8, out_dir=str(out), report=False)  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        run_filter_job(job, progress=False, log=lambda s: None, stop_after_phases=1)
    _tamper(out / ".checkpoint", phase="x/../../../outside_state")
    r = run_in_process(*args, "--resume")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("aflite: error: ") and r.stderr.count("\n") == 1
    assert "damaged checkpoint manifest" in r.stderr and "--resume" in r.stderr
    assert not (out / "summary.json").exists()


def test_a_checkpoint_of_an_earlier_format_is_refused_by_name(tmp_path):
    from aflite.io.checkpoint import MANIFEST

    x = np.zeros((10, 3), dtype=np.float32)
    ck = Checkpoint(tmp_path / "ck", {"run": 1})
    ck.start(x)
    manifest = tmp_path / "ck" / MANIFEST
    doc = json.loads(manifest.read_text())
    del doc["format"]  # as the earlier version wrote it
    manifest.write_text(json.dumps(doc))
    with pytest.raises(DataError, match="written by an earlier version of aflite"):
        Checkpoint(tmp_path / "ck", {"run": 1}).load()
