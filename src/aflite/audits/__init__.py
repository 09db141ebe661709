"""Bias audits: word-label PMI and z-statistics, identity-word n-gram PMI, partial-input and
Max-PPMI baselines, nearest-neighbour distances, representation bias. Each returns an
:class:`AuditResult` (per-item table, one-line summary, details)."""

from aflite.audits.base import AuditResult
from aflite.audits.baselines import (
    max_ppmi_baseline,
    partial_input_baseline,
    representation_bias_audit,
)
from aflite.audits.cooccurrence import (
    CooccurrenceCounts,
    count_cooccurrences,
    identity_pmi,
    load_identity_words,
)
from aflite.audits.knn import knn_distances
from aflite.audits.run import AUDITS, run_audits
from aflite.audits.word_label import word_label_pmi, word_label_zstats

__all__ = [
    "AUDITS",
    "AuditResult",
    "CooccurrenceCounts",
    "count_cooccurrences",
    "identity_pmi",
    "knn_distances",
    "load_identity_words",
    "max_ppmi_baseline",
    "partial_input_baseline",
    "representation_bias_audit",
    "run_audits",
    "word_label_pmi",
    "word_label_zstats",
]
