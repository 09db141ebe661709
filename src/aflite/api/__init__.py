"""The data-level API: AFLITE and the audits on a pandas DataFrame, a Hugging Face Dataset,
a list of dicts or a file, with subsets handed back in the same type."""

from aflite.api.audit import audit
from aflite.api.card import DatasetCard
from aflite.api.dataset import DatasetFilterResult, featurize, filter_dataset
from aflite.api.scores import DatasetScores, score_dataset
from aflite.api.verify import Verdict, verify

__all__ = [
    "DatasetCard",
    "DatasetFilterResult",
    "DatasetScores",
    "audit",
    "featurize",
    "filter_dataset",
    "score_dataset",
    "Verdict",
    "verify",
]
