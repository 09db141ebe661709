"""One representation Phi for every arm of the compare experiment: the training rows, the dev
set and each out-of-distribution set are represented by the same feature kind, fitted (n-gram
vocabulary, warm-up model) on the training file only. Each distinct text set is embedded once:
in this process by its text fingerprint, across runs through the embedding cache."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from aflite.errors import DataError
from aflite.features.build import build_features, parse_feature_spec

if TYPE_CHECKING:
    from aflite.experiments.sets import LabelledTexts

__all__ = ["SharedRepresentation", "shared_representation"]


@dataclass
class SharedRepresentation:
    """Phi of the training rows that are filtered (``rest``; warm-up rows excluded) and a
    function giving Phi for any other labelled set."""

    phi: np.ndarray
    rest: np.ndarray
    warm_rows: np.ndarray
    represent: Callable[[LabelledTexts], np.ndarray]
    n_embedded: int = 0  # distinct text sets represented so far (for tests and logs)


def shared_representation(
    train: LabelledTexts,
    *,
    features: str = "ngrams",
    warmup_fraction: float | None = None,
    warmup_finetune: bool = False,
    groups: np.ndarray | None = None,
    cache_dir: str | None = None,
    device: str = "cpu",
    seed: int = 0,
) -> SharedRepresentation:
    """Fit the representation on ``train`` and return Phi for its filtered rows.

    ``features`` is any ``--features`` spec for text: ``ngrams[:...]`` (vocabulary from the
    training file), ``sentence-transformers:MODEL`` (embeddings cached in ``cache_dir`` by
    text fingerprint), ``precomputed:FILE`` (a file with ids covering every set; each set
    needs ids). ``warmup_fraction`` trains a warm-up model on that fraction of the training
    rows (whole groups with ``groups``); its hidden layer, or with ``warmup_finetune`` the
    fine-tuned encoder, represents every set, and the warm-up rows are not filtered.
    """
    from aflite.features.registry import FEATURE_KINDS
    from aflite.io.decisions import split_warmup

    spec = parse_feature_spec(features)
    kind = spec.entry
    if kind.needs_images:
        raise DataError(f"features '{features}' need images; compare and ood work on text sets")
    if warmup_finetune and (kind.finetune is None or warmup_fraction is None):
        tunable = " or ".join(k.usage for k in FEATURE_KINDS.values() if k.finetune)
        raise DataError(f"--warmup-finetune needs --features {tunable} and --warmup-fraction")
    fields = list(train.texts)
    if warmup_fraction is not None:
        warm_rows, rest = split_warmup(len(train), warmup_fraction, seed=seed, groups=groups)
        if len(np.unique(train.labels[warm_rows])) < 2:
            raise DataError("the warm-up fraction of the training set holds fewer than two classes")
    else:
        warm_rows, rest = np.zeros(0, dtype=np.int64), np.arange(len(train))
    codes = np.unique(train.labels, return_inverse=True)[1]

    base: Callable[[LabelledTexts], np.ndarray]
    if warmup_finetune:
        embed = kind.finetune(spec, train.texts, codes, warm_rows, seed=seed, device=device)

        def base(d: LabelledTexts) -> np.ndarray:
            return embed(d.texts)
    elif kind.fit is not None:  # fitted on the training set (a vocabulary), applied to all
        vec = kind.fit(spec, train.texts, seed)

        def base(d: LabelledTexts) -> np.ndarray:
            return vec.transform([d.texts[f] for f in fields])
    else:
        if kind.by_id and train.ids is None:
            raise DataError(
                f"features '{features}': compare finds each set's rows in the file by id; "
                "give --id-field (a file with ids covering every set)"
            )

        def base(d: LabelledTexts) -> np.ndarray:
            if kind.by_id and d.ids is None:
                raise DataError(f"features '{features}': a set has no ids; give --id-field")
            x, _ = build_features(
                spec,
                d.texts,
                n_rows=len(d),
                ids=d.ids,
                fingerprint=d.fingerprint(),
                cache_dir=cache_dir,
                device=device,
                seed=seed,
            )
            return np.asarray(x, dtype=np.float32)

    transform: Callable[[LabelledTexts], np.ndarray] = base
    if warmup_fraction is not None and not warmup_finetune:
        from aflite.features.warmup import fit_warmup_head

        x_train = base(train)
        head = fit_warmup_head(x_train, codes, warm_rows, seed=seed, device=device)

        def transform(d: LabelledTexts) -> np.ndarray:
            return head.transform(x_train if d is train else base(d))

    memo: dict[str, np.ndarray] = {}
    out = SharedRepresentation(np.zeros((0, 0)), rest, warm_rows, lambda d: d)  # filled below

    by_id = kind.by_id  # rows found by id: equal texts may differ in Phi

    def represent(d: LabelledTexts) -> np.ndarray:
        key = d.fingerprint(with_ids=by_id)
        if key not in memo:
            memo[key] = transform(d)
            out.n_embedded += 1
        return memo[key]

    out.represent = represent
    out.phi = represent(train)[rest]
    return out
