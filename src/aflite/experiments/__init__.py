"""The paper's experiments: the synthetic circles study and the train-on-D / random / filtered
comparison (in-distribution, filtered dev, out-of-distribution)."""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports

_EXPORTS = {
    "EVALUATORS": "aflite.experiments.evaluators",
    "CompareResult": "aflite.experiments.compare",
    "LabelledTexts": "aflite.experiments.sets",
    "SyntheticLevel": "aflite.experiments.synthetic",
    "compare_experiment": "aflite.experiments.compare",
    "make_biased_circles": "aflite.experiments.synthetic",
    "register_evaluator": "aflite.experiments.evaluators",
    "run_synthetic": "aflite.experiments.synthetic",
}
__all__ = list(_EXPORTS)
# imported on first use: the command line lists the evaluators without loading torch
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
