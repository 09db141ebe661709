"""Per-example difficulty and bias scores, all out of sample: AFLITE's predictability, data
maps, PVI, AUM, EL2N, forgetting events and partial-input probabilities, from one registry
(:func:`register_example_scorer`), run by :func:`score_examples`.

One file per scorer; cross-fitting in :mod:`aflite.scoring.crossfit`, training dynamics in
:mod:`aflite.scoring.dynamics`, dynamics logged by allenai/cartography in
:mod:`aflite.scoring.cartography`.
"""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports

_EXPORTS = {
    "ByScorer": "aflite.scoring.filter_by",
    "DEFAULT_SCORERS": "aflite.scoring.run",
    "DynamicsOptions": "aflite.scoring.dynamics",
    "EXAMPLE_SCORERS": "aflite.scoring.registry",
    "ExampleScorer": "aflite.scoring.registry",
    "ExampleScores": "aflite.scoring.run",
    "ScoringContext": "aflite.scoring.registry",
    "TrainingDynamics": "aflite.scoring.dynamics",
    "align_dynamics": "aflite.scoring.cartography",
    "item_scorers": "aflite.scoring.run",
    "load_cartography_dynamics": "aflite.scoring.cartography",
    "record_dynamics": "aflite.scoring.dynamics",
    "register_example_scorer": "aflite.scoring.registry",
    "resolve_scorers": "aflite.scoring.run",
    "score_examples": "aflite.scoring.run",
    "scorer_names": "aflite.scoring.run",
    "spearman": "aflite.scoring.run",
}
__all__ = list(_EXPORTS)
# imported on first use: listing the scorers (the command line's help) loads no torch
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
