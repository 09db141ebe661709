"""The built-in audits, registered in the order their results are reported."""

from __future__ import annotations

from pathlib import Path

from aflite.audits.base import AuditResult
from aflite.audits.registry import AuditContext, register_audit


@register_audit("pmi")
def _pmi(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.word_label import word_label_pmi

    return [
        word_label_pmi(
            ctx.texts[ctx.field],
            ctx.labels,
            min_count=ctx.min_count,
            name=f"word-label PMI ({ctx.field}){ctx.suffix}",
        )
    ]


@register_audit("zstats")
def _zstats(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.word_label import word_label_zstats

    plot = None
    if ctx.plot_dir is not None:
        Path(ctx.plot_dir).mkdir(parents=True, exist_ok=True)
        plot = Path(ctx.plot_dir) / f"zstats{'-' + ctx.tag if ctx.tag else ''}.png"
    return [
        word_label_zstats(
            ctx.texts[ctx.field],
            ctx.labels,
            min_count=ctx.min_count,
            plot=plot,
            name=f"z-statistics ({ctx.field}){ctx.suffix}",
        )
    ]


def _identity_words(ctx: AuditContext) -> dict[str, str]:
    """The identity words: given, from their file, or the shipped list."""
    from aflite.audits.identity import load_identity_words

    words = ctx.identity_words
    return words if isinstance(words, dict) else load_identity_words(words)


def _check_identity(ctx: AuditContext) -> None:
    from aflite.audits.text import get_tokenizer

    # a missing spaCy or word file fails before the other audits run
    get_tokenizer(ctx.tokenizer)
    _identity_words(ctx)


@register_audit("identity", check=_check_identity)
def _identity(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.cooccurrence import count_fields
    from aflite.audits.identity import identity_pmi

    words = _identity_words(ctx)
    mcs = list(ctx.identity_min_count)
    views = count_fields(
        ctx.texts,
        min_count=mcs[0],
        identity_words=words,
        dedupe_sentences=ctx.dedupe_sentences,
        tokenizer=ctx.tokenizer,
    )
    if ctx.save_counts is not None:
        from aflite.audits._counts_file import save_counts

        save_counts(ctx.save_counts, views)
    return identity_pmi(
        ctx.texts,
        min_counts=mcs,
        identity_words=words,
        counts=views,
        name=f"identity-word PMI{ctx.suffix}",
    )


FOLDS = 5  # the cross-validated baselines' folds (their functions' default)


def _check_folds(name: str):
    def check(ctx: AuditContext) -> None:
        import numpy as np

        from aflite.errors import DataError

        classes, counts = np.unique(ctx.labels, return_counts=True)
        if counts.min() < FOLDS:
            c = classes[int(counts.argmin())]
            raise DataError(
                f"the {name} audit cross-validates in {FOLDS} folds, which needs {FOLDS} rows "
                f"of every class; label {str(c)!r} has {int(counts.min())} of {len(ctx.labels)} "
                "rows (leave the audit out or use more data)"
            )

    return check


@register_audit("partial", check=_check_folds("partial"))
def _partial(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.baselines import partial_input_baseline

    return [
        partial_input_baseline(
            ctx.texts[ctx.field],
            ctx.labels,
            field=ctx.field,
            seed=ctx.seed,
            name=f"{ctx.field}-only baseline{ctx.suffix}",
        )
    ]


@register_audit("ppmi", check=_check_folds("ppmi"))
def _ppmi(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.baselines import max_ppmi_baseline

    return [
        max_ppmi_baseline(
            ctx.texts[ctx.field],
            ctx.labels,
            seed=ctx.seed,
            name=f"Max-PPMI baseline ({ctx.field}){ctx.suffix}",
        )
    ]


@register_audit("knn", reads_features=True, sized=True)
def _knn(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.knn import knn_distances

    return [
        knn_distances(ctx.features, ctx.labels, seed=ctx.seed, name=f"knn distances{ctx.suffix}")
    ]


@register_audit("bias", reads_features=True, sized=True)
def _bias(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.baselines import bias_train_rows, representation_bias_audit

    # compared sets share one t (a count); alone, a set resolves its own (a fraction of it, or
    # the default for its size)
    t = ctx.bias_train_size
    if not isinstance(t, int):
        t = bias_train_rows([len(ctx.labels)], t)
    return [
        representation_bias_audit(
            ctx.features,
            ctx.labels,
            train_size=t,
            seed=ctx.seed,
            name=f"representation bias{ctx.suffix}",
        )
    ]


# multiple-choice items: ctx.choices holds them (aflite.audits.choice_audits)


def _check_choice_folds(ctx: AuditContext) -> None:
    from aflite.errors import DataError

    if len(ctx.choices) < FOLDS:
        raise DataError(
            f"the choices-only audit cross-validates in {FOLDS} folds, which needs {FOLDS} "
            f"items; there are {len(ctx.choices)} (leave the audit out or use more data)"
        )


@register_audit("choices-only", check=_check_choice_folds, choices=True)
def _choices_only(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.choice_audits import choices_only_baseline

    return [
        choices_only_baseline(
            ctx.choices, folds=FOLDS, seed=ctx.seed, name=f"choices-only baseline{ctx.suffix}"
        )
    ]


@register_audit("answer-position", choices=True)
def _answer_position(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.choice_audits import answer_position_baseline

    return [answer_position_baseline(ctx.choices, name=f"answer-position baseline{ctx.suffix}")]


@register_audit("choice-pmi", choices=True)
def _choice_pmi(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.choice_audits import choice_pmi

    name = f"word-label PMI (right vs wrong choices){ctx.suffix}"
    return [choice_pmi(ctx.choices, min_count=ctx.min_count, name=name)]


@register_audit("choice-length", choices=True)
def _choice_length(ctx: AuditContext) -> list[AuditResult]:
    from aflite.audits.choice_audits import choice_length

    return [choice_length(ctx.choices, name=f"choice length{ctx.suffix}")]
