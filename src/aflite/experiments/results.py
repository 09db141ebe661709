"""The compare experiment's result: one record per seed, and the table over seeds (mean ± sample
standard deviation per cell, the difference filtered − random with its spread) that the
terminal, Markdown and JSON outputs all show."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CompareResult", "spread", "RANDOM", "FILTERED"]

FULL, RANDOM, FILTERED = "D", "D_n (random)", "D(Phi) (AFLITE)"
DELTA = "Δ AFLITE − random"


def spread(values: list[float]) -> dict[str, Any]:
    """Mean and sample standard deviation (None for a single value) of ``values``."""
    v = np.asarray(values, dtype=float)
    sd = float(np.std(v, ddof=1)) if len(v) > 1 else None
    return {"mean": float(np.mean(v)), "sd": sd, "values": [float(x) for x in v]}


def _cell(s: dict[str, Any], fmt: str = ".3f", sd_fmt: str = ".3f") -> str:
    text = format(s["mean"], fmt)
    return text if s["sd"] is None else f"{text} ± {format(s['sd'], sd_fmt)}"


@dataclass
class CompareResult:
    """Accuracy of each evaluator trained on each training set, on each evaluation set, for
    each seed in ``seeds``; ``runs[i]`` is the record of ``seeds[i]``."""

    runs: list[dict[str, Any]]
    eval_sets: list[str]
    seeds: list[int]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Per evaluator and training set: ``size`` and each set's mean accuracy, with
        ``spread[set]`` (mean, sd, values over seeds) and ``size_spread``."""
        out = []
        for i, first in enumerate(self.runs[0]["rows"]):
            per_seed = [run["rows"][i] for run in self.runs]
            sizes = spread([r["size"] for r in per_seed])
            row: dict[str, Any] = {
                "evaluator": first["evaluator"],
                "train": first["train"],
                "size": int(sizes["mean"]) if sizes["sd"] in (None, 0.0) else sizes["mean"],
                "size_spread": sizes,
                "spread": {},
            }
            for e in self.eval_sets:
                row["spread"][e] = spread([r[e] for r in per_seed])
                row[e] = row["spread"][e]["mean"]
            out.append(row)
        return out

    @property
    def deltas(self) -> list[dict[str, Any]]:
        """Per evaluator and set: filtered − random accuracy, paired by seed."""
        out = []
        for ev in dict.fromkeys(r["evaluator"] for r in self.runs[0]["rows"]):
            row: dict[str, Any] = {"evaluator": ev, "spread": {}}
            for e in self.eval_sets:
                diffs = [
                    self._acc(run, ev, FILTERED, e) - self._acc(run, ev, RANDOM, e)
                    for run in self.runs
                ]
                row["spread"][e] = spread(diffs)
                row[e] = row["spread"][e]["mean"]
            out.append(row)
        return out

    @property
    def sizes(self) -> dict[str, float]:
        """Mean size of every training and evaluation set over seeds."""
        keys = self.runs[0]["sizes"]
        means = {k: float(np.mean([run["sizes"][k] for run in self.runs])) for k in keys}
        return {k: int(v) if v == int(v) else v for k, v in means.items()}

    @property
    def majority(self) -> dict[str, dict[str, Any]]:
        """Per evaluation set: the share of its most frequent label (the accuracy of always
        answering it), over seeds; the filtered dev set changes with the seed."""
        return {e: spread([run["majority"][e] for run in self.runs]) for e in self.eval_sets}

    @property
    def filter_summary(self) -> str:
        """The filter's summary of each seed's run."""
        if len(self.runs) == 1:
            return self.runs[0]["filter_summary"]
        return "\n".join(
            f"seed {run['seed']}: " + run["filter_summary"].replace("\n", "; ") for run in self.runs
        )

    @property
    def filter_notes(self) -> list[str]:
        """The notes and warnings ``aflite filter`` prints after the filter of D: those of
        every seed once, the others with their seed."""
        per_run = [run.get("filter_notes") or [] for run in self.runs]
        common = [line for line in per_run[0] if all(line in lines for lines in per_run)]
        return common + [
            f"seed {run['seed']}: {line}"
            for run, lines in zip(self.runs, per_run)
            for line in lines
            if line not in common
        ]

    @staticmethod
    def _acc(run: dict[str, Any], evaluator: str, train: str, e: str) -> float:
        return next(
            r[e] for r in run["rows"] if r["evaluator"] == evaluator and r["train"] == train
        )

    def table(self, *, with_deltas: bool = True) -> tuple[list[str], list[list[Any]]]:
        """Header and rows as shown: mean (± sd over seeds) per cell, the mean paired
        difference to D in brackets, and per evaluator a row of filtered − random."""
        header = ["evaluator", "trained on", "size"] + self.eval_sets
        rows = self.rows
        base = {
            (r["evaluator"], e): r["spread"][e]["values"]
            for r in rows
            if r["train"] == FULL
            for e in self.eval_sets
        }
        deltas = {d["evaluator"]: d for d in self.deltas}
        out: list[list[Any]] = []
        for i, r in enumerate(rows):
            cells = []
            for e in self.eval_sets:
                s = r["spread"][e]
                text = _cell(s)
                if with_deltas and r["train"] != FULL:
                    paired = np.subtract(s["values"], base[(r["evaluator"], e)])
                    text += f" ({float(np.mean(paired)):+.3f})"
                cells.append(text)
            size = r["size_spread"]
            size_text = str(r["size"]) if not size["sd"] else _cell(size, ".0f", ".0f")
            out.append([r["evaluator"], r["train"], size_text] + cells)
            last = i + 1 == len(rows) or rows[i + 1]["evaluator"] != r["evaluator"]
            if last and r["evaluator"] in deltas:
                d = deltas[r["evaluator"]]["spread"]
                out.append(
                    [r["evaluator"], DELTA, ""] + [_cell(d[e], "+.3f") for e in self.eval_sets]
                )
        if self.items:
            # beside the accuracies: the best guess from answer positions alone
            chance = self.majority
            out.append(
                ["chance", "answer position", ""] + [_cell(chance[e]) for e in self.eval_sets]
            )
        return header, out

    @property
    def items(self) -> bool:
        """Whether the sets are multiple-choice items (``majority`` then holds each set's
        chance level: max(1/K, the most frequent answer position's share))."""
        return "items" in self.details

    @property
    def bias(self) -> dict[str, dict[str, Any]]:
        """Per filtered set (D, dev): t, and the representation bias before, of the kept rows
        and of a random subset of the kept size, over seeds."""
        out = {}
        for name in self.runs[0]["bias"]:
            recs = [run["bias"][name] for run in self.runs]
            out[name] = {
                "train_size": recs[0]["train_size"],
                "size": spread([r["size"] for r in recs]),
            }
            for key in ("before", "random", "kept"):
                vals = [r[key] for r in recs]
                ok = all(v is not None and np.isfinite(v) for v in vals)
                out[name][key] = spread(vals) if ok else None
        return out

    def bias_table(self) -> tuple[list[str], list[list[Any]]]:
        """Representation bias of each filtered set: before, a random subset of the kept size
        (the control) and the kept rows, at one t."""
        header = ["set", "t", "rows kept", "before", "random subset", "kept"]
        rows = []
        for name, b in self.bias.items():
            size = b["size"]
            size_text = f"{size['mean']:.0f}" if not size["sd"] else _cell(size, ".0f", ".0f")
            rows.append(
                [name, str(b["train_size"]), size_text]
                + [_cell(b[k]) if b[k] else "not measured" for k in ("before", "random", "kept")]
            )
        return header, rows

    def sets_table(self) -> tuple[list[str], list[list[Any]]]:
        """Each evaluation set (a category of an out-of-distribution set included): its rows
        and the accuracy of always answering its most frequent label, over seeds."""
        header = [
            "evaluation set",
            "items" if self.items else "rows",
            "chance" if self.items else "majority rate",
        ]
        sizes, majority = self.sizes, self.majority
        shown = {e: str(v) if isinstance(v, int) else f"{v:.1f}" for e, v in sizes.items()}
        return header, [[e, shown[e], _cell(majority[e])] for e in self.eval_sets]

    def markdown(self) -> str:
        """The table in Markdown: the same cells as the terminal."""
        header, rows = self.table()
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON: per-seed runs, and the rows and differences over seeds."""
        return {
            "seeds": self.seeds,
            "eval_sets": self.eval_sets,
            "rows": self.rows,
            "deltas": self.deltas,
            "sizes": self.sizes,
            "bias": self.bias,
            "majority": self.majority,
            "runs": self.runs,
            "details": self.details,
        }
