"""Training dynamics from a Hugging Face ``Trainer``: :class:`DynamicsCallback`."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from aflite.errors import MissingExtraError
from aflite.training.logger import DynamicsLogger

try:
    from transformers import TrainerCallback
except ImportError:  # pragma: no cover - the message is the point
    raise MissingExtraError(
        "install transformers (pip install 'aflite[train]') to use DynamicsCallback"
    ) from None

__all__ = ["DynamicsCallback"]


class DynamicsCallback(TrainerCallback):
    """Write the training set's logits after every epoch in allenai/cartography's format.

    Pass the training dataset as the model reads it (tokenized; a ``datasets.Dataset`` or any
    sequence of feature dicts), with its row ids (``ids=`` or an ``id_column``) and gold class
    indices (``label_column``, default ``labels`` or ``label``)::

        trainer = Trainer(model, args, train_dataset=train,
                          callbacks=[DynamicsCallback(train, "dyn")])
        trainer.train()   # then: aflite score data.jsonl --dynamics dyn ...

    At the end of each epoch the model reads every row, in dataset order, in eval mode (no
    dropout) and without gradients, ``batch_size`` rows at a time through ``collator``
    (default: the trainer's own), and ``dyn/training_dynamics/dynamics_epoch_N.jsonl`` is
    written (N from 0; only the main process writes). cartography itself records the logits
    of the training pass, mid-epoch and under dropout; a pass after the epoch gives every row
    the same model, at the cost of one forward pass over the training set per epoch.
    """

    def __init__(
        self,
        dataset: Any,
        output_dir: str | Path | None = None,
        *,
        ids: Any = None,
        id_column: str = "id",
        label_column: str | None = None,
        batch_size: int = 64,
        collator: Any = None,
    ) -> None:
        columns = list(getattr(dataset, "column_names", None) or dataset[0].keys())
        if label_column is None:
            label_column = "labels" if "labels" in columns else "label"
        for name, col in (("label_column", label_column), ("id_column", id_column)):
            if col not in columns and not (name == "id_column" and ids is not None):
                raise ValueError(f"DynamicsCallback: {name} '{col}' is not among {columns}")
        self.ids = list(ids) if ids is not None else _column(dataset, id_column)
        self.gold = [int(v) for v in _column(dataset, label_column)]
        if len(self.ids) != len(dataset) or len(set(map(str, self.ids))) != len(self.ids):
            raise ValueError("DynamicsCallback: ids must be unique, one per row of the dataset")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(
                f"DynamicsCallback: batch_size must be a positive int, got {batch_size!r}"
            )
        self.dataset, self.output_dir = dataset, output_dir
        self.label_column, self.batch_size, self.collator = label_column, batch_size, collator
        self.logger: DynamicsLogger | None = None

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_world_process_zero:
            return
        import torch
        from transformers import default_data_collator

        model = kwargs["model"]
        if self.logger is None:
            self.logger = DynamicsLogger(self.output_dir or args.output_dir)
        if state.epoch:  # a resumed run goes on at its own epoch
            self.logger.epoch = max(int(round(state.epoch)) - 1, 0)
        loader = kwargs.get("train_dataloader")
        collate = self.collator or getattr(loader, "collate_fn", None) or default_data_collator
        accepted = set(inspect.signature(model.forward).parameters) - {"labels", "label"}
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                for s in range(0, len(self.dataset), self.batch_size):
                    e = min(s + self.batch_size, len(self.dataset))
                    rows = [self.dataset[i] for i in range(s, e)]
                    batch = collate([{k: v for k, v in r.items() if k in accepted} for r in rows])
                    batch = {k: v.to(model.device) for k, v in batch.items() if k in accepted}
                    self.logger.log(self.ids[s:e], model(**batch).logits, self.gold[s:e])
            self.logger.end_epoch()
        finally:
            model.train(was_training)


def _column(dataset: Any, name: str) -> list[Any]:
    if hasattr(dataset, "column_names"):
        return list(dataset[name])
    return [row[name] for row in dataset]
