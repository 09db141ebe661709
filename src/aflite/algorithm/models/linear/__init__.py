"""The logistic family (``model="linear"``): its model (:mod:`.model`), the ensemble fit
(:mod:`.ensemble`) and its solvers (:mod:`.primal`, with its passes over a block plan in
:mod:`.block_pass`, and :mod:`.span`)."""

from aflite._internal.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__, {"LinearModel": "aflite.algorithm.models.linear.model"}
)
