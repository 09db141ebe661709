"""Table-3 protocol (Le Bras et al. 2020): train evaluators on the full data D, on a random
subset D_n of the filtered size, and on the filtered set D(Phi); evaluate on the original dev
set, on the dev set filtered by the same procedure, and on any out-of-distribution sets."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import aflite
from aflite.defaults import FILTER_DEFAULTS as D
from aflite.defaults import overrides
from aflite.experiments.evaluators import EVALUATORS, check_evaluator, evaluate, make_evaluator
from aflite.experiments.labels import check_label_map, label_space

__all__ = ["LabelledTexts", "CompareResult", "compare_experiment", "EVALUATORS"]


@dataclass
class LabelledTexts:
    """Text fields and labels of one split; ``ids`` (optional) find its rows in a
    pre-computed feature file."""

    texts: dict[str, list[str]]
    labels: np.ndarray
    ids: list[Any] | None = None

    def subset(self, idx: np.ndarray) -> LabelledTexts:
        return LabelledTexts(
            {k: [v[i] for i in idx] for k, v in self.texts.items()},
            self.labels[idx],
            None if self.ids is None else [self.ids[i] for i in idx],
        )

    def fingerprint(self, *, with_ids: bool = False) -> str:
        """A digest of the field names and texts (and ids): equal texts, equal embeddings."""
        h = hashlib.sha256()
        for name, values in self.texts.items():
            h.update(f"{name}\x1e{len(values)}\x1e".encode())
            for v in values:
                h.update(v.encode("utf-8", "surrogatepass") + b"\x1f")
        if with_ids and self.ids is not None:
            h.update("\x1d".join(map(str, self.ids)).encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:24]

    def __len__(self) -> int:
        return len(self.labels)


@dataclass
class CompareResult:
    """Accuracy of each evaluator trained on each training set, on each evaluation set."""

    rows: list[dict[str, Any]]
    sizes: dict[str, int]
    eval_sets: list[str]
    filter_summary: str
    details: dict[str, Any] = field(default_factory=dict)

    def table(self, *, with_deltas: bool = True) -> tuple[list[str], list[list[Any]]]:
        header = ["evaluator", "trained on", "size"] + self.eval_sets
        out = []
        base: dict[tuple[str, str], float] = {}
        for r in self.rows:
            if r["train"] == "D":
                for e in self.eval_sets:
                    base[(r["evaluator"], e)] = r[e]
        for r in self.rows:
            cells = []
            for e in self.eval_sets:
                v = r[e]
                d = v - base.get((r["evaluator"], e), v)
                cells.append(
                    f"{v:.3f}" + (f" ({d:+.3f})" if with_deltas and r["train"] != "D" else "")
                )
            out.append([r["evaluator"], r["train"], r["size"]] + cells)
        return header, out

    def markdown(self) -> str:
        header, rows = self.table()
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "sizes": self.sizes,
            "eval_sets": self.eval_sets,
            "filter_summary": self.filter_summary,
            "details": self.details,
        }


def compare_experiment(
    train: LabelledTexts,
    dev: LabelledTexts,
    *,
    features: str = "ngrams",
    partial_field: str | None = None,
    evaluators: Sequence[str] | None = None,
    ood: dict[str, LabelledTexts] | None = None,
    groups: np.ndarray | None = None,
    dev_groups: np.ndarray | None = None,
    target_size: int | float = D["target_size"],
    n_partitions: int = D["n_partitions"],
    train_size: int | float = D["train_size"],
    slice_size: int | float = D["slice_size"],
    threshold: float = D["threshold"],
    min_bias: float | None = D["min_bias"],
    balance: str | None = D["balance"],
    strategy: str = D["strategy"],
    warmup_fraction: float | None = None,
    warmup_finetune: bool = False,
    cache_dir: str | None = None,
    device: str = "auto",
    seed: int = 0,
    label_map: dict[Any, Any] | None = None,
    progress: bool = False,
) -> CompareResult:
    """Run the protocol (the paper's Table 3): train ``evaluators`` on D, a random D_n of the
    filtered size and the filtered D(Phi); score them on dev, on dev filtered by the same
    procedure, and on each ``ood`` set.

    The filter options are those of ``aflite filter`` with its defaults
    (:data:`aflite.defaults.FILTER_DEFAULTS`); sizes given as counts apply to D, and dev is
    filtered to the same fractions. Every arm uses one representation
    (:func:`~aflite.experiments.represent.shared_representation`): ``features`` is any text
    ``--features`` spec, fitted on the training file, optionally through a warm-up model
    (``warmup_fraction``, ``warmup_finetune``; the warm-up rows are then not part of D);
    embeddings go through the cache in ``cache_dir``. ``evaluators`` are names from
    ``EVALUATORS`` (all by default) or ``sklearn.MODULE.Class``.

    Every evaluation set must carry labels the models were trained on; a set with other labels
    (HANS: entailment / non-entailment for a 3-class NLI model) is scored through
    ``label_map``, which maps predicted labels to the set's (``{"neutral": "non-entailment",
    "contradiction": "non-entailment"}``). Sets within the training labels are scored as they
    are. A set that fits neither is a DataError naming it and its unseen labels.
    """
    from aflite._internal.device import resolve_device
    from aflite.algorithm.filtering import check_filter_options
    from aflite.experiments.represent import shared_representation

    fields = list(train.texts)
    partial_field = partial_field or fields[-1]
    evaluators = list(EVALUATORS) if evaluators is None else list(evaluators)
    for name in evaluators:
        check_evaluator(name)
    ood = ood or {}
    trained = np.unique(train.labels)
    check_label_map(label_map, trained)
    spaces = {"dev": label_space("dev", dev.labels, trained, label_map)}
    for name, data in ood.items():
        spaces[name] = label_space(name, data.labels, trained, label_map)
    options = {
        "target_size": target_size, "n_partitions": n_partitions, "train_size": train_size,
        "slice_size": slice_size, "threshold": threshold, "min_bias": min_bias,
        "balance": balance, "strategy": strategy,
    }  # fmt: skip
    device = str(resolve_device(device))

    rep = shared_representation(
        train, features=features, warmup_fraction=warmup_fraction,
        warmup_finetune=warmup_finetune, groups=groups, cache_dir=cache_dir, device=device,
        seed=seed,
    )  # fmt: skip
    rest = rep.rest
    d_train = train.subset(rest)
    d_groups = None if groups is None else np.asarray(groups)[rest]
    dev_options = _as_fractions(options, len(rest))
    check_filter_options(len(rest), **_checked(options))
    check_filter_options(len(dev), **_checked(dev_options))
    phi_train, phi_dev = rep.phi, rep.represent(dev)
    common = dict(device=device, progress=progress, seed=seed)
    res = aflite.filter(phi_train, d_train.labels, groups=d_groups, **options, **common)
    rng = np.random.default_rng(seed)
    random_idx = np.sort(rng.choice(len(rest), len(res.kept), replace=False))
    dev_res = aflite.filter(phi_dev, dev.labels, groups=dev_groups, **dev_options, **common)

    train_sets = {
        "D": np.arange(len(rest)),
        "D_n (random)": random_idx,
        "D(Phi) (AFLITE)": res.kept,
    }
    eval_sets = {
        "dev": (dev, phi_dev),
        "dev (filtered)": (dev.subset(dev_res.kept), phi_dev[dev_res.kept]),
    }
    set_space = {"dev": spaces["dev"], "dev (filtered)": spaces["dev"]}
    for name, data in ood.items():
        key = name if name not in eval_sets else f"{name} (ood)"
        eval_sets[key] = (data, rep.represent(data))
        set_space[key] = spaces[name]

    rows = []
    for ev_name in evaluators:
        for tr_name, idx in train_sets.items():
            part = d_train.subset(idx)
            ev = make_evaluator(ev_name, fields, partial_field, seed).fit(part, phi_train[idx])
            row = {"evaluator": ev_name, "train": tr_name, "size": int(len(idx))}
            for es_name, (data, phi) in eval_sets.items():
                # a subset may lack a class: check against what this model saw
                space = label_space(es_name, data.labels, np.unique(part.labels), label_map)
                row[es_name] = evaluate(ev, data, phi, space)
            rows.append(row)
    return CompareResult(
        rows=rows,
        sizes={k: int(len(v)) for k, v in train_sets.items()}
        | {"dev": len(dev), "dev (filtered)": len(dev_res.kept), "warm-up": len(rep.warm_rows)},
        eval_sets=list(eval_sets),
        filter_summary=res.summary(),
        details={
            "features": features,
            "filter_options": overrides(options),
            # each filter scores its kept rows at the t it resolved on its initial set
            "train_bias": [res.initial_bias, res.final_bias],
            "dev_bias": [dev_res.initial_bias, dev_res.final_bias],
            "bias_train_size": {"D": res.params["train_size"], "dev": dev_res.params["train_size"]},
            "label_map": {str(k): str(v) for k, v in (label_map or {}).items()},
            "mapped_sets": [k for k, v in set_space.items() if v],
            "sets_represented": rep.n_embedded,
        },
    )


def _as_fractions(options: dict[str, Any], n: int) -> dict[str, Any]:
    """Sizes given as row counts of D, as fractions, so dev is filtered in proportion."""
    out = dict(options)
    for key in ("target_size", "train_size", "slice_size"):
        v = out[key]
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[key] = min(max(float(v) / n, 1e-9), 1 - 1e-9)
    return out


def _checked(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "n_partitions"}
