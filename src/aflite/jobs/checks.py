"""A job's options checked before any work, each bad value a one-line DataError naming its
command-line flag (``--threshold: must be in [0, 1], got 75``).

:func:`check_job_options` needs no data and runs before the output folder or the input is
touched; :func:`resolve_job_sizes` checks the sizes against the rows to filter once the input
has been read. The algorithm keeps its own checks (in its parameters' names) as a backstop.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

from aflite.errors import DataError

if TYPE_CHECKING:
    from aflite.jobs.config import FilterJob

__all__ = ["check_job_options", "resolve_job_sizes", "flag", "MAX_SEED"]

# scikit-learn's random_state (the audits' folds, the n-gram SVD) takes at most 2**32 - 1; a
# larger seed would pass here and fail after the filter, with the outputs half written
MAX_SEED = 2**32 - 1


def flag(name: str) -> str:
    """The command-line flag of a job field: ``train_size`` -> ``--train-size``."""
    return "--" + name.replace("_", "-")


def _show(value: Any) -> str:
    # 75, not 75.0: the value as the user most likely typed it
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)


def _fail(name: str, why: str) -> DataError:
    return DataError(f"{flag(name)}: {why}")


def _check_size(value: Any, name: str) -> None:
    """A row count (an int >= 1) or a fraction in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(name, f"must be a row count or a fraction in (0, 1), got {_show(value)}")
    if isinstance(value, Integral):
        if value < 1:
            raise _fail(name, f"must be at least 1 row, got {_show(value)}")
        return
    if not 0.0 < float(value) < 1.0:
        raise _fail(name, f"as a fraction must be in (0, 1), got {_show(value)}")


def _check_unit(value: Any, name: str, *, what: str = "must be in [0, 1]") -> None:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(name, f"{what}, got {_show(value)}")
    if not 0.0 <= float(value) <= 1.0:  # NaN fails too
        raise _fail(name, f"{what}, got {_show(value)}")


def _choice(value: Any, name: str, choices: list[str]) -> None:
    if value in choices:
        return
    from aflite.io.base import did_you_mean

    hint = did_you_mean(str(value), choices)
    raise _fail(name, f"unknown value {_show(value)}: choose one of {', '.join(choices)}{hint}")


def check_job_options(job: FilterJob) -> None:
    """Every option that needs no data, in the order ``aflite filter --help`` lists them."""
    from aflite.features.build import parse_feature_spec
    from aflite.types import STRATEGIES

    if not job.label_field:
        raise _fail("label_field", "must name a field")
    seen: set[str] = set()
    for f in job.text_fields:
        if f in seen:
            raise _fail("text_fields", f"'{f}' is named twice")
        if f == job.label_field:
            raise _fail("text_fields", f"'{f}' is the label field (--label-field)")
        seen.add(f)
    try:
        spec = parse_feature_spec(job.features)
    except ValueError as e:
        msg = str(e)
        raise DataError(msg if msg.startswith("--") else f"--features: {msg}") from None
    for name in ("target_size", "train_size", "slice_size"):
        _check_size(getattr(job, name), name)
    n = job.n_partitions
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
        raise _fail("n_partitions", f"must be a positive whole number, got {_show(n)}")
    _check_unit(job.threshold, "threshold")
    if job.min_bias is not None:
        _check_unit(job.min_bias, "min_bias", what="must be a margin in [0, 1] or off")
    if job.balance not in (None, "classes"):
        raise _fail("balance", f"must be none or classes, got {_show(job.balance)}")
    _choice(job.strategy, "strategy", list(STRATEGIES))
    _choice(job.partitions, "partitions", ["blocks", "uniform"])
    t = job.threads
    if t is not None and (isinstance(t, bool) or not isinstance(t, Integral) or t < 1):
        raise _fail("threads", f"must be a positive whole number, got {_show(t)}")
    if t is None:
        from aflite._internal.threads import resolve_threads

        try:
            resolve_threads(None)  # AFLITE_THREADS
        except ValueError as e:
            raise DataError(str(e)) from None
    w = job.warmup_fraction
    if w is not None and (isinstance(w, bool) or not isinstance(w, Real) or not 0.0 < w < 1.0):
        raise _fail("warmup_fraction", f"must be in (0, 1), got {_show(w)}")
    if (
        job.warmup_finetune
        and spec.kind != "warmup-cnn"  # the CNN is its own warm-up model
        and (spec.kind != "sentence-transformers" or job.warmup_fraction is None)
    ):
        raise _fail(
            "warmup_finetune", "needs --features sentence-transformers:MODEL and --warmup-fraction"
        )
    s = job.seed
    if isinstance(s, bool) or not isinstance(s, Integral) or not 0 <= s <= MAX_SEED:
        raise _fail("seed", f"must be a whole number in [0, {MAX_SEED}], got {_show(s)}")
    _check_device(job.device)
    if job.audits:
        from aflite.audits import AUDITS

        for a in job.audits:
            _choice(a, "audits", list(AUDITS))
    if job.backend not in (None, "local", "ray"):
        raise _fail("backend", f"must be local or ray, got {_show(job.backend)}")
    if job.ray_address and job.backend != "ray":
        raise _fail("ray_address", "needs --backend ray")
    if job.by is not None:
        from aflite.scoring.filter_by import parse_by

        parse_by(job.by)  # its messages name --by
        if job.backend == "ray":
            raise _fail("by", "scores on this machine; leave out --backend ray")


def _check_device(device: Any) -> None:
    if device in (None, "auto", "cpu"):
        return  # no torch import for the common cases
    from aflite._internal.device import resolve_device

    try:
        resolve_device(device)
    except ValueError as e:
        raise _fail("device", str(e)) from None


def resolve_job_sizes(job: FilterJob, n_rows: int) -> tuple[int, int, int]:
    """(target n, train t, slice k) as row counts for ``n_rows`` rows to filter; a size the
    data cannot take is a DataError naming its flag."""

    def rows(name: str) -> int:
        value = getattr(job, name)
        if isinstance(value, Integral):
            return int(value)
        size = int(round(float(value) * n_rows))
        if name == "slice_size":
            return max(1, size)  # a fraction of a small set still removes a row per phase
        if size < 1:
            raise _fail(name, f"{_show(value)} of {n_rows} rows is less than 1 row")
        return size

    target, train, k = rows("target_size"), rows("train_size"), rows("slice_size")
    if target >= n_rows:
        raise _fail("target_size", f"{target} is not smaller than the {n_rows} rows to filter")
    if train >= target:
        raise _fail(
            "train_size",
            f"{train} must be smaller than --target-size ({target}): the kept rows are scored "
            "by models trained on other rows",
        )
    return target, train, k
