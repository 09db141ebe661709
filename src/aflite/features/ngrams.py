"""Word n-gram features: work with nothing downloaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ngram_features"]


def ngram_features(
    fields: Sequence[Sequence[str]],
    *,
    max_features: int = 1024,
    min_df: int = 2,
    svd: int | None = None,
    seed: int = 0,
    dense: bool = True,
):
    """TF-IDF word uni+bigrams, one vocabulary per text field, stacked side by side.

    Separate vocabularies keep "nobody" in a hypothesis distinct from "nobody" in a premise,
    which is what a partial-input artifact lives in. ``svd`` reduces the result to that many
    dimensions (TruncatedSVD) for large inputs. ``dense=False`` returns the sparse matrix.
    """
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer

    blocks = []
    for texts in fields:
        vec = TfidfVectorizer(
            ngram_range=(1, 2),
            min_df=min(min_df, max(1, len(texts) // 2)),
            max_features=max_features,
            sublinear_tf=True,
            token_pattern=r"(?u)\b\w+\b",
            dtype=np.float32,
        )
        blocks.append(vec.fit_transform(texts))
    mat = sparse.hstack(blocks).tocsr()
    if svd is not None and svd < mat.shape[1]:
        from sklearn.decomposition import TruncatedSVD

        return (
            TruncatedSVD(n_components=svd, random_state=seed).fit_transform(mat).astype(np.float32)
        )
    return mat.toarray().astype(np.float32) if dense else mat
