"""How settled a removed set is, measured: ``check_seed`` runs the filter again with another
seed and records how many of the removed rows it removed too. Checked against two separate
runs, through the API, ``filter_dataset`` and the command line, and refused where it cannot
mean anything."""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import cli, planted_data

import aflite
from aflite.data import bundled_snli

OPTS = dict(target_size=600, train_size=300, slice_size=100, threshold=0.5, n_partitions=16)


def test_the_check_is_the_jaccard_index_of_two_separate_runs():
    x, y, _ = planted_data(n=1200)
    res = aflite.adversarial_filter(x, y, seed=3, check_seed=8, **OPTS)
    first = aflite.adversarial_filter(x, y, seed=3, **OPTS)
    other = aflite.adversarial_filter(x, y, seed=8, **OPTS)
    # the checked run's own result is the one the seed gives without the check
    assert res.fingerprint() == first.fingerprint()
    a, b = set(first.removed.tolist()), set(other.removed.tolist())
    check = res.params["seed_check"]
    assert check["seed"] == 8
    assert check["removed"] == len(b)
    assert check["removed_by_both"] == len(a & b)
    assert check["jaccard"] == pytest.approx(len(a & b) / len(a | b))
    assert check["kept_fingerprint"] == other.fingerprint()
    # the planted rows are what both seeds remove: far from two unrelated draws
    assert 0.5 < check["jaccard"] <= 1.0


def test_the_features_are_not_changed_by_the_check():
    x, y, _ = planted_data(n=900)
    before = x.copy()
    aflite.adversarial_filter(x, y, seed=0, check_seed=1, copy=False, **OPTS)
    assert (x == before).all()


@pytest.mark.parametrize("bad", [0, True, 1.5, "1"])
def test_a_check_seed_that_is_the_seed_or_not_a_whole_number_is_refused(bad):
    x, y, _ = planted_data(n=300)
    with pytest.raises(ValueError, match="check_seed"):
        aflite.adversarial_filter(x, y, seed=0, check_seed=bad, **OPTS)


def test_the_deprecated_expected_overlap_reads_the_measured_check():
    x, y, _ = planted_data(n=900)
    res = aflite.adversarial_filter(x, y, seed=0, check_seed=1, **OPTS)
    with pytest.warns(DeprecationWarning, match="check_seed"):
        assert res.expected_overlap == res.params["seed_check"]["jaccard"]
    plain = aflite.adversarial_filter(x, y, seed=0, **OPTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert plain.expected_overlap != plain.expected_overlap  # NaN without a check


ARGS = ("--text-fields", "premise,hypothesis", "--id-field", "id", "--target-size", "450",
        "--train-size", "150", "--slice-size", "60", "--threshold", "0.5", "--min-bias", "off",
        "--n-partitions", "8", "--no-report", "--quiet")  # fmt: skip


@pytest.fixture
def snli_600(tmp_path):
    path = tmp_path / "snli.jsonl"
    path.write_text("".join(bundled_snli().read_text().splitlines(keepends=True)[:600]))
    return path


def test_the_command_line_prints_and_records_the_check(tmp_path, snli_600):
    out = tmp_path / "out"
    code, stdout, stderr = cli("filter", snli_600, *ARGS, "--check-seed", 5, "--out-dir", out)
    assert code == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    check = summary["seed_check"]
    assert check["seed"] == 5 and 0 <= check["removed_by_both"] <= check["removed"]
    assert "seed_check" not in summary["parameters"]
    assert (
        f"| another seed | seed 5 removed {check['removed']:,} rows"
        in (out / "card.md").read_text()
    )
    lines = stdout.splitlines()  # among the result's lines, after the fingerprint it qualifies
    after = lines[[i for i, line in enumerate(lines) if "fingerprint" in line][0] + 1]
    assert after == (
        f"seed check: seed 5 removed {check['removed']:,} rows, {check['removed_by_both']:,} "
        f"of them also removed by this run (removed-set Jaccard {check['jaccard']:.3f})"
    )
    # the second seed's run, on its own, keeps the set the check says it keeps
    again = tmp_path / "again"
    code, _, stderr = cli("filter", snli_600, *ARGS, "--seed", 5, "--out-dir", again)
    assert code == 0, stderr
    alone = json.loads((again / "summary.json").read_text())
    assert alone["kept_fingerprint"] == check["kept_fingerprint"]
    assert alone.get("seed_check") is None


def test_the_command_line_refuses_the_runs_own_seed_at_once(tmp_path, snli_600):
    out = tmp_path / "out"
    code, stdout, stderr = cli(
        "filter", snli_600, *ARGS, "--seed", 4, "--check-seed", 4, "--out-dir", out
    )
    assert code != 0
    assert "--check-seed" in stderr and "4" in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_filter_dataset_takes_the_check(snli_600):
    kw = dict(text=["premise", "hypothesis"], label="label", id="id", target_size=450,
              train_size=150, slice_size=60, threshold=0.5, min_bias=None, n_partitions=8,
              score_kept=False)  # fmt: skip
    res = aflite.filter_dataset(str(snli_600), check_seed=2, **kw)
    other = aflite.filter_dataset(str(snli_600), seed=2, **kw)
    assert res.result.params["seed_check"]["kept_fingerprint"] == other.fingerprint
    with pytest.raises(ValueError, match="check_seed"):
        aflite.filter_dataset(str(snli_600), check_seed=0, **kw)
