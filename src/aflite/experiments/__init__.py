"""The paper's experiments: the synthetic circles study and the train-on-D / random / filtered
comparison (in-distribution, filtered dev, out-of-distribution)."""

from aflite.experiments.compare import CompareResult, LabelledTexts, compare_experiment
from aflite.experiments.evaluators import EVALUATORS, register_evaluator
from aflite.experiments.synthetic import SyntheticLevel, make_biased_circles, run_synthetic

__all__ = [
    "EVALUATORS",
    "CompareResult",
    "LabelledTexts",
    "SyntheticLevel",
    "compare_experiment",
    "make_biased_circles",
    "register_evaluator",
    "run_synthetic",
]
