"""The exact least-squares family (``model="ridge"``): scikit-learn's ``RidgeClassifier`` on
every training part, all partitions of a phase solved in closed form, the same scores on any
machine; and its variant for multiple-choice items (``"choice-ridge"``, which ``"ridge"``
runs on (N, K, d) features).

Its settings are :class:`~.settings.RidgeEnsemble`; its model (:mod:`.model`) fits every part
through :mod:`.fit`, the one certify-and-refine driver of its forms: conjugate gradients on
raw sparse rows (:mod:`.sparse`), a t x t system per part on the kernel of the stored rows
(:mod:`.kernel`), or a d x d one from its blocks' Gram matrices (:mod:`.direct`);
:mod:`.heldout` certifies the held-out predictions. The items variant is :mod:`.items`. On
rows held in shards elsewhere (a distributed backend's) :mod:`.sharded` solves every part by
conjugate gradients over the shards, and certifies the same counts.
"""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports
from aflite.algorithm.models.contract import Model, register_model
from aflite.algorithm.models.ridge.settings import RidgeEnsemble
from aflite.algorithm.numerics.item_store import choice_store, item_chance

__all__ = ["ChoiceRidgeModel", "RidgeEnsemble", "RidgeModel"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RidgeModel": "aflite.algorithm.models.ridge.model",
        "ChoiceRidgeModel": "aflite.algorithm.models.ridge.items",
    },
)

# Closed-form fits make a partition cheap: 512 of them by default, whose scores move less from
# seed to seed than 64 do (docs/algorithm.md, "One filtered set"). A phase's held-out work
# grows as N x m, so on larger sets m falls as N grows, keeping a default run no slower than
# logistic regression's 64 partitions (N=550,000, d=1,024: 65 s a phase at 512 against 22 s
# for logistic regression; benchmarks/bench_snli_scale.py). Where a part holds more rows than
# there are features (t > d), each part's d x d factorisation grows as d^3, so m also falls
# past d = 512 (SNLI dev MiniLM pairs, d=1,536, t=20%: 86 s at 512 against 21 s).
AUTO_ROWS = 50_000
AUTO_DIM = 512


def auto_partitions(n_rows: int, dim: int | None = None, train: int | None = None) -> int:
    """m for ``n_partitions="auto"`` on ``n_rows`` rows (or items) of ``dim`` features, parts
    of ``train`` rows: 512 x min(1, AUTO_ROWS / n_rows, (AUTO_DIM / dim)^3 where train > dim),
    rounded down to a power of two, at least 64."""
    share = min(1.0, AUTO_ROWS / max(n_rows, 1))
    if dim and train and train > dim:
        share = min(share, (AUTO_DIM / dim) ** 3)
    m = int(512 * share)
    return 512 if m >= 512 else max(64, 1 << (m.bit_length() - 1)) if m else 64


_EXACT = {"exact": True, "blocks": True, "n_partitions": auto_partitions}


def _is_ridge(model: object) -> bool:
    return isinstance(model, RidgeEnsemble)


# "auto", the default of the command line, chose ridge where a training part had at most as
# many rows as features and logistic regression elsewhere; judged by what a probe can still
# learn from the kept rows, ridge did as well or better at every shape measured, kept one set
# under a shuffle where logistic regression did not, and was more stable from seed to seed
# (docs/algorithm.md, "Model families"): it is now another name of ridge
def _over_shards(settings: RidgeEnsemble | None) -> Model:
    from aflite.algorithm.models.ridge.sharded import ShardedRidgeModel

    return ShardedRidgeModel(settings)


@register_model(
    "ridge",
    aliases=("auto",),
    description="exact least-squares classifiers (RidgeClassifier), every partition in closed "
    "form (the default; also 'auto')",
    accepts=_is_ridge,
    items="choice-ridge",
    distributed=True,
    sharded=_over_shards,
    **_EXACT,
)
def ridge(settings: RidgeEnsemble | None) -> Model:
    from aflite.algorithm.models.ridge.model import RidgeModel

    return RidgeModel(settings)


@register_model(
    "choice-ridge",
    description="exact least-squares model of multiple-choice items (model='ridge' on (N, K, d))",
    fits="items",
    items="choice-ridge",
    distributed=True,
    store=choice_store,
    chance=item_chance,
    **_EXACT,
)
def choice_ridge(settings: RidgeEnsemble | None) -> Model:
    from aflite.algorithm.models.ridge.items import ChoiceRidgeModel

    return ChoiceRidgeModel(settings)
