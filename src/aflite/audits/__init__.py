"""Bias audits: word-label PMI and z-statistics, identity-word n-gram PMI, partial-input and
Max-PPMI baselines, nearest-neighbour distances, representation bias. Each returns an
:class:`AuditResult` (per-item table, one-line summary, details)."""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports

_EXPORTS = {
    "AUDITS": "aflite.audits.registry",
    "Association": "aflite.audits.cooccurrence",
    "AuditContext": "aflite.audits.registry",
    "AuditOptions": "aflite.audits.options",
    "AuditResult": "aflite.audits.base",
    "CooccurrenceCounts": "aflite.audits.cooccurrence",
    "count_cooccurrences": "aflite.audits.cooccurrence",
    "count_fields": "aflite.audits.cooccurrence",
    "identity_pmi": "aflite.audits.identity",
    "knn_distances": "aflite.audits.knn",
    "load_counts": "aflite.audits._counts_file",
    "load_identity_words": "aflite.audits.text",
    "max_ppmi_baseline": "aflite.audits.baselines",
    "parse_min_counts": "aflite.audits.identity",
    "partial_input_baseline": "aflite.audits.baselines",
    "register_audit": "aflite.audits.registry",
    "representation_bias_audit": "aflite.audits.baselines",
    "run_audits": "aflite.audits.run",
    "save_counts": "aflite.audits._counts_file",
    "saved_views": "aflite.audits._counts_file",
    "word_label_pmi": "aflite.audits.word_label",
    "word_label_zstats": "aflite.audits.word_label",
}
__all__ = list(_EXPORTS)
# imported on first use: listing the audits (the command line's help) loads no scipy or sklearn
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
