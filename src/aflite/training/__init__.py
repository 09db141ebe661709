"""Hooks into the user's own training: training dynamics written in allenai/cartography's
format (``training_dynamics/dynamics_epoch_N.jsonl``) for ``aflite score --dynamics``, from a
plain PyTorch loop (:class:`DynamicsLogger`) or a Hugging Face ``Trainer``
(:class:`DynamicsCallback`, which needs ``transformers``)."""

from __future__ import annotations

from aflite._internal.lazy import lazy_exports

_EXPORTS = {
    "DynamicsCallback": "aflite.training.hf",
    "DynamicsLogger": "aflite.training.logger",
}
__all__ = list(_EXPORTS)
# transformers is imported only when the callback is asked for
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
