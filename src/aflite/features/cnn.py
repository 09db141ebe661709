"""Image warm-up representation: a small convolutional network trained from scratch on the
warm-up fraction (the paper used EfficientNet on 20% of ImageNet); its penultimate layer is Phi
for the other images. Plain torch layers, so no torchvision is needed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from aflite.features.warmup import train_warm_rows

__all__ = ["SmallCNN", "warmup_cnn_representation"]


class SmallCNN(nn.Module):
    """Two conv blocks, global average pooling, a hidden layer (Phi) and a classifier."""

    def __init__(self, channels: int, n_classes: int, width: int = 32, hidden: int = 128) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(2 * width, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def warmup_cnn_representation(
    images: np.ndarray,
    labels: np.ndarray,
    warm_rows: np.ndarray,
    rest_rows: np.ndarray,
    *,
    epochs: int = 8,
    batch_size: int = 64,
    lr: float = 2e-3,
    seed: int = 0,
    device: str = "cpu",
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Train :class:`SmallCNN` on ``images[warm_rows]`` (N, H, W, C in [0, 1]); return the
    penultimate-layer features of ``images[rest_rows]``."""
    dev = torch.device(device)
    x = torch.as_tensor(np.ascontiguousarray(images.transpose(0, 3, 1, 2)), dtype=torch.float32)
    mean = x[warm_rows].mean(dim=(0, 2, 3), keepdim=True)
    std = x[warm_rows].std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
    n_classes = int(labels.max()) + 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = SmallCNN(x.shape[1], n_classes).to(dev)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    y = torch.as_tensor(labels, dtype=torch.long)
    warm = torch.as_tensor(warm_rows)
    model.train()

    def loss(positions: torch.Tensor) -> torch.Tensor:
        b = warm[positions]
        return nn.functional.cross_entropy(model(((x[b] - mean) / std).to(dev)), y[b].to(dev))

    train_warm_rows(
        opt,
        len(warm_rows),
        loss,
        epochs=epochs,
        batch_size=batch_size,
        generator=gen,
        min_batch=2,  # batch norm needs two examples
        progress=progress,
    )
    model.eval()
    out = np.empty((len(rest_rows), model.head.in_features), dtype=np.float32)
    with torch.no_grad():
        for s in range(0, len(rest_rows), 512):
            rows = torch.as_tensor(rest_rows[s : s + 512])
            out[s : s + len(rows)] = model.body(((x[rows] - mean) / std).to(dev)).cpu().numpy()
    return out
