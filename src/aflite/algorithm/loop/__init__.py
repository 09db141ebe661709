"""The filter's loop, on arrays: the one driver of every way of filtering
(:mod:`.filtering`, ``adversarial_filter``), its options (:mod:`.options`), the phases, stops
and records (:mod:`.run`), the rankers a phase asks for scores (:mod:`.rankers`: AFLITE's
ensemble over :mod:`.phases`, or a given score, :mod:`.by_scores`), the partitions
(:mod:`.partitions`), the slice a phase removes (:mod:`.selection`), how settled a decision is
(:mod:`.settle`), the state a checkpoint holds (:mod:`.state`), the result (:mod:`.result`),
progress (:mod:`.progress`), one phase on its own (:mod:`.predictability`) and the checks of
the inputs (:mod:`.inputs`) and sizes (:mod:`.sizes`)."""

from aflite._internal.lazy import lazy_exports

# the loop's one function this package used to be (aflite.algorithm.loop.run_phases)
__getattr__, __dir__ = lazy_exports(
    __name__, {}, deprecated={"run_phases": "aflite.algorithm.loop.run"}
)
