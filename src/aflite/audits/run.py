"""Run a set of audits over one data set: the API behind ``aflite audit``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aflite.audits.base import AuditResult

__all__ = ["AUDITS", "run_audits"]

AUDITS = ("pmi", "zstats", "identity", "partial", "ppmi", "knn", "bias")


def run_audits(
    texts: dict[str, Sequence[str]],
    labels: Sequence[Any],
    *,
    field: str | None = None,
    audits: Sequence[str] = AUDITS,
    features: np.ndarray | None = None,
    min_count: int = 20,
    identity_min_count: int | Sequence[int] | str = (10, 100),
    identity_words: dict[str, str] | None = None,
    dedupe_sentences: bool = True,
    tokenizer: str = "regex",
    plot_dir: str | Path | None = None,
    counts_path: str | Path | None = None,
    seed: int = 0,
    tag: str = "",
) -> list[AuditResult]:
    """Run ``audits`` (names from ``AUDITS``). Word audits use ``field`` (default: the last
    text field, e.g. the hypothesis); identity PMI reports each text field and all of them
    together at each of ``identity_min_count`` (saved to ``counts_path`` at the lowest);
    ``knn`` and ``bias`` use ``features`` (computed from n-grams of all fields if None)."""
    unknown = [a for a in audits if a not in AUDITS]
    if unknown:
        raise ValueError(f"unknown audit(s) {', '.join(unknown)}: choose from {', '.join(AUDITS)}")
    fields = list(texts)
    field = field or fields[-1]
    if field not in texts:
        raise ValueError(f"field '{field}' is not among the text fields ({', '.join(fields)})")
    if "identity" in audits:
        from aflite.audits._text import get_tokenizer

        get_tokenizer(tokenizer)  # a missing spaCy fails before the other audits run
    y = np.asarray([str(v) for v in labels])
    out: list[AuditResult] = []
    suffix = f" ({tag})" if tag else ""
    if "pmi" in audits:
        from aflite.audits.word_label import word_label_pmi

        out.append(
            word_label_pmi(
                texts[field], y, min_count=min_count, name=f"word-label PMI ({field}){suffix}"
            )
        )
    if "zstats" in audits:
        from aflite.audits.word_label import word_label_zstats

        plot = None
        if plot_dir is not None:
            Path(plot_dir).mkdir(parents=True, exist_ok=True)
            plot = Path(plot_dir) / f"zstats{'-' + tag if tag else ''}.png"
        out.append(
            word_label_zstats(
                texts[field],
                y,
                min_count=min_count,
                plot=plot,
                name=f"z-statistics ({field}){suffix}",
            )
        )
    if "identity" in audits:
        from aflite.audits.cooccurrence import count_fields
        from aflite.audits.identity import identity_pmi, load_identity_words, parse_min_counts

        words = identity_words or load_identity_words()
        mcs = parse_min_counts(identity_min_count)
        views = count_fields(
            texts,
            min_count=mcs[0],
            identity_words=words,
            dedupe_sentences=dedupe_sentences,
            tokenizer=tokenizer,
        )
        if counts_path is not None:
            from aflite.audits._counts_file import save_counts

            save_counts(counts_path, views)
        out.extend(
            identity_pmi(
                texts,
                min_counts=mcs,
                identity_words=words,
                counts=views,
                name=f"identity-word PMI{suffix}",
            )
        )
    if "partial" in audits:
        from aflite.audits.baselines import partial_input_baseline

        out.append(
            partial_input_baseline(
                texts[field], y, field=field, seed=seed, name=f"{field}-only baseline{suffix}"
            )
        )
    if "ppmi" in audits:
        from aflite.audits.baselines import max_ppmi_baseline

        out.append(
            max_ppmi_baseline(
                texts[field], y, seed=seed, name=f"Max-PPMI baseline ({field}){suffix}"
            )
        )
    if "knn" in audits or "bias" in audits:
        if features is None:
            from aflite.features.ngrams import ngram_features

            features = ngram_features([texts[f] for f in fields])
        if "knn" in audits:
            from aflite.audits.knn import knn_distances

            out.append(knn_distances(features, y, seed=seed, name=f"knn distances{suffix}"))
        if "bias" in audits:
            from aflite.audits.baselines import representation_bias_audit

            t = min(0.5, max(0.1, 2000 / len(y))) if len(y) > 50 else 0.5
            out.append(
                representation_bias_audit(
                    features, y, train_size=t, seed=seed, name=f"representation bias{suffix}"
                )
            )
    return out
