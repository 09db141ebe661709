"""Bias audits: word-label PMI and z-statistics, identity-word n-gram PMI, partial-input and
Max-PPMI baselines, nearest-neighbour distances, representation bias. Each returns an
:class:`AuditResult` (per-item table, one-line summary, details)."""

from aflite.audits._counts_file import load_counts, save_counts, saved_views
from aflite.audits.base import AuditResult
from aflite.audits.baselines import (
    max_ppmi_baseline,
    partial_input_baseline,
    representation_bias_audit,
)
from aflite.audits.cooccurrence import (
    Association,
    CooccurrenceCounts,
    count_cooccurrences,
    count_fields,
)
from aflite.audits.identity import identity_pmi, load_identity_words, parse_min_counts
from aflite.audits.knn import knn_distances
from aflite.audits.registry import AuditContext
from aflite.audits.run import AUDITS, register_audit, run_audits
from aflite.audits.word_label import word_label_pmi, word_label_zstats

__all__ = [
    "AUDITS",
    "Association",
    "AuditContext",
    "AuditResult",
    "CooccurrenceCounts",
    "count_cooccurrences",
    "count_fields",
    "identity_pmi",
    "knn_distances",
    "load_counts",
    "load_identity_words",
    "max_ppmi_baseline",
    "parse_min_counts",
    "partial_input_baseline",
    "register_audit",
    "representation_bias_audit",
    "run_audits",
    "save_counts",
    "saved_views",
    "word_label_pmi",
    "word_label_zstats",
]
