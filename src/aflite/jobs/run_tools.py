"""The smaller commands as jobs (``aflite demo``, ``report``, ``export``, ``pmi-query``,
``verify``): the command line parses, calls one of these, and prints what it returns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aflite.config import FilterConfig
from aflite.errors import DataError

__all__ = [
    "demo_job",
    "export_job",
    "query_counts",
    "rebuild_report",
    "verify_job",
]

# the demo's data; its filter options are the defaults of `aflite filter`, unchanged
_DEMO = {
    "label": "label",
    "text": ("hypothesis",),
    "id": "id",
    "group": "premise",
    "features": "ngrams",
}


def demo_job(out_dir: str, *, resume: bool, overwrite: bool) -> FilterConfig:
    """The demo: the bundled SNLI slice on hypothesis-only n-grams, into ``out_dir`` (an
    earlier demo's outputs there are replaced)."""
    from aflite.data import bundled_snli

    snli = str(bundled_snli())
    overwrite = overwrite or (not resume and _finished_run_of(out_dir) == snli)
    return FilterConfig(input=snli, **_DEMO, out_dir=out_dir, resume=resume, overwrite=overwrite)


def _finished_run_of(out_dir: str) -> str | None:
    """The input of the finished run in ``out_dir`` (from its summary.json), if any."""
    try:
        return json.loads((Path(out_dir) / "summary.json").read_text()).get("input")
    except (OSError, ValueError, AttributeError):
        return None


def rebuild_report(out_dir: str) -> Path:
    """``report.html`` of a filter or score run's folder, written again from its outputs."""
    summary = Path(out_dir) / "summary.json"
    if not summary.exists():
        raise DataError(f"{out_dir}: no summary.json here; is it an aflite output folder?")
    try:
        kind = json.loads(summary.read_text(encoding="utf-8")).get("kind")
    except (ValueError, AttributeError):
        raise DataError(f"{summary}: not an aflite summary (unreadable JSON)") from None
    if kind == "scores":
        from aflite.reports.scores_html import write_scores_report

        return Path(write_scores_report(out_dir))
    from aflite.reports.html import write_report

    return Path(write_report(out_dir))


def export_job(out_dir: str, to: str, **kw: Any) -> tuple[Path, int, bool]:
    """A run's rows for an annotation tool (:func:`aflite.exports.export_run`): the file
    written, the rows in it, and whether they are multiple-choice items."""
    from aflite.exports import export_run

    path, n = export_run(out_dir, to, **kw)
    summary = json.loads((Path(out_dir) / "summary.json").read_text(encoding="utf-8"))
    return Path(path), n, bool(summary.get("items"))


_NGRAMS = {"unigrams": ["unigrams"], "bigrams": ["bigrams"], "both": ["unigrams", "bigrams"]}


def query_counts(
    counts: str,
    term: str,
    *,
    top: int,
    min_count: int,
    field: str | None,
    ngrams: str,
    examples: str | None,
    n_examples: int,
) -> tuple[Any, dict[str, Any], Any]:
    """The top associations of ``term`` in saved co-occurrence counts (and, with
    ``examples``, sentences holding both): (counts, {kind: table}, examples or None)."""
    from aflite.audits import load_counts

    if ngrams not in (*_NGRAMS, "auto"):
        raise DataError(f"--ngrams must be unigrams, bigrams, both or auto, got '{ngrams}'")
    cc = load_counts(counts, field, text=examples is not None)
    if ngrams == "auto":
        ngrams = "both" if len(term.split()) == 2 else "unigrams"
    try:
        tables = {
            k: cc.top_associations(term, top, ngrams=k, min_count=min_count)
            for k in _NGRAMS[ngrams]
        }
        found = cc.example_sentences(term, examples, n_examples) if examples else None
    except KeyError as e:
        raise DataError(f"{counts}: {e.args[0]}") from None
    return cc, tables, found


def verify_job(
    card: str,
    data: str | None,
    *,
    kept: str | None = None,
    device: str = "auto",
    cache_dir: str | None = None,
    progress: bool = True,
) -> Any:
    """``aflite verify``: :func:`aflite.api.verify.verify` on files; a file that cannot be
    read is a bad input (exit code 2), as a missing one is, not a fault of the machine."""
    from aflite._internal.options import ConfigError
    from aflite.api.verify import verify

    try:
        return verify(card, data, kept=kept, device=device, cache_dir=cache_dir, progress=progress)
    except ConfigError as e:
        raise DataError(e.render(cli=True)) from None  # named as the command line names it
    except OSError as e:
        if e.filename is None:
            raise
        raise DataError(f"{e.filename}: {e.strerror or e}") from None
