"""``aflite`` command line: a thin layer over the Python API."""

from __future__ import annotations

import errno
import os
import sys

import typer

from aflite._internal.progress import silence_third_party_progress
from aflite._internal.text import one_line
from aflite.cli.app import app
from aflite.cli.options import (
    audit_names,
    features_help,
    format_names,
    input_help,
    parse_balance,
    parse_fields,
    parse_min_bias,
    parse_size,
)
from aflite.cli.signals import (
    Interrupted,
    install_signal_handlers,
    restore_signal_handlers,
)
from aflite.data import bundled_snli
from aflite.defaults import FILTER_DEFAULTS as D
from aflite.errors import DataError, MissingExtraError


@app.command("filter")
def filter_cmd(
    input_path: str = typer.Argument(
        ...,
        metavar="INPUT",
        help=input_help(),
    ),
    split: str | None = typer.Option(
        None, help="The split to filter, for a Hugging Face DatasetDict folder (e.g. train)."
    ),
    input_format: str | None = typer.Option(
        None,
        metavar="FORMAT",
        help="Read INPUT as this format instead of going by its name: "
        + ", ".join(format_names())
        + ".",
    ),
    label_field: str = typer.Option(
        "label", metavar="FIELD", help="Field holding the class label."
    ),
    text_fields: str | None = typer.Option(
        None,
        metavar="FIELDS",
        help="Comma-separated text fields, e.g. premise,hypothesis; default: the only text "
        "column besides the label, id and group fields.",
    ),
    id_field: str | None = typer.Option(
        None,
        metavar="FIELD",
        help="Field with unique row ids (checked for duplicates); default: a column named id, "
        "if any; 'none' numbers the rows.",
    ),
    group_field: str | None = typer.Option(
        None, metavar="FIELD", help="Rows sharing this field never straddle a split (e.g. premise)."
    ),
    features: str = typer.Option(
        "ngrams",
        metavar="KIND[:ARG]",
        help=features_help(),
    ),
    target_size: str = typer.Option(
        str(D["target_size"]), metavar="SIZE", help="n: rows to keep (count or fraction)."
    ),
    n_partitions: int = typer.Option(
        D["n_partitions"], metavar="M", help="m: random partitions per phase."
    ),
    train_size: str = typer.Option(
        str(D["train_size"]),
        metavar="SIZE",
        help="t: training rows per partition (count or fraction).",
    ),
    slice_size: str = typer.Option(
        str(D["slice_size"]),
        metavar="SIZE",
        help="k: rows removed per phase at most (count or fraction).",
    ),
    threshold: float = typer.Option(
        D["threshold"],
        metavar="TAU",
        help="tau: minimum predictability for removal (the paper: 0.75).",
    ),
    min_bias: str = typer.Option(
        str(D["min_bias"]),
        metavar="MARGIN|off",
        help="Stop when the representation bias is within this margin of chance; 'off' for "
        "Algorithm 1 as published.",
    ),
    balance: str = typer.Option(
        "none",
        metavar="none|classes",
        help="none | classes: remove from every class in proportion to its size.",
    ),
    strategy: str = typer.Option(
        D["strategy"], metavar="NAME", help="slicing | greedy | sampling | single_shot."
    ),
    by: str | None = typer.Option(
        None,
        metavar="SCORER[:COLUMN]",
        help="Instead of AFLITE's phases, remove the easiest rows by one per-example score in "
        "a single pass (e.g. pvi, datamap:confidence; see aflite score); --threshold, "
        "--slice-size, --strategy and --min-bias do not apply.",
    ),
    warmup_fraction: float | None = typer.Option(
        None,
        metavar="FRACTION",
        help="Train a warm-up model on this fraction; it gives Phi for the rest.",
    ),
    warmup_finetune: bool = typer.Option(
        False, help="With a sentence-transformers model: fine-tune the encoder itself in warm-up."
    ),
    out_dir: str = typer.Option("aflite-out", metavar="DIR", help="Output folder."),
    partitions: str = typer.Option(
        D["partitions"], metavar="blocks|uniform",
        help="blocks: rows dealt into blocks, each classifier trains on whole blocks (fast); "
        "uniform: independent uniform training parts (Algorithm 1's wording).",
    ),
    seed: int = typer.Option(0, metavar="N", help="Random seed."),
    device: str = typer.Option("auto", metavar="DEVICE", help="auto | cpu | cuda."),
    threads: int | None = typer.Option(
        None, metavar="N", help="Worker threads (default: AFLITE_THREADS, else the cores this "
        "process may run on); the result does not depend on it.",
    ),
    resume: bool = typer.Option(
        False, help="Continue an interrupted run from its last checkpoint."
    ),
    overwrite: bool = typer.Option(
        False, help="Replace the outputs of an earlier run in --out-dir (other files stay)."
    ),
    quiet: bool = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's)."),
    cache_dir: str | None = typer.Option(
        None, metavar="DIR", help="Embedding cache folder (default ~/.cache/aflite)."
    ),
    report: bool = typer.Option(True, help="Write report.html."),
    audits: str | None = typer.Option(
        None,
        metavar="NAMES",
        help="Audits to run before/after for the report, e.g. pmi,partial,ppmi; any of "
        + ", ".join(audit_names())
        + ".",
    ),
    backend: str = typer.Option(
        "local", metavar="local|ray", help="local | ray (partitions and embeddings on Ray)."
    ),
    ray_address: str | None = typer.Option(
        None,
        metavar="ADDRESS",
        help="Ray cluster address (e.g. auto, ray://head:10001); default: a local instance.",
    ),
    keep_ids: str | None = typer.Option(
        None,
        metavar="FILE",
        help="A reviewer's decisions: row ids (one a line) the filter must never remove.",
    ),
    drop_ids: str | None = typer.Option(
        None,
        metavar="FILE",
        help="A reviewer's decisions: row ids (one a line) removed before filtering.",
    ),
) -> None:
    """Filter a labelled data file; write kept / removed / warm-up rows, scores and a summary."""
    if quiet:
        silence_third_party_progress()  # before the libraries with bars are imported
    from aflite.jobs import FilterJob, run_filter_job

    job = FilterJob(
        input=input_path,
        label_field=label_field,
        text_fields=parse_fields(text_fields),
        id_field=id_field,
        group_field=group_field,
        features=features,
        target_size=parse_size(target_size, "--target-size"),
        n_partitions=n_partitions,
        train_size=parse_size(train_size, "--train-size"),
        slice_size=parse_size(slice_size, "--slice-size"),
        threshold=threshold,
        min_bias=parse_min_bias(min_bias),
        balance=parse_balance(balance),
        strategy=strategy,
        partitions=partitions,
        threads=threads,
        warmup_fraction=warmup_fraction,
        warmup_finetune=warmup_finetune,
        seed=seed,
        device=device,
        out_dir=out_dir,
        resume=resume,
        overwrite=overwrite,
        report=report,
        audits=parse_fields(audits),
        backend=None if backend == "local" else backend,
        ray_address=ray_address,
        split=split,
        input_format=input_format,
        by=by,
        keep_ids=keep_ids,
        drop_ids=drop_ids,
    )
    if cache_dir is not None:
        job.cache_dir = cache_dir
    try:
        outcome = run_filter_job(job, progress=not quiet)
    except Interrupted as e:
        e.resumable = True  # a checkpoint, if one was written, is left for --resume
        raise
    typer.echo(outcome.summary_text)


@app.command("demo")
def demo_cmd(
    out_dir: str = typer.Option("aflite-demo", metavar="DIR", help="Output folder."),
    quiet: bool = typer.Option(False, help="No progress bars (ours, tqdm's and Hugging Face's)."),
    resume: bool = typer.Option(False, help="Continue an interrupted demo."),
    overwrite: bool = typer.Option(
        False,
        help="Replace the outputs of an earlier run in --out-dir (an earlier demo's always are).",
    ),
) -> None:
    """Filter the bundled SNLI slice (6,000 pairs) on hypothesis-only n-grams, then print
    where the outputs are."""
    if quiet:
        silence_third_party_progress()
    from aflite.jobs import FilterJob, run_filter_job

    snli = str(bundled_snli())
    # the filter options are the defaults of `aflite filter` (aflite.defaults), unchanged
    job = FilterJob(
        input=snli,
        label_field="label",
        text_fields=["hypothesis"],
        id_field="id",
        group_field="premise",
        features="ngrams",
        out_dir=out_dir,
        resume=resume,
        overwrite=overwrite or (not resume and _finished_run_of(out_dir) == snli),
    )
    try:
        outcome = run_filter_job(job, progress=not quiet)
    except Interrupted as e:
        e.resumable = True
        raise
    typer.echo("SNLI slice (CC BY-SA 4.0, Bowman et al. 2015), hypothesis-only n-gram features")
    typer.echo(
        "filter options: the defaults of `aflite filter` ("
        + ", ".join(f"{k}={v}" for k, v in D.items())
        + ")"
    )
    typer.echo(outcome.summary_text)
    if "report" in outcome.outputs:
        typer.echo(f"open {outcome.outputs['report']} in a browser")


def _finished_run_of(out_dir: str) -> str | None:
    """The input of the finished run in ``out_dir`` (from its summary.json), if any."""
    import json
    from pathlib import Path

    try:
        return json.loads((Path(out_dir) / "summary.json").read_text()).get("input")
    except (OSError, ValueError, AttributeError):
        return None


def _fail(message: str, code: int) -> None:
    typer.echo(f"aflite: error: {one_line(message)}", err=True)
    sys.exit(code)


def _os_message(e: OSError) -> str:
    """'PATH: what went wrong', from an OSError."""
    why = e.strerror or str(e) or type(e).__name__
    why = why[:1].lower() + why[1:]
    paths = [str(p) for p in (e.filename, e.filename2) if p is not None]
    if paths and e.errno in _WRITE_FAULTS:
        # the system's words, not a library's wrapping of them (pyarrow: "error writing bytes
        # to file. Detail: [errno 28] ...")
        why = os.strerror(e.errno)
        why = why[:1].lower() + why[1:]
        return f"{why} writing {paths[-1]}"  # no space left on device writing OUT/kept.jsonl
    return f"{' -> '.join(paths)}: {why}" if paths else why


# faults that only a write meets
_WRITE_FAULTS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


def main() -> None:
    """Entry point: user mistakes become one line on stderr and exit code 2; faults of the
    file system (disk full, a folder that cannot be written) one line and exit code 1;
    SIGINT and SIGTERM one line and exit code 130 or 143."""
    previous = install_signal_handlers()
    try:
        _main()
    finally:
        restore_signal_handlers(previous)


def _main() -> None:
    try:
        code = app(prog_name="aflite", standalone_mode=False)
    except Interrupted as e:
        hint = "; run the same command with --resume to continue" if e.resumable else ""
        typer.echo(f"aflite: interrupted{hint}", err=True)
        sys.exit(e.exit_code)
    except (DataError, MissingExtraError, ValueError) as e:
        _fail(str(e), 2)
    except FileNotFoundError as e:
        _fail(_os_message(e), 2)
    except OSError as e:
        # the environment, not the data: a full disk, a folder that cannot be written, ...
        _fail(_os_message(e), 1)
    except KeyboardInterrupt:
        # only where no handler could be installed; typer itself returns 130 for it
        typer.echo("aflite: interrupted", err=True)
        sys.exit(130)
    except Exception as e:
        # usage errors from click (typer may vendor its own copy, so match by shape)
        if hasattr(e, "show") and hasattr(e, "exit_code"):
            if hasattr(e, "format_message"):  # a usage error: one line, like every other
                ctx = getattr(e, "ctx", None)
                where = f"; see {ctx.command_path} --help" if ctx is not None else ""
                _fail(e.format_message().rstrip(".") + where, e.exit_code or 2)
            e.show()
            sys.exit(e.exit_code or 2)
        if type(e).__name__ == "Abort":
            typer.echo("aflite: aborted", err=True)
            sys.exit(1)
        raise
    # in non-standalone mode typer returns the code of an Exit (130 for an interrupt typer
    # caught itself) instead of exiting with it
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        sys.exit(code)


# register the other commands on the same app
from aflite.cli import commands as _commands  # noqa: E402,F401
from aflite.cli import experiments as _experiments  # noqa: E402,F401
from aflite.cli import score as _score  # noqa: E402,F401
from aflite.cli import stress as _stress  # noqa: E402,F401

if __name__ == "__main__":
    main()
