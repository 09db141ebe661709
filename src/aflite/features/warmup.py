"""The paper's warm-up representation: a model trained on a small random fraction of the data
provides Phi for the rest, and the warm-up rows are not filtered (they would leak it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

# the split lives with the other rows a run sets aside before filtering; still named here
from aflite.io.decisions import split_warmup

if TYPE_CHECKING:  # imported where used: a run splits off its warm-up rows before torch loads
    import torch

__all__ = [
    "split_warmup",
    "train_warm_rows",
    "warmup_representation",
    "fit_warmup_head",
    "WarmupHead",
]


def train_warm_rows(
    optimizer: torch.optim.Optimizer,
    n_rows: int,
    batch_loss: Callable[[torch.Tensor], torch.Tensor],
    *,
    epochs: int,
    batch_size: int,
    generator: torch.Generator,
    min_batch: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """The one training loop of every warm-up model (the MLP head, the image CNN, the tuned
    encoder): ``epochs`` passes over ``n_rows`` warm-up rows in mini-batches of
    ``batch_size``, shuffled by ``generator`` on the CPU, one ``optimizer`` step on
    ``batch_loss(b)`` each, ``b`` the batch's positions among the warm-up rows (batches of
    fewer than ``min_batch`` rows skipped); ``progress(done, steps)`` after each step."""
    import torch

    steps = epochs * -(-n_rows // batch_size)
    done = 0
    for _ in range(epochs):
        order = torch.randperm(n_rows, generator=generator)
        for s in range(0, n_rows, batch_size):
            b = order[s : s + batch_size]
            if len(b) < min_batch:
                continue
            optimizer.zero_grad()
            loss = batch_loss(b)
            loss.backward()
            optimizer.step()
            done += 1
            if progress is not None:
                progress(done, steps)


class WarmupHead:
    """A trained warm-up MLP: ``transform(features)`` is its last hidden layer, Phi."""

    def __init__(self, body: torch.nn.Module, mean: np.ndarray, std: np.ndarray, device: str):
        import torch

        self.body, self.mean, self.std, self.device = body, mean, std, torch.device(device)

    def transform(self, features: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Phi for ``rows`` of ``features`` (all rows by default), in chunks."""
        import torch

        x = np.asarray(features, dtype=np.float32)
        rows = np.arange(len(x)) if rows is None else rows
        width = self.body[-2].out_features
        out = np.empty((len(rows), width), dtype=np.float32)
        with torch.no_grad():
            for s in range(0, len(rows), 8192):
                part = rows[s : s + 8192]
                xb = torch.as_tensor((x[part] - self.mean) / self.std, device=self.device)
                out[s : s + len(part)] = self.body(xb).cpu().numpy()
        return out


def fit_warmup_head(
    features: np.ndarray,
    labels: np.ndarray,
    warm_rows: np.ndarray,
    *,
    hidden: int = 256,
    epochs: int = 40,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    seed: int = 0,
    device: str = "cpu",
) -> WarmupHead:
    """Train an MLP head on the warm-up rows; its last hidden layer gives Phi for any rows.

    ``labels`` are integer codes for all rows. The head is two ReLU layers over standardised
    base features, trained with Adam on cross-entropy.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    torch_dev = torch.device(device)
    x = np.asarray(features, dtype=np.float32)
    mean = x[warm_rows].mean(axis=0)
    std = x[warm_rows].std(axis=0)
    std[std < 1e-8] = 1.0
    n_classes = int(labels.max()) + 1
    d = x.shape[1]
    body = torch.nn.Sequential(
        torch.nn.Linear(d, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden),
        torch.nn.ReLU(),
    )
    head = torch.nn.Linear(hidden, n_classes)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for layer in [*body, head]:
            if isinstance(layer, torch.nn.Linear):
                layer.reset_parameters()
    model = torch.nn.Sequential(body, head).to(torch_dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    xw = torch.as_tensor((x[warm_rows] - mean) / std, device=torch_dev)
    yw = torch.as_tensor(labels[warm_rows], device=torch_dev)
    model.train()

    def loss(b: torch.Tensor) -> torch.Tensor:
        b = b.to(torch_dev)
        return torch.nn.functional.cross_entropy(model(xw[b]), yw[b])

    train_warm_rows(opt, len(warm_rows), loss, epochs=epochs, batch_size=batch_size, generator=gen)
    model.eval()
    return WarmupHead(body, mean, std, device)


def warmup_representation(
    features: np.ndarray,
    labels: np.ndarray,
    warm_rows: np.ndarray,
    rest_rows: np.ndarray,
    *,
    hidden: int = 256,
    epochs: int = 40,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    seed: int = 0,
    device: str = "cpu",
) -> np.ndarray:
    """Train an MLP head on the warm-up rows (:func:`fit_warmup_head`); return its last
    hidden layer for ``rest_rows``."""
    head = fit_warmup_head(
        features,
        labels,
        warm_rows,
        hidden=hidden,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        weight_decay=weight_decay,
        seed=seed,
        device=device,
    )
    return head.transform(features, rest_rows)
