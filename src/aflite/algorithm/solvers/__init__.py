"""The default model family, fitted m times at once: L2-regularised multinomial logistic
regression, converged to a stated tolerance.

Every classifier of a phase minimises ``C * sum_i CE(x_i W + b, y_i) + 0.5 * ||W||^2`` over its
training part (the intercept is not penalised; features are standardised over all input rows),
the objective of scikit-learn's ``LogisticRegression(C=C)``. Two exact solvers share one
batched L-BFGS:

* ``primal``: the weights of all m classifiers are stacked into one ``d x (m*C)`` matrix, so a
  step is two compute-bound products over the current set; a 0/1 mask says which rows train
  which classifier. Preconditioned by Böhning's bound on the softmax Hessian with the expected
  Gram matrix of a training part.
* ``span``: when a training part is smaller than the feature dimension, each solution lies in
  the span of its own training rows (the representer theorem); the solver works with the
  t x t Gram matrix of each part, preconditioned by that part's exact Böhning bound.

A classifier stops when the norm of its gradient, measured in the preconditioner's metric,
has fallen to ``tol`` times its value at zero; a phase stops when all have, or at
``max_iter`` (a warning names how far from converged the worst classifier was).
"""

from aflite.algorithm.solvers.ensemble import (
    Ensemble,
    LinearEnsemble,
    SolveReport,
    choose_solver,
    fit_ensemble,
    heldout_counts,
    predict_all,
)
from aflite.algorithm.solvers.primal import boehning_inverse

__all__ = [
    "Ensemble",
    "LinearEnsemble",
    "SolveReport",
    "boehning_inverse",
    "choose_solver",
    "fit_ensemble",
    "heldout_counts",
    "predict_all",
]
