"""``finetune:MODEL``: an encoder fine-tuned end to end with a classification head on each
training set, tested offline on a tiny BERT saved as a local model folder."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from aflite.errors import DataError
from aflite.experiments import compare_experiment
from aflite.experiments.evaluators import check_evaluator, default_evaluators, make_evaluator
from aflite.experiments.finetune_eval import FinetuneOptions, parse_finetune_name
from aflite.io import read_labelled

transformers = pytest.importorskip("transformers")

WORDS = [f"w{i}" for i in range(30)] + ["nobody", "someone", "a", "man"]


def _pairs(n, seed):
    """NLI-like pairs whose label the hypothesis's planted word decides."""
    rng = np.random.default_rng(seed)
    premises, hyps, labels = [], [], []
    for i in range(n):
        label = ["contradiction", "entailment"][i % 2]
        words = [WORDS[int(rng.integers(30))] for _ in range(4)]
        premises.append("a man " + " ".join(words))
        hyps.append(("nobody " if label == "contradiction" else "someone ") + words[0])
        labels.append(label)
    rows = [{"premise": p, "hypothesis": h, "label": y} for p, h, y in zip(premises, hyps, labels)]
    return read_labelled(rows, text=["premise", "hypothesis"])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 2-layer BERT with a 40-token vocabulary, saved with its tokenizer: no download."""
    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizerFast(
        str(folder / "vocab.txt")
    )  # vocab_file in 4.x, vocab in 5.x
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    transformers.set_seed(0)
    transformers.BertModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def test_parse_names(tmp_path):
    assert parse_finetune_name("finetune:all-MiniLM-L6-v2") == FinetuneOptions("all-MiniLM-L6-v2")
    o = parse_finetune_name("finetune:/m/x:epochs=3:lr=3e-5:max_length=32:steps=10:device=cpu")
    assert (o.model, o.epochs, o.lr, o.max_length, o.steps, o.device) == (
        "/m/x", 3, 3e-5, 32, 10, "cpu"
    )  # fmt: skip
    for bad, msg in (
        ("finetune", "name a model"),
        ("finetune:m:epoch=2", "unknown option 'epoch'"),
        ("finetune:m:lr=fast", "lr=fast is not a number"),
        ("finetune:m:epochs=0", "epochs must be positive"),
        ("finetune:m:epochs=1:x", "'x' is not key=value"),
    ):
        with pytest.raises(DataError, match=msg):
            parse_finetune_name(bad)
    with pytest.raises(DataError, match="not a local folder"):
        check_evaluator("finetune:/no/such/model")
    with pytest.raises(DataError, match="has no config.json"):
        check_evaluator(f"finetune:{tmp_path}")
    (tmp_path / "config.json").write_text("{}")
    check_evaluator(f"finetune:{tmp_path}:device=cpu")
    with pytest.raises(DataError, match="unknown device 'tpu'"):
        check_evaluator(f"finetune:{tmp_path}:device=tpu")
    assert "finetune" not in default_evaluators() and "logreg" in default_evaluators()


@pytest.mark.slow
def test_finetuned_model_learns_the_planted_word_and_is_seeded(tiny_model):
    from aflite.experiments.sets import LabelledTexts

    train, dev = LabelledTexts.of(_pairs(240, 0)), LabelledTexts.of(_pairs(100, 1))
    name = f"finetune:{tiny_model}:epochs=3:lr=1e-2:batch_size=16:max_length=16:device=cpu"
    check_evaluator(name)
    fields = ["premise", "hypothesis"]
    a = make_evaluator(name, fields, "hypothesis", 0).fit(train, None)
    pred = a.predict(dev, None)
    assert set(pred) <= {"contradiction", "entailment"}
    assert np.mean(pred == dev.labels) > 0.9
    b = make_evaluator(name, fields, "hypothesis", 0).fit(train, None)
    assert (b.predict(dev, None) == pred).all()
    # one text field is encoded alone: the planted word is in the hypothesis
    h = make_evaluator(name, ["hypothesis"], "hypothesis", 0).fit(train, None)
    assert np.mean(h.predict(dev, None) == dev.labels) > 0.9
    # a fixed step budget: every training set gets exactly that many steps
    c = make_evaluator(f"{name}:steps=2", fields, "hypothesis", 0).fit(
        train.subset(np.arange(10)), None
    )
    assert c.predict(dev, None).shape == (100,)


@pytest.mark.slow
def test_finetune_in_compare_and_ood_cli(tiny_model, tmp_path, monkeypatch, capsys):
    from aflite.cli.main import main

    train, dev = _pairs(200, 0), _pairs(60, 1)

    def write(name, d):
        path = tmp_path / name
        rows = [{"premise": p, "hypothesis": h, "label": str(y)}
                for p, h, y in zip(d.texts["premise"], d.texts["hypothesis"], d.labels)]  # fmt: skip
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path

    ev = f"finetune:{tiny_model}:epochs=1:lr=1e-2:max_length=16:device=cpu"
    out_json = tmp_path / "r.json"
    monkeypatch.setattr(sys, "argv", [
        "aflite", "experiment", "compare", str(write("train.jsonl", train)), "--dev",
        str(write("dev.jsonl", dev)), "--text-fields", "premise,hypothesis", "--evaluators",
        f"logreg,{ev}", "--n-partitions", "8", "--target-size", "0.7", "--json", str(out_json),
    ])  # fmt: skip
    try:
        main()
    except SystemExit as e:
        assert not e.code, capsys.readouterr().err
    doc = json.loads(out_json.read_text())
    rows = [r for r in doc["rows"] if r["evaluator"] == ev]
    assert [r["train"] for r in rows] == ["D", "D_n (random)", "D(Phi) (AFLITE)"]
    assert rows[1]["size"] == rows[2]["size"] < rows[0]["size"]
    assert all(0 <= r["dev"] <= 1 for r in rows)
    with pytest.raises(DataError, match="unknown option 'lrate'"):
        compare_experiment(train, dev, evaluators=[f"finetune:{tiny_model}:lrate=1"])
