"""The model-family contract: a family declares what the filter reads in its one registry
entry (models/contract.py's ModelFamily), and a built-in family is one sub-package plus one
line of aflite.plugins. A toy family added that way is usable from the command line, the
Python API and filter_dataset, is refused on multiple-choice items in one line (it declares
no items variant), and is one the documentation must list; the built-ins are listed there."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_in_process

import aflite
from aflite import plugins
from aflite.algorithm import FilterOptions
from aflite.algorithm.models import MODELS, UNREGISTERED, phase_model

DOCS = Path(__file__).resolve().parents[1] / "docs" / "algorithm.md"
N, N_EASY = 60, 20

# The whole family: one sub-package whose module registers it (the "registry line" is its
# name in aflite.plugins). A held-out row is predicted correctly iff its raw feature 0 > 0.
TOY_FAMILY = '''
"""A toy model family."""

import numpy as np
import torch

from aflite.algorithm.models import PhaseCounts, register_model


class ToyModel:
    def __init__(self, settings=None):
        self.settings = settings

    def attach(self, store, raw, y, n_classes):
        self.store, self.raw = store, raw

    def score(self, train, heldout, current):
        easy = np.asarray(self.raw)[self.store.rows, 0] > 0
        easy = torch.as_tensor(easy, dtype=torch.float32)
        return PhaseCounts((heldout * easy[:, None]).sum(dim=1), heldout.sum(dim=1))

    def describe(self):
        return "toy"


@register_model("toy", description="the toy family of one sub-package", raw_features=True)
def toy(settings):
    return ToyModel(settings)
'''


def documented_families() -> set[str]:
    """The families docs/algorithm.md lists under "Model families" (``- `name`: ...``)."""
    section = DOCS.read_text(encoding="utf-8").split("## Model families", 1)[1].split("\n## ")[0]
    return set(re.findall(r"^- `([\w-]+)`", section, flags=re.M))


def undocumented_families() -> list[str]:
    return [name for name in MODELS if name not in documented_families()]


@pytest.fixture
def toy_family(tmp_path, monkeypatch):
    """The toy family as a built-in: its sub-package on the path and its one line in
    aflite.plugins, loaded as the registry loads its built-ins."""
    (tmp_path / "toy_family").mkdir()
    (tmp_path / "toy_family" / "__init__.py").write_text(TOY_FAMILY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(plugins.BUILTINS, "model", (*plugins.BUILTINS["model"], "toy_family"))
    plugins.load_builtins("model")
    yield MODELS["toy"]
    MODELS.unregister("toy")
    sys.modules.pop("toy_family", None)
    importlib.invalidate_caches()


def _rows() -> list[dict]:
    return [
        {"id": f"r{i}", "x": 1.0 if i % 3 == 0 else -1.0, "label": ["a", "b"][(i // 2) % 2]}
        for i in range(N)
    ]


EASY = {r["id"] for r in _rows() if r["x"] > 0}
SIZES = dict(n_partitions=4, train_size=10, slice_size=5, min_bias=None, device="cpu")


def test_the_toy_family_declares_itself_with_the_contracts_defaults(toy_family):
    assert toy_family.raw_features and not toy_family.blocks and not toy_family.exact
    assert toy_family.n_partitions == 64 and toy_family.fits == "rows"
    assert toy_family.items is None and toy_family.store is None and toy_family.chance is None
    family, model = phase_model("toy")
    assert family is toy_family and model.describe() == "toy"


def test_the_toy_family_from_the_python_api(toy_family):
    x = np.array([[r["x"]] for r in _rows()])
    y = np.array([r["label"] for r in _rows()])
    res = aflite.filter(x, y, model="toy", target_size=N - N_EASY, **SIZES)
    assert sorted(res.kept) == [i for i in range(N) if x[i, 0] < 0]
    assert res.params["model_family"] == "toy"
    out = aflite.filter_dataset(
        _rows(), label="label", features=x, model="toy", target_size=N - N_EASY, **SIZES
    )
    assert {r["id"] for r in out.removed} == EASY


def test_the_toy_family_from_the_command_line(toy_family, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    np.save(tmp_path / "x.npy", np.array([[r["x"]] for r in _rows()]))
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(data), "--features", f"precomputed:{tmp_path / 'x.npy'}", "--model", "toy",
        "--target-size", str(N - N_EASY), "--n-partitions", "4", "--train-size", "10",
        "--slice-size", "5", "--min-bias", "off", "--no-report", "--quiet", "--device", "cpu",
        "--out-dir", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    removed = {json.loads(line)["id"] for line in (out / "removed.jsonl").read_text().splitlines()}
    assert removed == EASY
    # the --model help lists the registry's families, the toy with its description (the
    # command line makes its help when it is first imported: here, before the toy came)
    model_help = str(FilterOptions.__dataclass_fields__["model"].metadata["help"])
    assert "toy: the toy family of one sub-package" in model_help
    # the help wraps at a hyphen ("choice-" / "ridge:"): join those back
    shown = " ".join(run_in_process("filter", "--help").stdout.split()).replace("- ", "-")
    assert all(f"{name}:" in shown for name in MODELS if name != "toy")


def test_multiple_choice_items_to_a_family_without_an_items_variant_are_one_line(
    toy_family, tmp_path
):
    items = np.random.default_rng(0).normal(size=(40, 3, 4))
    answers = np.zeros(40, dtype=np.int64)
    with pytest.raises(ValueError) as e:
        aflite.filter(items, answers, model="toy", target_size=30, train_size=10)
    assert str(e.value).startswith("model family 'toy' fits no multiple-choice items")
    assert "\n" not in str(e.value) and "linear, ridge, choice-ridge, choice" in str(e.value)
    data = tmp_path / "items.jsonl"
    rows = [{"c": [f"w{i}", f"v{i % 3}", "u"], "answer": i % 3} for i in range(40)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = run_in_process(
        "filter", str(data), "--choices-field", "c", "--label-field", "answer", "--model",
        "toy", "--target-size", "30", "--train-size", "10", "--no-report", "--quiet",
        "--device", "cpu", "--out-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("aflite: error: model family 'toy' fits no multiple-choice items")
    assert r.stderr.count("\n") == 1


def test_the_documentation_lists_every_family_and_a_new_one_must_be_added(toy_family):
    assert undocumented_families() == ["toy"]


def test_the_documentation_lists_every_built_in_family():
    assert undocumented_families() == []
    assert {"linear", "ridge", "choice", "choice-ridge", "sklearn"} <= documented_families()


def test_a_model_given_as_is_runs_with_the_contracts_defaults():
    class Constant:
        """Predicts every held-out row right: every score is 1."""

        def attach(self, store, raw, y, n_classes):
            self.store = store

        def score(self, train, heldout, current):
            from aflite.algorithm.models import PhaseCounts

            return PhaseCounts(heldout.sum(dim=1), heldout.sum(dim=1))

        def describe(self):
            return "constant"

    model = Constant()
    assert phase_model(model) == (UNREGISTERED, model)
    x = np.random.default_rng(0).normal(size=(80, 3))
    res = aflite.filter(x, np.arange(80) % 2, model=model, target_size=60, **SIZES)
    assert res.params["model_family"] is None and res.history[0].representation_bias == 1.0


def test_the_exact_familys_auto_partitions_fall_as_the_rows_grow():
    """512 partitions up to 50,000 rows; then fewer, so a phase's held-out work (N x m) stays
    near that of 512 partitions of 50,000 rows; never below logistic regression's 64."""
    from aflite.algorithm.loop.predictability import phase_model_for

    def m(n):
        return phase_model_for("ridge", "auto", 10, (n, 8))[2]

    assert [m(n) for n in (300, 50_000, 50_001, 100_000, 200_000, 550_000, 10**9)] == [
        512, 512, 256, 256, 128, 64, 64,
    ]  # fmt: skip
    assert phase_model_for("ridge", 1024, 10, (10**6, 8))[2] == 1024  # a given m is kept
    # parts of more rows than features: d x d factorisations, whose cost grows as d^3
    assert [phase_model_for("ridge", "auto", 2000, (20_000, d))[2] for d in (512, 768, 1024)] == [
        512, 128, 64,
    ]  # fmt: skip
    assert phase_model_for("ridge", "auto", 600, (6000, 1024))[2] == 512  # t <= d: the dual
    assert phase_model_for("linear", "auto", 10, (300, 8))[2] == 64
    assert MODELS["ridge"].partitions_for(100_000) == 256
