"""Ray backend: embeddings with Ray Data, and each phase's partition ensemble spread over Ray
actors.

The driver draws every partition exactly as the single-process filter does (same generator);
each actor holds the working feature matrix (sent once, and again only after the set is
compacted) and fits a slice of the partitions' columns. Correct-prediction counts are integers,
so summing the actors' results is exact; scores can differ from a single process only where a
prediction sits within float rounding of a tie (matrix products blocked differently).

Point it at a cluster with ``RayBackend(address="auto")`` on a cluster node, or
``address="ray://HEAD:10001"`` from outside (or set ``RAY_ADDRESS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from aflite._internal.backends import register_backend

__all__ = ["RayBackend", "embed_with_ray"]


def _ray():
    try:
        import ray
    except ImportError:
        from aflite.errors import MissingExtraError

        raise MissingExtraError("the Ray backend needs: pip install 'aflite[ray]'") from None
    return ray


class _ShardWorker:
    """Holds the working matrix (standardised); fits a subset of partition columns on request."""

    def __init__(self, threads: int) -> None:
        torch.set_num_threads(max(1, threads))
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def attach(self, data: np.ndarray, y: np.ndarray, n_classes: int, chunk_rows: int) -> bool:
        from aflite.algorithm.numerics.store import FeatureStore

        self.store = FeatureStore.from_standardised(np.array(data), self.device, chunk_rows)
        self.y = torch.as_tensor(y, device=self.device)
        self.n_classes = n_classes
        return True

    def score(self, train: np.ndarray, heldout: np.ndarray, current: np.ndarray, model: Any):
        from aflite.algorithm.models import family_of

        dev = self.device
        phase = family_of(model).target(model)  # the family's own model, on these columns
        phase.attach(self.store, None, self.y, self.n_classes)
        counts = phase.score(*(torch.as_tensor(a, device=dev) for a in (train, heldout, current)))
        return counts.correct.cpu().numpy(), counts.heldout.cpu().numpy(), counts.info


class RayBackend:
    """Spread each phase's partitions over ``n_workers`` Ray actors.

    Parameters
    ----------
    n_workers:
        Actors (each fits ``n_partitions / n_workers`` classifiers per phase).
    address:
        Ray cluster address; None starts or joins a local instance.
    num_cpus_per_worker, num_gpus_per_worker:
        Resources each actor asks for.
    """

    def __init__(
        self,
        n_workers: int = 2,
        *,
        address: str | None = None,
        num_cpus_per_worker: float = 1,
        num_gpus_per_worker: float = 0,
    ) -> None:
        if n_workers < 1:
            raise ValueError(f"n_workers must be >= 1, got {n_workers}")
        self.n_workers = n_workers
        self.address = address
        self.num_cpus = num_cpus_per_worker
        self.num_gpus = num_gpus_per_worker
        self._actors: list[Any] = []

    def _start(self) -> None:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)
        cls = ray.remote(num_cpus=self.num_cpus, num_gpus=self.num_gpus)(_ShardWorker)
        self._actors = [cls.remote(int(self.num_cpus)) for _ in range(self.n_workers)]

    def phase_model(self, model: Any, family: str = "ridge") -> RayModel:
        """The :class:`~aflite.algorithm.models.Model` that runs ``model`` (a family's
        settings; None: ``family``'s defaults) on this cluster."""
        return RayModel(self, model, family)

    def close(self) -> None:
        ray = _ray()
        for a in self._actors:
            ray.kill(a)
        self._actors = []


class RayModel:
    """A family's models with each phase's partition columns split over the actors.

    The driver draws every partition exactly as the single-process filter does; correct-
    prediction counts are integers, so summing the actors' results is exact.
    """

    def __init__(self, backend: RayBackend, model: Any, family: str = "ridge") -> None:
        from aflite.algorithm import LinearEnsemble, RidgeEnsemble

        if model is None:
            model = {"linear": LinearEnsemble, "ridge": RidgeEnsemble}[family]()
        self.backend, self.model = backend, model

    def attach(self, store: Any, raw: np.ndarray, y: torch.Tensor, n_classes: int) -> None:
        """Send the standardised working matrix to every actor (shared-memory object store
        on one node)."""
        ray = _ray()
        if not self.backend._actors:
            self.backend._start()
        ref = ray.put(store.standardised().detach().cpu().numpy())
        ray.get(
            [
                a.attach.remote(ref, y.cpu().numpy(), n_classes, store.chunk_rows)
                for a in self.backend._actors
            ]
        )

    def score(self, train: torch.Tensor, heldout: torch.Tensor, current: torch.Tensor):
        from aflite.algorithm.models import PhaseCounts

        ray = _ray()
        actors = self.backend._actors
        cols = np.array_split(np.arange(train.shape[1]), min(len(actors), train.shape[1]))
        tr, ho, cur = train.cpu().numpy(), heldout.cpu().numpy(), current.cpu().numpy()
        futures = [
            actor.score.remote(
                np.ascontiguousarray(tr[:, c]), np.ascontiguousarray(ho[:, c]), cur, self.model
            )
            for actor, c in zip(actors, cols)
        ]
        parts = ray.get(futures)
        correct = torch.as_tensor(sum(p[0] for p in parts), device=train.device)
        held = torch.as_tensor(sum(p[1] for p in parts), device=train.device)
        # the least converged actor's report (an exact family's are alike)
        worst = max(parts, key=lambda p: p[2].get("residual", 0.0))[2]
        return PhaseCounts(correct, held, worst, tol=getattr(self.model, "tol", None))

    def describe(self) -> str:
        return f"{self.model!r} on Ray ({self.backend.n_workers} workers)"


class _Encoder:
    def __init__(self, model: str) -> None:
        from aflite.features.encoders import load_encoder

        self.st = load_encoder(model, "cuda" if torch.cuda.is_available() else "cpu")

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        emb = self.st.encode(
            list(batch["text"]),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return {"i": batch["i"], "emb": emb.astype(np.float32)}


def embed_with_ray(
    texts: Sequence[str],
    model: str,
    *,
    batch_size: int = 256,
    concurrency: int | None = None,
    num_gpus: float | None = None,
    address: str | None = None,
) -> np.ndarray:
    """Embed ``texts`` with a sentence-transformers model over Ray Data (``map_batches`` with
    one encoder actor per worker; GPU actors when the cluster has GPUs). Rows come back in
    input order."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    resources = ray.cluster_resources()
    gpus = num_gpus if num_gpus is not None else (1 if resources.get("GPU", 0) >= 1 else 0)
    workers = concurrency or max(
        1, int(resources.get("GPU", 0)) if gpus else int(resources.get("CPU", 1))
    )
    ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
    out = ds.map_batches(
        _Encoder,
        fn_constructor_kwargs={"model": model},
        batch_size=batch_size,
        concurrency=workers,
        num_gpus=gpus,
        batch_format="numpy",
    )
    idx, embs = [], []
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        idx.append(batch["i"])
        embs.append(batch["emb"])
    order = np.argsort(np.concatenate(idx))
    return np.concatenate(embs)[order]


@register_backend("ray", description="partitions and embeddings on a Ray cluster")
def _start_ray_backend(address: str | None = None) -> RayBackend:
    return RayBackend(address=address)
