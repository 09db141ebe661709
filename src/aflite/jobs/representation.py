"""The representation step of a job: Phi for the rows to filter, from the job's feature kind,
optionally through a warm-up model trained on the warm-up rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from aflite.features.build import FeatureSpec, build_features
from aflite.features.warmup import warmup_representation
from aflite.io.labelled import LabelledData
from aflite.jobs.plan import FilterJob

__all__ = ["compute_representation", "ray_encoder"]


def ray_encoder(address: str | None) -> Callable[..., np.ndarray]:
    """An ``encode`` callable for :func:`~aflite.features.build.build_features` that embeds
    with Ray Data (the features package itself knows nothing of Ray)."""
    from aflite import distributed

    def encode(texts, model, *, device, progress):
        return distributed.embed_with_ray(texts, model, address=address)

    return encode


def compute_representation(
    job: FilterJob,
    spec: FeatureSpec,
    inputs: LabelledData,
    warm_rows: np.ndarray,
    rest: np.ndarray,
    *,
    progress: bool,
) -> np.ndarray:
    """Phi for the rows to filter (warm-up rows excluded)."""
    from aflite._internal.device import resolve_device
    from aflite._internal.progress import progress_bar
    from aflite.features.cache import default_cache_dir

    device = str(resolve_device(job.device))
    if inputs.choices is not None:
        from aflite.features.choices import choice_features

        with progress_bar("embedding", enabled=progress) as bar:
            x = choice_features(
                spec,
                inputs.choices,
                context=job.choice_context,
                seed=job.seed,
                device=device,
                progress=bar,
                fingerprint=inputs.table.fingerprint(),
                cache_dir=job.cache_dir or str(default_cache_dir()),
            )
        return x if len(rest) == len(x) else x[rest]
    codes = np.unique(inputs.labels, return_inverse=True)[1]
    kind = spec.entry
    if kind.learn is not None:  # Phi learned on the warm-up rows (the image CNN)
        return kind.learn(
            inputs.table.images,
            codes,
            warm_rows,
            rest,
            seed=job.seed,
            device=device,
            progress=progress,
        )
    if job.warmup_finetune:  # checked: the kind has a fine-tune hook
        embed = kind.finetune(spec, inputs.texts, codes, warm_rows, seed=job.seed, device=device)
        return embed({f: [v[i] for i in rest] for f, v in inputs.texts.items()})
    # kinds that embed text call encode; the others ignore it
    encode = ray_encoder(job.ray_address) if job.backend == "ray" else None

    with progress_bar("embedding", enabled=progress) as bar:
        base, _ = build_features(
            spec,
            inputs.texts,
            n_rows=len(inputs.table),
            ids=inputs.ids,
            fingerprint=inputs.table.fingerprint(),
            cache_dir=job.cache_dir or str(default_cache_dir()),
            device=device,
            seed=job.seed,
            progress=bar,
            encode=encode,
        )
    if len(warm_rows) == 0:  # no warm-up
        base = np.asarray(base)
        # rows a reviewer dropped are not filtered: Phi holds the rest only
        return base if len(rest) == len(base) else base[rest]
    return warmup_representation(
        np.asarray(base), codes, warm_rows, rest, seed=job.seed, device=device
    )
