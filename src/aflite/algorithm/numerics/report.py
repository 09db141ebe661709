"""How a phase's fits ended: one report for every model family, recorded in each phase's
:class:`~aflite.algorithm.loop.result.PhaseRecord` (``solver``) and in ``summary.json``.

A field a family does not measure stays None and is left out of the record: the iterative
families (logistic regression, the choice-wise model) report iterations, residuals and work;
the exact family reports its form and penalty, and how its iterative forms ended.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

__all__ = ["SolveReport", "shortest_float"]


@dataclass
class SolveReport:
    """How a phase's fits ended.

    ``solver`` names what fitted them (``primal``, ``span``, ``choice``, ``ridge-sparse``,
    ...). The iterative families: ``iterations`` is the most any classifier took,
    ``residual`` the largest final relative gradient norm; ``n_capped`` classifiers stopped at
    ``max_iter`` and ``n_stalled`` where float arithmetic could not lower their objective
    further (their residual is on record). ``n_left_out`` classifiers ended more than
    ``UNUSABLE`` times above the tolerance (stalled or capped): their predictions count in no
    score. ``flops`` counts the floating-point operations of the phase's matrix products,
    fitting and the held-out predictions included; ``products`` names the pass that did them:
    ``blocks`` (block partitions), ``sparse`` (block partitions on raw sparse rows), ``dense``
    (every stored row), ``gathered`` (each part's own rows) or ``span`` (the span solver).

    The exact family: its ``form`` and penalty ``alpha``; ``refine_steps`` (the most
    refinement steps of a direct solve), ``cg_steps`` (conjugate-gradient steps), the parts
    solved again to a tighter tolerance (``tail_parts``, in ``tail_steps``) or directly
    (``direct_parts``), ``fallbacks`` (factorisations that needed a jitter) and ``capped``
    (parts stopped at the step cap).
    """

    solver: str
    form: str | None = None
    alpha: float | None = None
    iterations: int | None = None
    mean_iterations: float | None = None
    residual: float | None = None
    n_capped: int | None = None
    n_stalled: int | None = None
    flops: float | None = None
    products: str | None = None
    n_left_out: int | None = None
    refine_steps: int | None = None
    cg_steps: int | None = None
    direct_parts: int | None = None
    tail_parts: int | None = None
    tail_steps: int | None = None
    fallbacks: int | None = None
    capped: int | None = None

    def to_dict(self) -> dict[str, float | int | str]:
        """The fields this family measured, in the order above (a phase record's ``solver``)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


def shortest_float(value: torch.Tensor) -> float:
    """A float32 scalar as the shortest decimal that reads back to it (9.988996e-05, not
    9.988996316678822e-05), so summaries carry no digits the solver never computed."""
    v = value.detach().cpu().numpy()
    return float(str(v)) if v.dtype == np.float32 else float(v)
