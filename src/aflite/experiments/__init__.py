"""The paper's experiments: the synthetic circles study and the train-on-D / random / filtered
comparison (in-distribution, filtered dev, out-of-distribution)."""

from aflite.experiments.compare import CompareResult, LabelledTexts, compare_experiment
from aflite.experiments.synthetic import SyntheticLevel, make_biased_circles, run_synthetic

__all__ = [
    "CompareResult",
    "LabelledTexts",
    "SyntheticLevel",
    "compare_experiment",
    "make_biased_circles",
    "run_synthetic",
]
