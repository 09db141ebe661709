"""Word n-gram features: work with nothing downloaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ngram_features", "NgramVectorizer"]


class NgramVectorizer:
    """TF-IDF word uni+bigrams, one vocabulary per text field, stacked side by side.

    Separate vocabularies keep "nobody" in a hypothesis distinct from "nobody" in a premise,
    which is what a partial-input artifact lives in. Fit on one split, transform another.
    """

    def __init__(
        self,
        *,
        max_features: int = 1024,
        min_df: int = 2,
        svd: int | None = None,
        hashed: int | None = None,
        seed: int = 0,
    ) -> None:
        self.max_features = max_features
        self.min_df = min_df
        self.svd = svd
        self.hashed = hashed
        self.seed = seed

    def fit(self, fields: Sequence[Sequence[str]]) -> NgramVectorizer:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizers_ = []
        for texts in fields:
            if self.hashed:
                # no vocabulary to hold: for very large or streaming corpora
                from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
                from sklearn.pipeline import make_pipeline

                vec = make_pipeline(
                    HashingVectorizer(
                        n_features=self.hashed,
                        ngram_range=(1, 2),
                        alternate_sign=False,
                        norm=None,
                        token_pattern=r"(?u)\b\w+\b",
                        dtype=np.float32,
                    ),
                    TfidfTransformer(sublinear_tf=True),
                )
                self.vectorizers_.append(vec.fit(texts))
                continue
            vec = TfidfVectorizer(
                ngram_range=(1, 2),
                min_df=min(self.min_df, max(1, len(texts) // 2)),
                max_features=self.max_features,
                sublinear_tf=True,
                token_pattern=r"(?u)\b\w+\b",
                dtype=np.float32,
            )
            self.vectorizers_.append(vec.fit(texts))
        self.reducer_ = None
        if self.svd is not None:
            from sklearn.decomposition import TruncatedSVD

            mat = self._sparse(fields)
            if self.svd < mat.shape[1]:
                self.reducer_ = TruncatedSVD(n_components=self.svd, random_state=self.seed).fit(mat)
        return self

    def _sparse(self, fields: Sequence[Sequence[str]]):
        from scipy import sparse

        if len(fields) != len(self.vectorizers_):
            raise ValueError(f"expected {len(self.vectorizers_)} text fields, got {len(fields)}")
        return sparse.hstack([v.transform(t) for v, t in zip(self.vectorizers_, fields)]).tocsr()

    def transform(self, fields: Sequence[Sequence[str]], *, dense: bool = True):
        mat = self._sparse(fields)
        if self.reducer_ is not None:
            return self.reducer_.transform(mat).astype(np.float32)
        if not dense:
            return mat
        # straight into float32: a copy here would double the peak for large inputs
        return mat.toarray(out=np.zeros(mat.shape, dtype=np.float32))

    def fit_transform(self, fields: Sequence[Sequence[str]], *, dense: bool = True):
        return self.fit(fields).transform(fields, dense=dense)


def ngram_features(
    fields: Sequence[Sequence[str]],
    *,
    max_features: int = 1024,
    min_df: int = 2,
    svd: int | None = None,
    hashed: int | None = None,
    seed: int = 0,
    dense: bool = True,
):
    """Fit :class:`NgramVectorizer` on ``fields`` and return their features.

    ``svd`` reduces the result to that many dimensions (TruncatedSVD) for large inputs;
    ``hashed`` hashes n-grams into that many columns instead of keeping a vocabulary;
    ``dense=False`` returns the sparse matrix.
    """
    vec = NgramVectorizer(
        max_features=max_features, min_df=min_df, svd=svd, hashed=hashed, seed=seed
    )
    return vec.fit_transform(fields, dense=dense)
