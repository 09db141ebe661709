"""A toy plug-in of every kind, registered the way docs/architecture.md says, used by name from the
Python API and the command line; then the registry shape itself (errors, aliases, order).

The toys make the answers known: the feature kind gives +1 to rows whose text says "easy"
and -1 to the others; the model family predicts a held-out row correctly exactly when its
feature is positive; the scorer scores the easy rows 1; so every filter removes exactly the
easy rows.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import run_in_process

import aflite
from aflite.algorithm.models import MODELS, PhaseCounts, register_model
from aflite.audits import AUDITS, AuditResult, register_audit, run_audits
from aflite.errors import DataError
from aflite.experiments import compare_experiment
from aflite.experiments.evaluators import EVALUATORS, register_evaluator
from aflite.features.registry import FEATURE_KINDS, register_feature_kind
from aflite.io import FORMATS, RowsTable, read_labelled, read_table, register_format
from aflite.scoring import EXAMPLE_SCORERS, register_example_scorer, score_examples

N, N_EASY = 60, 20


def _rows() -> list[dict]:
    words = ["red", "green", "blue", "grey"]
    return [
        {
            "id": f"r{i}",
            "text": ("easy " if i % 3 == 0 else "") + f"{words[i % 4]} item {i % 5}",
            "label": ["pos", "neg"][(i // 2) % 2],
        }
        for i in range(N)
    ]


EASY_IDS = {r["id"] for r in _rows() if r["text"].startswith("easy")}


class FeatureSignModel:
    """Toy model family: a held-out row is predicted correctly iff its raw feature 0 > 0."""

    def __init__(self, settings=None):
        self.settings = settings

    def attach(self, store, raw, y, n_classes):
        self.store, self.raw = store, raw

    def score(self, train, heldout, current):
        easy = torch.as_tensor(np.asarray(self.raw)[self.store.rows, 0] > 0, dtype=torch.float32)
        return PhaseCounts((heldout * easy[:, None]).sum(dim=1), heldout.sum(dim=1))

    def describe(self):
        return "toy feature-sign model"


class ToyTsv(RowsTable):
    """Toy data format: ``id<TAB>label<TAB>text`` lines."""

    suffix = ".toytsv"

    @classmethod
    def read(cls, path, options):
        with open(path, encoding="utf-8") as fh:
            rows = [
                dict(zip(("id", "label", "text"), line.rstrip("\n").split("\t"))) for line in fh
            ]
        return cls(path, rows, list(range(1, len(rows) + 1)), ["id", "label", "text"])

    def write_subset(self, target, indices, extra=None):
        with open(target, "w", encoding="utf-8") as fh:
            for row in self.rows_with(np.asarray(indices), dict(extra or {})):
                fh.write(f"{row['id']}\t{row['label']}\t{row['text']}\n")
        return target


class MajorityEvaluator:
    """Toy evaluator: predicts the training set's most frequent label everywhere."""

    def __init__(self, name, fields, partial_field, seed):
        self.name = name

    def fit(self, train, phi):
        values, counts = np.unique(train.labels, return_counts=True)
        self.label = values[np.argmax(counts)]
        return self

    def predict(self, data, phi):
        return np.full(len(data.labels), self.label)


@pytest.fixture(scope="module")
def toys():
    """Register one toy plug-in of each kind; unregister them all afterwards."""

    @register_feature_kind(
        "toy-sign", aliases=("ts",), needs_text=True, description="+1 for easy rows, else -1"
    )
    def toy_sign(spec, texts, *, n_rows, **_):
        text = next(iter(texts.values()))
        return np.array([[1.0 if t.startswith("easy") else -1.0] for t in text]), False

    register_model("toy-sign-model", description="the toy feature-sign model", raw_features=True)(
        FeatureSignModel
    )
    register_format("toy-tsv", suffixes=(".toytsv",), description="toy TSV")(ToyTsv)

    @register_audit("toy-count", description="rows per label")
    def toy_count(ctx):
        labels, counts = np.unique(ctx.labels, return_counts=True)
        rows = [[str(a), int(b)] for a, b in zip(labels, counts)]
        return [AuditResult("toy-count", f"{len(ctx.labels)} rows counted", ["label", "n"], rows)]

    @register_example_scorer("toy-easy", description="1 for easy rows", options={"easy_value": 1.0})
    def toy_easy(ctx):
        return {"toy-easy": np.where(ctx.x[:, 0] > 0, ctx.options["easy_value"], 0.0)}

    register_evaluator("toy-majority")(MajorityEvaluator)
    yield
    for registry, name in [
        (FEATURE_KINDS, "toy-sign"), (MODELS, "toy-sign-model"), (FORMATS, "toy-tsv"),
        (AUDITS, "toy-count"), (EXAMPLE_SCORERS, "toy-easy"), (EVALUATORS, "toy-majority"),
    ]:  # fmt: skip
        registry.unregister(name)
        assert name not in registry


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    return path


FAST = ["--n-partitions", "4", "--train-size", "10", "--slice-size", "5", "--min-bias", "off",
        "--no-report", "--quiet", "--device", "cpu"]  # fmt: skip


def _ids(path):
    return {json.loads(line)["id"] for line in path.read_text().splitlines()}


# --- model family and feature kind -----------------------------------------------------------


def test_model_family_and_feature_kind_by_name_from_the_api(toys):
    rows = _rows()
    x = aflite.featurize(rows, text="text", features="ts")  # the alias of toy-sign
    assert x.shape == (N, 1) and set(x[:, 0]) == {1.0, -1.0}
    y = np.array([r["label"] for r in rows])
    result = aflite.filter(
        x, y, model="toy-sign-model", target_size=N - N_EASY, n_partitions=4, train_size=10,
        slice_size=5, device="cpu",
    )  # fmt: skip
    assert sorted(result.kept) == [i for i in range(N) if x[i, 0] < 0]


def test_model_family_and_feature_kind_by_name_from_the_cli(toys, jsonl, tmp_path):
    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(jsonl), "--features", "toy-sign", "--model", "toy-sign-model",
        "--target-size", str(N - N_EASY), "--out-dir", str(out), *FAST,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _ids(out / "removed.jsonl") == EASY_IDS
    summary = json.loads((out / "summary.json").read_text())
    assert summary["options"]["model"] == "toy-sign-model"


def test_unknown_model_or_features_fail_before_any_work(toys, jsonl, tmp_path):
    out = tmp_path / "out"
    r = run_in_process("filter", str(jsonl), "--model", "toy-sign-modl", "--out-dir", str(out))
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.strip().splitlines() == [
        "aflite: error: --model: unknown model family 'toy-sign-modl' (choose from linear, "
        "sklearn, ridge, choice-ridge, choice, toy-sign-model; did you mean "
        "'toy-sign-model'?)"
    ]
    r = run_in_process("filter", str(jsonl), "--features", "toy-sine", "--out-dir", str(out))
    assert r.returncode == 2 and "did you mean 'toy-sign'?" in r.stderr
    with pytest.raises(DataError, match="unknown model family 'toy'"):
        aflite.filter(np.zeros((40, 1)), [0, 1] * 20, model="toy", target_size=20)


# --- data format ---------------------------------------------------------------------------


def test_data_format_by_suffix_and_by_name(toys, tmp_path):
    path = tmp_path / "d.toytsv"
    path.write_text("".join(f"{r['id']}\t{r['label']}\t{r['text']}\n" for r in _rows()))
    table = read_table(path)
    assert table.format == "toy-tsv" and len(table) == N
    assert read_table(path, "toy-tsv").column("id")[:2] == ["r0", "r1"]
    result = aflite.filter_dataset(
        str(path), label="label", text="text", features="toy-sign", model="toy-sign-model",
        target_size=N - N_EASY, n_partitions=4, train_size=10, slice_size=5, min_bias=None,
        device="cpu",
    )  # fmt: skip
    assert len(result.removed) == N_EASY
    with pytest.raises(DataError, match="unknown model family 'toy'"):  # before featurizing
        aflite.filter_dataset(str(path), label="label", text="text", features="toy-sign",
                              model="toy")  # fmt: skip

    out = tmp_path / "out"
    r = run_in_process(
        "filter", str(path), "--input-format", "toy-tsv", "--features", "toy-sign",
        "--model", "toy-sign-model", "--target-size", str(N - N_EASY), "--out-dir", str(out),
        *FAST,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    removed = (out / "removed.toytsv").read_text().splitlines()
    assert {line.split("\t")[0] for line in removed} == EASY_IDS


# --- audit ---------------------------------------------------------------------------------


def test_audit_by_name(toys, jsonl, tmp_path):
    rows = _rows()
    [res] = run_audits({"text": [r["text"] for r in rows]}, [r["label"] for r in rows],
                       audits=["toy-count"])  # fmt: skip
    assert res.summary == f"{N} rows counted"
    assert res.rows == [["neg", N // 2], ["pos", N // 2]]
    [res] = aflite.audit(rows, label="label", text="text", audits=["toy-count"])
    assert res.rows == [["neg", N // 2], ["pos", N // 2]]
    out = tmp_path / "a.json"
    r = run_in_process("audit", str(jsonl), "--text-fields", "text", "--audits", "toy-count",
                       "--json", str(out), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"{N} rows counted" in r.stdout
    r = run_in_process("audit", str(jsonl), "--text-fields", "text", "--audits", "toy-cont")
    assert r.returncode == 2 and r.stderr.startswith("aflite: error: --audits: unknown audit")
    assert r.stderr.strip().endswith("did you mean 'toy-count'?)")


# --- per-example scorer --------------------------------------------------------------------


def test_per_example_scorer_by_name(toys, jsonl, tmp_path):
    x = np.array([[1.0], [-1.0], [2.0], [-3.0]] * 10)
    y = np.array([0, 1] * 20)
    s = score_examples(x, y, scorers=["toy-easy"], easy_value=5.0, device="cpu")
    np.testing.assert_array_equal(s.columns["toy-easy"], np.where(x[:, 0] > 0, 5.0, 0.0))

    out = tmp_path / "scored"
    r = run_in_process("score", str(jsonl), "--features", "toy-sign", "--scorers", "toy-easy",
                       "--out-dir", str(out), "--quiet", "--no-report", "--device", "cpu")  # fmt: skip
    assert r.returncode == 0, r.stderr
    import pyarrow.parquet as pq

    frame = pq.read_table(out / "scores.parquet").to_pandas()
    assert set(frame.loc[frame["toy-easy"] == 1.0, "id"]) == EASY_IDS

    # the fixed-score filter takes it too: the easy rows score highest and go first
    out = tmp_path / "by"
    r = run_in_process("filter", str(jsonl), "--features", "toy-sign", "--by", "toy-easy",
                       "--target-size", str(N - N_EASY), "--out-dir", str(out), *FAST)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _ids(out / "removed.jsonl") == EASY_IDS


# --- evaluator -----------------------------------------------------------------------------


def test_evaluator_by_name(toys, jsonl, tmp_path):
    rows = _rows()
    texts = read_labelled(rows, text="text", id="none")
    dev = read_labelled(texts.subset(np.arange(0, N, 3)), text="text", id="none")
    res = compare_experiment(
        texts, dev, evaluators=["toy-majority"], n_partitions=4, train_size=10, slice_size=5,
        target_size=40, device="cpu",
    )  # fmt: skip
    row = next(r for r in res.to_dict()["rows"] if r["evaluator"] == "toy-majority")
    majority = np.unique(dev.labels, return_counts=True)[1].max() / len(dev)
    assert row["dev"] == pytest.approx(majority)

    out = tmp_path / "c.json"
    r = run_in_process(
        "experiment", "compare", str(jsonl), "--dev", str(jsonl), "--text-fields", "text",
        "--evaluators", "toy-majority", "--n-partitions", "4", "--train-size", "10",
        "--slice-size", "5", "--target-size", "40", "--device", "cpu", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [row["evaluator"] for row in doc["rows"]] == ["toy-majority"] * 3


# --- the registry shape --------------------------------------------------------------------


def test_every_kind_has_the_one_registry_shape():
    from aflite._internal.backends import BACKENDS
    from aflite._internal.registry import Registry
    from aflite.experiments.stress import STRESS_TESTS
    from aflite.exports import EXPORTERS

    for registry in (MODELS, FEATURE_KINDS, FORMATS, AUDITS, EXAMPLE_SCORERS, EVALUATORS,
                     EXPORTERS, STRESS_TESTS, BACKENDS):  # fmt: skip
        assert isinstance(registry, Registry)
        names = registry.names()
        assert names and names == list(registry)
        with pytest.raises(DataError) as e:
            registry.lookup(names[0] + "x")
        msg = str(e.value)
        assert "\n" not in msg and f"did you mean '{names[0]}'?" in msg
        assert all(n in msg for n in registry.usages())


def test_registry_aliases_order_and_unregister():
    MODELS.register("extra", aliases=("x",), description="an extra one")(FeatureSignModel)
    try:
        names = MODELS.names()
        assert names[:2] == ["linear", "sklearn"] and names[-1] == "extra"  # built-ins first
        assert MODELS.lookup("x").name == "extra" and "x" in MODELS
        assert MODELS["x"] is MODELS["extra"]
        assert "extra: an extra one" in MODELS.help().splitlines()
        with pytest.raises(DataError, match=r"^--model: unknown model family 'z' \(choose from"):
            MODELS.lookup("z", flag="--model")
    finally:
        MODELS.unregister("extra")
    assert "x" not in MODELS and "extra" not in MODELS.names()


def test_listing_names_for_help_loads_no_torch():
    import subprocess
    import sys

    code = (
        "import sys; from aflite.features.registry import FEATURE_KINDS; "
        "from aflite.scoring import EXAMPLE_SCORERS; from aflite.audits import AUDITS; "
        "from aflite.io import FORMATS; "
        "[list(r) for r in (FEATURE_KINDS, EXAMPLE_SCORERS, AUDITS, FORMATS)]; "
        "print(sorted({'torch', 'sentence_transformers'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_entry_point_plugins_are_imported_when_a_registry_is_first_read(monkeypatch):
    import aflite.plugins
    from aflite._internal.registry import Entry, Registry

    loaded = []

    class FakeEntryPoint:
        def load(self):
            MODELS.register("from-entry-point")(FeatureSignModel)
            loaded.append(True)

    monkeypatch.setattr(aflite.plugins, "_entry_points_loaded", False)
    monkeypatch.setattr(
        aflite.plugins, "entry_points",
        lambda group: [FakeEntryPoint()] if group == "aflite.plugins" else [],
    )  # fmt: skip
    try:
        fresh = Registry("exporter", entry=Entry)  # its first read loads the entry points
        fresh.names()
        assert loaded == [True] and "from-entry-point" in MODELS
        Registry("audit", entry=Entry).names()
        assert loaded == [True]  # once per process
    finally:
        MODELS.unregister("from-entry-point")


def test_a_backend_registered_by_name_runs_the_filter(planted):
    """A distributed backend is a plug-in too: ``backend="name"`` starts the registered
    factory; here a backend that hands back the local model of the family it is given (a
    ModelFamily). A backend's model runs under the family's own declaration, so it is given
    the block design one process draws: the kept set is one process's."""
    import aflite
    from aflite._internal.backends import BACKENDS, register_backend
    from aflite.algorithm.models import ModelFamily, resolve_model

    started = []

    class Local:
        def phase_model(self, model, family):
            assert isinstance(family, ModelFamily)
            started.append(family.name)
            return resolve_model(family.name if model is None else model)

        def close(self):
            pass

    register_backend("toy-local")(Local)
    try:
        x, y, _ = planted
        kw = dict(target_size=900, seed=0)
        out = aflite.filter(x, y, backend="toy-local", **kw)
        ref = aflite.filter(x, y, **kw)
    finally:
        BACKENDS.unregister("toy-local")
    assert started == ["linear"] and np.array_equal(np.sort(out.kept), np.sort(ref.kept))


def test_a_registry_shows_its_built_ins_before_any_lookup():
    import subprocess
    import sys

    code = "import aflite; print(repr(aflite.MODELS))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("Registry('model': linear, sklearn, ridge, choice-ridge, choice")
