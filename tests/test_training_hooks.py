"""Training dynamics from the user's own training, in allenai/cartography's format, read back
by ``aflite score --dynamics``: a plain PyTorch loop and a Hugging Face Trainer (tiny BERT,
built from a config, trained offline)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import cli

from aflite.scoring.cartography import load_cartography_dynamics
from aflite.training import DynamicsLogger


def test_logger_writes_what_the_loader_reads(tmp_path):
    torch = pytest.importorskip("torch")
    log = DynamicsLogger(tmp_path)
    z = np.array([[2.0, -1.0, 0.0], [0.5, 0.1, 0.2], [0.0, 0.0, 3.0]])
    for epoch in range(3):
        # two batches, one a tensor: rows keep the order they were first logged in
        log.log(["b", "a"], z[:2] * (epoch + 1), [0, 1])
        log.log(np.array(["c"]), torch.as_tensor(z[2:] * (epoch + 1)), torch.tensor([2]))
        assert log.end_epoch().name == f"dynamics_epoch_{epoch}.jsonl"
    first = json.loads(
        (tmp_path / "training_dynamics/dynamics_epoch_0.jsonl").read_text().split("\n")[0]
    )
    assert first == {"guid": "b", "logits_epoch_0": [2.0, -1.0, 0.0], "gold": 0}
    td = load_cartography_dynamics(tmp_path)
    assert td.ids == ["b", "a", "c"] and td.gold.tolist() == [0, 1, 2]
    assert td.logits.shape == (3, 1, 3, 3)
    np.testing.assert_allclose(td.logits[:, 0, 2], z * 3)


def test_logger_rejects_bad_batches(tmp_path):
    log = DynamicsLogger(tmp_path)
    with pytest.raises(ValueError, match="one batch"):
        log.log([1, 2], np.zeros((3, 2)), [0, 1])
    with pytest.raises(ValueError, match="gold 2 of row 1 is not below 2"):
        log.log([1], np.zeros((1, 2)), [2])
    with pytest.raises(ValueError, match="row id must be an int or a string"):
        log.log([1.5], np.zeros((1, 2)), [0])
    log.log([1], np.zeros((1, 2)), [0])
    with pytest.raises(ValueError, match="3 logits per row, earlier 2"):
        log.log([2], np.zeros((1, 3)), [0])
    with pytest.raises(ValueError, match="no rows were logged"):
        DynamicsLogger(tmp_path / "x").end_epoch()


def _tiny_bert_data(n=160, length=8, seed=0):
    """Rows whose label a planted word decides, as token ids of a 40-word vocabulary."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        label = int(i % 2)
        words = [f"w{int(rng.integers(30))}" for _ in range(length - 2)]
        words[int(rng.integers(len(words)))] = "nobody" if label else "someone"
        rows.append({"id": f"r{i}", "text": " ".join(words), "label": ["yes", "no"][label]})
    vocab = {w: i + 2 for i, w in enumerate(sorted({w for r in rows for w in r["text"].split()}))}
    feats = [
        {"id": r["id"], "input_ids": [1] + [vocab[w] for w in r["text"].split()] + [0],
         "attention_mask": [1] * length, "labels": int(r["label"] == "no")}
        for r in rows
    ]  # fmt: skip
    return rows, feats, len(vocab) + 2


@pytest.mark.slow
def test_hf_trainer_callback_feeds_score_dynamics(tmp_path, monkeypatch, capsys):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    datasets = pytest.importorskip("datasets")
    from aflite.training import DynamicsCallback

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rows, feats, vocab_size = _tiny_bert_data()
    config = transformers.BertConfig(
        vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16, num_labels=2,
    )  # fmt: skip
    transformers.set_seed(0)
    model = transformers.BertForSequenceClassification(config)
    train = datasets.Dataset.from_list(feats)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "run"), num_train_epochs=2, per_device_train_batch_size=16,
        learning_rate=1e-3, report_to=[], save_strategy="no", logging_strategy="no",
        disable_tqdm=True, use_cpu=True, seed=0,
    )  # fmt: skip
    callback = DynamicsCallback(train, tmp_path / "dyn", batch_size=50)
    transformers.Trainer(model=model, args=args, train_dataset=train, callbacks=[callback]).train()
    files = sorted(p.name for p in (tmp_path / "dyn/training_dynamics").iterdir())
    assert files == ["dynamics_epoch_0.jsonl", "dynamics_epoch_1.jsonl"]
    td = load_cartography_dynamics(tmp_path / "dyn")
    assert td.ids == [r["id"] for r in rows] and td.logits.shape == (160, 1, 2, 2)
    assert td.gold.tolist() == [int(r["label"] == "no") for r in rows]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = cli(
        "score", data, "--text-fields", "text", "--scorers", "datamap",
        "--dynamics", tmp_path / "dyn", "--out-dir", tmp_path / "scores", "--no-report",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads((tmp_path / "scores/summary.json").read_text())
    assert summary["dynamics"]["epochs"] == 2
    import pandas as pd

    scores = pd.read_parquet(tmp_path / "scores/scores.parquet")
    # confidence is the mean softmax gold probability over the two epochs, as written
    p = td.gold_probability()[:, 0].mean(axis=1)
    np.testing.assert_allclose(scores["confidence"].to_numpy(), p, rtol=1e-5)


def test_callback_checks_its_dataset():
    pytest.importorskip("transformers")
    from aflite.training import DynamicsCallback

    rows = [
        {"input_ids": [1, 2], "labels": 0, "id": 1},
        {"input_ids": [1, 3], "labels": 1, "id": 1},
    ]
    with pytest.raises(ValueError, match="ids must be unique"):
        DynamicsCallback(rows, "x")
    with pytest.raises(ValueError, match="label_column 'gold' is not among"):
        DynamicsCallback(rows, "x", label_column="gold")
    assert DynamicsCallback(rows, "x", ids=["a", "b"]).gold == [0, 1]
