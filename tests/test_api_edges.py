"""The Python API's edges: it takes what the command line takes (``audits=`` as ``aflite
filter --audits``), a misspelt keyword is named with the closest name whatever it was meant
for, its errors name keywords, not flags, and ``aflite.filter`` says first that its defaults
are Algorithm 1's, not the command line's."""

from __future__ import annotations

import json
import pydoc

import numpy as np
import pytest

import aflite
from aflite.data import bundled_snli
from aflite.errors import DataError

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def rows():
    return [json.loads(r) for r in bundled_snli().read_text().splitlines()[:900]]


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    x = rng.normal(size=(400, 8))
    x[:120, 0] = y[:120] * 4.0  # a planted artifact
    return x, y


def test_filter_dataset_runs_the_audits_as_filter_does(rows):
    out = aflite.filter_dataset(rows, label="label", text="hypothesis", audits="pmi,zstats",
                                target_size=0.6, threshold=0.4, min_bias=None)  # fmt: skip
    assert len(out.removed) > 0
    untagged = [[r.name.rsplit(" (", 1)[0] for r in rs] for rs in (out.audits.before,
                                                                    out.audits.after)]  # fmt: skip
    assert untagged[0] == untagged[1]
    assert len(out.audits.before) == 2
    # the same audits of the rows filtered and of the kept rows, as aflite.audit measures them
    kept = aflite.audit(out.kept, label="label", text="hypothesis", audits="pmi",
                        bias_train_size=out.audits.bias_train_size)  # fmt: skip
    assert out.audits.after[0].summary == kept[0].summary
    with pytest.raises(DataError, match=r"^audits: unknown audit 'pmx' .*did you mean 'pmi'"):
        aflite.filter_dataset(rows, label="label", text="hypothesis", audits="pmx")
    assert aflite.filter_dataset(rows[:300], label="label", text="hypothesis").audits is None
    # a matrix and no text: refused before anything is computed, naming the keyword
    x = np.zeros((len(rows), 4), np.float32)
    with pytest.raises(DataError, match=r"^audits: the audits read text; name the text fields "
                       r"with text$"):  # fmt: skip
        aflite.filter_dataset(rows, label="label", features=x, audits="pmi")


@pytest.mark.parametrize(
    "call",
    [
        lambda rows, arrays: aflite.filter(*arrays, sed=0),
        lambda rows, arrays: aflite.filter_dataset(rows, label="label", sed=0),
        lambda rows, arrays: aflite.score_dataset(rows, label="label", sed=0),
        lambda rows, arrays: aflite.audit(rows, label="label", sed=0),
        lambda rows, arrays: aflite.featurize(rows, text="hypothesis", sed=0),
    ],
    ids=["filter", "filter_dataset", "score_dataset", "audit", "featurize"],
)
def test_a_misspelt_argument_gets_its_closest_name(call, rows, arrays):
    with pytest.raises(TypeError, match=r"\bsed; did you mean 'seed'\?"):
        call(rows, arrays)


@pytest.mark.parametrize("fn", ["filter_dataset", "score_dataset", "audit"])
def test_a_misspelt_required_keyword_is_named_not_only_the_missing_one(fn, rows):
    with pytest.raises(TypeError) as e:
        getattr(aflite, fn)(rows, lable="label", text="hypothesis", threshold=0.5)
    assert str(e.value) == (
        f"{fn}() got unexpected option(s): lable; did you mean 'label'?"
        if fn == "filter_dataset"
        else f"{fn}() got unexpected option(s): lable, threshold; did you mean 'label'?"
    )
    with pytest.raises(TypeError, match=rf"^{fn}\(\) missing 1 required keyword-only"):
        getattr(aflite, fn)(rows, text="hypothesis")


def test_filter_is_named_filter_and_says_its_defaults_first(arrays):
    assert "filter" in aflite.__all__ and aflite.filter.__name__ == "filter"
    namespace: dict = {}
    exec("from aflite import *", namespace)
    assert namespace["filter"] is aflite.filter
    page = pydoc.render_doc(aflite.filter, renderer=pydoc.plaintext)
    assert page.startswith("Python Library Documentation: function filter in module ")
    doc = aflite.filter.__doc__.split("\n\n")[0]
    assert "Algorithm 1 as published" in doc and "NOT the command line's" in doc
    assert 'PRESETS["practical"]' in doc
    res = aflite.filter(*arrays, target_size=200, train_size=100, slice_size=20)
    assert repr(res).endswith(
        'options="Algorithm 1\'s defaults with target_size=200, train_size=100, slice_size=20")'
    )
    plain = aflite.filter(*arrays)
    assert repr(plain).endswith(
        "options=\"Algorithm 1's defaults, not the command line's (PRESETS['practical'])\")"
    )
    practical = aflite.filter(*arrays, options=aflite.PRESETS["practical"], target_size=200)
    assert repr(practical).endswith("options=\"PRESETS['practical'] with target_size=200\")")


def test_errors_from_python_name_the_keyword_not_the_flag():
    items = [{"q": f"q{i}", "c": ["a", "b"], "answer": i % 2} for i in range(10)]
    with pytest.raises(DataError, match=r"^drop_labels: applies to class labels"):
        aflite.filter_dataset(pd.DataFrame(items), label="answer", choices="c", context="q",
                              drop_labels=["1"])  # fmt: skip
