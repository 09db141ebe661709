"""The one before/after audit routine: both sets at one t, a random control of the smaller
set's size for the audits that move with size alone, and nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from aflite.audits import run_audits
from aflite.audits.baselines import bias_train_rows
from aflite.audits.before_after import (
    AuditSet,
    audit_before_after,
    bias_with_control,
    random_control,
    sized_audits,
)


@pytest.fixture(scope="module")
def sets():
    from conftest import planted_data

    x, y, _ = planted_data(n=400, share=0.5)
    texts = {"text": [f"row {i} label {v}" if i % 2 else f"row {i}" for i, v in enumerate(y)]}
    before = AuditSet(texts, y, x)
    kept = np.flatnonzero(np.arange(400) % 3 != 0)  # 266 rows
    return before, before.subset(kept)


def test_sets_are_measured_at_one_t_beside_a_control_of_the_smaller_size(sets):
    before, after = sets
    got = audit_before_after(before, after, audits=["pmi", "knn", "bias"], seed=3,
                             before_tag="input", after_tag="compare", min_count=5)  # fmt: skip
    t = bias_train_rows([len(before), len(after)])
    assert got.bias_train_size == t
    rows = random_control(len(before), len(after), seed=3)
    np.testing.assert_array_equal(got.control_rows, rows)
    # each set's results are what run_audits gives for that set, tag and t
    for results, data, tag, names in (
        (got.before, before, "input", ["pmi", "knn", "bias"]),
        (got.after, after, "compare", ["pmi", "knn", "bias"]),
        (got.control, before.subset(rows), "random subset of input, 266 rows", ["knn", "bias"]),
    ):
        want = run_audits(data.texts, data.labels, audits=names, features=data.features, seed=3,
                          tag=tag, bias_train_size=t, min_count=5)  # fmt: skip
        assert [r.to_dict() for r in results] == [w.to_dict() for w in want]
    bias = [r for r in got.before + got.after + got.control if "representation" in r.name]
    assert len(bias) == 3 and {r.details["train_size"] for r in bias} == {t}


def test_no_control_when_asked_for_none_the_second_set_is_larger_or_no_sized_audit(sets):
    before, after = sets
    for b, a, names, control in (
        (before, after, ["knn"], False),
        (after, before, ["knn"], True),
        (before, after, ["pmi"], True),
    ):
        got = audit_before_after(b, a, audits=names, control=control, min_count=5)
        assert got.control == [] and got.control_rows is None
        assert len(got.before) == len(got.after) == 1


def test_one_set_alone_gets_the_default_t_of_its_size(sets):
    before, _ = sets
    got = audit_before_after(before, audits=["bias"], before_tag="")
    assert got.after == [] and got.bias_train_size == bias_train_rows([len(before)])
    assert got.before[0].name == "representation bias"


def test_the_filter_bias_control_draws_the_same_subset_as_given(sets):
    import aflite

    before, _ = sets
    res = aflite.filter(before.features, before.labels, target_size=300, train_size=60,
                        slice_size=40, n_partitions=8, progress=False)  # fmt: skip
    drawn = bias_with_control(before.features, before.labels, res, seed=1)
    rows = random_control(len(before), len(res.kept), seed=1)
    given = bias_with_control(before.features, before.labels, res, rows, seed=1)
    assert drawn == given and drawn["size"] == len(res.kept) and drawn["train_size"] == 60


def test_the_audits_a_control_is_run_for_are_declared_by_their_entries():
    from aflite.audits import AUDITS

    assert sized_audits(list(AUDITS)) == ["knn", "bias"]
    with pytest.raises(ValueError, match="unknown audit 'knnn'.*did you mean 'knn'"):
        sized_audits(["knnn"])
