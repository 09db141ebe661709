"""The exact least-squares family (``model="ridge"``): its model (:mod:`.model`), its items
variant (:mod:`.items`) and its solvers (:mod:`.fit` chooses the form: :mod:`.sparse`,
:mod:`.kernel`, :mod:`.direct`, :mod:`.cg`; :mod:`.heldout` certifies the predictions)."""

from aflite._internal.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        name: "aflite.algorithm.models.ridge.model"
        for name in ("FINE_BLOCKS", "RidgeModel", "parts_of_mask")
    },
)
