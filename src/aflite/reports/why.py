"""Why rows were removed, per class: the word n-grams over-represented among the removed rows
(for text), or the removed rows' nearest removed neighbours (for features without text); for
multiple-choice items, the words that mark the right choice among the removed items.
:func:`why_removed` chooses among them for the report.

Each reads only the filtered rows: ``labels``, the items and the positions in ``kept`` /
``removed`` are aligned with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aflite.audits.text import get_tokenizer
from aflite.reports.data import WhyRemoved

__all__ = ["ngram_log_odds", "nearest_removed", "right_choice_words", "unit_rows", "why_removed"]

RIGHT_CHOICES = "right choices"  # the one table of a multiple-choice run's explanation


def why_removed(
    x: Any,
    labels: np.ndarray,
    result: Any,
    centre: np.ndarray,
    *,
    texts: dict[str, list[str]] | None = None,
    ids: list[Any],
    items: Any = None,
    seed: int = 0,
) -> WhyRemoved | None:
    """Why a filter run (``result``) removed its rows, as the report shows it: for
    multiple-choice ``items``, the words that mark their right choices
    (:func:`right_choice_words`); for rows with ``texts``, the n-grams over-represented among
    the removed rows (:func:`ngram_log_odds`); else each removed row's nearest removed
    neighbours in ``x`` (centred on ``centre``; :func:`nearest_removed`). ``labels``, ``ids``
    and the rest are aligned with the rows filtered."""
    kept, removed = result.kept, result.removed
    if items is None and texts:
        why = ngram_log_odds(texts, labels, kept, removed, seed=seed)
    elif items is None:
        why = nearest_removed(
            x, labels, ids, kept, removed, result.removed_score, centre, seed=seed
        )
    else:
        why = right_choice_words(items, kept, removed, seed=seed)
    return WhyRemoved.from_json(why)


def ngram_log_odds(
    texts: dict[str, list[str]],
    labels: np.ndarray,
    kept: np.ndarray,
    removed: np.ndarray,
    *,
    top: int = 10,
    min_count: int = 3,
    alpha: float = 0.5,
    max_rows: int = 200_000,
    seed: int = 0,
) -> dict[str, Any]:
    """Per class, the word uni- and bigrams most over-represented among its removed rows
    against its kept rows.

    Each n-gram counts once per row. With r of R removed and k of K kept rows holding it, the
    smoothed log-odds ratio is ``log((r+a)/(R-r+a)) - log((k+a)/(K-k+a))`` (a = ``alpha``), and
    n-grams are ranked by its z-score (the ratio over its approximate standard error), so a
    word in two removed rows does not outrank one in two hundred. Only n-grams in at least
    ``min_count`` removed rows and with a positive ratio are listed. ``texts`` holds the
    filtered rows' values per field; with several fields each n-gram is named by its field.
    """
    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    rows = np.concatenate([np.asarray(kept), np.asarray(removed)]).astype(np.int64)
    is_removed = np.r_[np.zeros(len(kept), bool), np.ones(len(removed), bool)]
    sampled = len(rows) > max_rows
    if sampled:
        pick = np.sort(np.random.default_rng(seed).choice(len(rows), max_rows, replace=False))
        rows, is_removed = rows[pick], is_removed[pick]
    y = np.asarray(labels)[rows]
    blocks, names = [], []
    for field, values in texts.items():
        vec = CountVectorizer(
            tokenizer=get_tokenizer("regex"), token_pattern=None, ngram_range=(1, 2), binary=True
        )
        try:
            blocks.append(vec.fit_transform([values[i] for i in rows]).tocsc())
        except ValueError:  # no tokens at all in this field
            continue
        prefix = f"{field}: " if len(texts) > 1 else ""
        names += [prefix + w for w in vec.get_feature_names_out()]
    out: dict[str, Any] = {"kind": "ngrams", "classes": {}, "skipped": {}}
    out["note"] = (
        f"Word uni- and bigrams (each counted once per row) ranked by the z-score of a "
        f"smoothed log-odds ratio (add {alpha:g}) of removed against kept rows of the class; "
        f"n-grams in at least {min_count} removed rows."
        + (f" Counted on a random {max_rows:,} of the rows." if sampled else "")
    )
    if not blocks:
        return out
    x = sparse.hstack(blocks).tocsr()
    names_arr = np.asarray(names, dtype=object)
    a = float(alpha)
    for c in np.unique(y):
        rm, kp = is_removed & (y == c), ~is_removed & (y == c)
        n_rm, n_kp = int(rm.sum()), int(kp.sum())
        if n_rm < min_count or n_kp == 0:
            out["skipped"][str(c)] = f"{n_rm} removed and {n_kp} kept rows"
            continue
        r = np.asarray(x[rm].sum(axis=0)).ravel().astype(float)
        k = np.asarray(x[kp].sum(axis=0)).ravel().astype(float)
        lo = np.log((r + a) / (n_rm - r + a)) - np.log((k + a) / (n_kp - k + a))
        se = np.sqrt(1 / (r + a) + 1 / (n_rm - r + a) + 1 / (k + a) + 1 / (n_kp - k + a))
        z = lo / se
        ok = np.flatnonzero((r >= min_count) & (lo > 0))
        order = ok[np.lexsort((names_arr[ok], -z[ok]))][:top]  # ties: alphabetical
        out["classes"][str(c)] = {
            "header": [
                "n-gram",
                f"removed rows with it (of {n_rm})",
                f"kept rows with it (of {n_kp})",
                "log-odds ratio",
                "z",
            ],
            "rows": [
                [
                    str(names_arr[i]),
                    int(r[i]),
                    int(k[i]),
                    round(float(lo[i]), 3),
                    round(float(z[i]), 2),
                ]
                for i in order
            ],
        }
    return out


def right_choice_words(
    items: Any,
    kept: np.ndarray,
    removed: np.ndarray,
    *,
    top: int = 10,
    min_count: int = 3,
    max_items: int = 200_000,
    seed: int = 0,
) -> dict[str, Any]:
    """The words and two-word n-grams most associated with the right choice among the removed
    multiple-choice ``items`` (:class:`~aflite.io.choices.Choices`): the answer artifacts the filter took out.

    The association is the choice-PMI audit's (:func:`aflite.audits.choice_audits.choice_pmi`:
    word-label PMI of every choice labelled right or wrong, add-1 smoothed), over the removed
    items, listed beside the same PMI over all the filtered items and over the kept ones.
    Words in at least ``min_count`` choices of removed items with a positive PMI are listed,
    the highest first. Each set is counted on at most ``max_items`` random items.
    """
    from aflite.audits.choice_audits import choice_pmi

    rng = np.random.default_rng(seed)

    def sample(rows: np.ndarray) -> Any:
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) > max_items:
            rows = np.sort(rng.choice(rows, max_items, replace=False))
        return items.subset(rows)

    n_all, n_rm = len(kept) + len(removed), len(removed)
    sampled = max(n_all, n_rm) > max_items
    out: dict[str, Any] = {"kind": "choice-words", "classes": {}, "skipped": {}}
    out["note"] = (
        "Words and two-word n-grams that mark the right choice among the removed items: "
        "PMI(word, right) = "
        "log2 p(right | word) / p(right) over every choice of those items (add-1 smoothed; "
        "p(right) is about 1/K), beside the same PMI over all items and over the kept ones. "
        f"N-grams in at least {min_count} choices of removed items, with a positive PMI; n/a: "
        f"in fewer than {min_count} choices of that set."
        + (f" Counted on a random {max_items:,} items of each set." if sampled else "")
    )
    if n_rm == 0:
        return out
    # words and two-word runs, as the rows' why-removed table counts n-grams
    rm = choice_pmi(sample(removed), min_count=min_count, top=top, max_n=2)
    pmi_all = choice_pmi(sample(np.arange(n_all)), min_count=min_count, top=0, max_n=2)
    pmi_all = pmi_all.details["pmi"].get("right", {})
    pmi_kept: dict[str, float] = {}
    if len(kept):
        pmi_kept = choice_pmi(sample(kept), min_count=min_count, top=0, max_n=2).details["pmi"]
        pmi_kept = pmi_kept.get("right", {})
    # the audit's table: label, rank, word, pmi, count with label, count (best first)
    rows = [r for r in rm.rows if r[0] == "right" and r[3] > 0]

    def pmi(table: dict[str, float], word: str) -> float | None:
        return round(float(table[word]), 3) if word in table else None

    out["classes"][RIGHT_CHOICES] = {
        "header": [
            "word",
            f"right choices with it (of {min(n_rm, max_items)}"
            + (f" sampled of {n_rm} removed items)" if n_rm > max_items else " removed items)"),
            "choices of removed items with it",
            "PMI with right, removed items",
            f"PMI with right, all {n_all} items",
            f"PMI with right, {len(kept)} kept items",
        ],
        "rows": [
            [
                r[2],
                int(r[4]),
                int(r[5]),
                round(float(r[3]), 3),
                pmi(pmi_all, r[2]),
                pmi(pmi_kept, r[2]),
            ]
            for r in rows
        ],
    }
    return out


def unit_rows(x: Any, rows: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Rows of ``x`` centred and scaled to unit length (cosine similarity is a dot product)."""
    v = np.asarray(x[np.sort(rows)], dtype=np.float32)[np.argsort(np.argsort(rows))] - centre
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def _nearest(q: np.ndarray, pool: np.ndarray, k: int, same: bool) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``pool`` and cosine distances of each query row's k nearest rows; with
    ``same`` the queries are the pool's first rows and never their own neighbour."""
    idx, dist = [], []
    for s in range(0, len(q), 1024):
        sim = q[s : s + 1024] @ pool.T
        if same:
            sim[np.arange(len(sim)), np.arange(s, s + len(sim))] = -np.inf
        kk = min(k, pool.shape[0] - int(same))
        part = np.argpartition(-sim, kk - 1, axis=1)[:, :kk]
        order = np.take_along_axis(-sim, part, axis=1).argsort(axis=1, kind="stable")
        part = np.take_along_axis(part, order, axis=1)
        idx.append(part)
        dist.append(1.0 - np.take_along_axis(sim, part, axis=1))
    return np.vstack(idx), np.vstack(dist)


def nearest_removed(
    x: Any,
    labels: np.ndarray,
    ids: list[Any],
    kept: np.ndarray,
    removed: np.ndarray,
    removed_score: np.ndarray,
    centre: np.ndarray,
    *,
    per_class: int = 8,
    k: int = 3,
    max_rows: int = 5000,
    seed: int = 0,
) -> dict[str, Any]:
    """Per class, its most predictable removed rows with their ``k`` nearest removed rows
    (cosine distance on centred features), and how often a row's nearest neighbour in its own
    set shares its label, for removed and for kept rows. ``ids`` name the filtered rows."""
    rng = np.random.default_rng(seed)
    y = np.asarray(labels)
    removed = np.asarray(removed)
    out: dict[str, Any] = {"kind": "neighbours", "classes": {}, "skipped": {}, "same_label": {}}
    out["note"] = (
        "No text to count words in: for each class its most predictable removed rows and their "
        f"{k} nearest removed rows (cosine distance on the centred features). Removed rows whose "
        "neighbours share their label sit in single-label clusters a simple model finds easily."
    )
    if len(removed) < 2:
        return out
    top_first = np.argsort(-np.asarray(removed_score), kind="stable")
    pool_pos = top_first
    if len(pool_pos) > max_rows:  # the most predictable rows stay in, the rest are sampled
        head = top_first[: per_class * len(np.unique(y))]
        rest = rng.choice(top_first[len(head) :], max_rows - len(head), replace=False)
        pool_pos = np.concatenate([head, rest])
    pool_rows = removed[pool_pos]
    v = unit_rows(x, pool_rows, centre)
    nn, dist = _nearest(v, v, k, same=True)
    py = y[pool_rows]
    out["same_label"]["removed"] = round(float(np.mean(py[nn[:, 0]] == py)), 3)
    kept = np.asarray(kept)
    if len(kept) >= 2:
        ks = kept if len(kept) <= max_rows else rng.choice(kept, max_rows, replace=False)
        kv = unit_rows(x, ks, centre)
        kn, _ = _nearest(kv, kv, 1, same=True)
        out["same_label"]["kept"] = round(float(np.mean(y[ks][kn[:, 0]] == y[ks])), 3)
    score = np.asarray(removed_score)[pool_pos]
    for c in np.unique(y):
        mine = np.flatnonzero(py == c)[:per_class]  # pool_pos is most predictable first
        if len(mine) == 0:
            out["skipped"][str(c)] = "no removed rows"
            continue
        out["classes"][str(c)] = {
            "header": ["id", "score"]
            + [f"neighbour {j + 1} (label, distance)" for j in range(nn.shape[1])],
            "rows": [
                [str(ids[pool_rows[i]]), round(float(score[i]), 3)]
                + [
                    f"{ids[pool_rows[j]]} ({y[pool_rows[j]]}, {d:.3f})"
                    for j, d in zip(nn[i], dist[i])
                ]
                for i in mine
            ],
        }
    return out
