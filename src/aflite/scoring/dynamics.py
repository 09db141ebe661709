"""Training dynamics recorded out of fold: per-epoch logits of every row under a softmax
regression that never trained on it.

Classic training-dynamics scores (data maps, AUM, forgetting) read a model's outputs on its
*own* training rows. Here, as for every score of :mod:`aflite.scoring`, each row is read by a
model that never saw it: in each of R repeats of a K-fold cross-fit the K fold models train
by mini-batch gradient descent on the other folds, and after every epoch each row's logits
are recorded under the model of its own fold. A row whose label the other rows contradict
(a flipped label) is then never "learned", instead of being memorised late in training.
All R x K models train at once as batched tensor operations (CPU or CUDA).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "DYNAMICS_OPTIONS",
    "DynamicsOptions",
    "TrainingDynamics",
    "dynamics_of",
    "record_dynamics",
]


@dataclass(frozen=True)
class DynamicsOptions:
    """How the fold models train.

    Each minimises the mean cross-entropy of its mini-batch plus ``0.5 * l2 * ||W||^2``
    with Adam (step ``lr``), from zero weights, on features standardised over all rows, for
    ``epochs`` passes over its training folds in a fresh random order each epoch.

    ``lr="auto"`` is 0.05 / sqrt(d) (1.3e-3 at d = 1,536) and ``batch_size="auto"`` a
    32nd of a model's training rows, within [8, 128]: a small set still gets 32 steps an
    epoch. Chosen so that on SNLI MiniLM pair features (d = 1,536), hypothesis n-grams
    (d = 1,024) and a 12-feature planted set the held-out accuracy is near its best within
    the first epochs and does not fall much after (larger steps overfit within 10 epochs).
    """

    epochs: int = 10
    batch_size: int | str = "auto"
    lr: float | str = "auto"
    l2: float = 1e-4

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size"):
            v = getattr(self, name)
            if name == "batch_size" and v == "auto":
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        if self.lr != "auto" and not (
            isinstance(self.lr, (int, float)) and not isinstance(self.lr, bool) and self.lr > 0
        ):
            raise ValueError(f"lr must be a positive number or 'auto', got {self.lr!r}")
        if not (isinstance(self.l2, (int, float)) and self.l2 >= 0):
            raise ValueError(f"l2 must be a number >= 0, got {self.l2!r}")


DYNAMICS_OPTIONS: dict[str, Any] = asdict(DynamicsOptions())


@dataclass
class TrainingDynamics:
    """Held-out logits per row, repeat and epoch.

    ``logits``: (N, R, E, C) float32; ``gold``: (N,) class codes; ``ids``: the rows' ids
    when the dynamics were read from files (cartography's ``guid``), else None.
    """

    logits: np.ndarray
    gold: np.ndarray
    ids: list[Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n_epochs(self) -> int:
        return self.logits.shape[2]

    def gold_logit(self) -> np.ndarray:
        """(N, R, E) logit of each row's gold label. Deprecated: no score reads it; it goes
        in a later release."""
        import warnings

        warnings.warn(
            "TrainingDynamics.gold_logit is deprecated and goes in a later release",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._at_gold(self.logits)

    def probabilities(self) -> np.ndarray:
        """(N, R, E, C) softmax of the logits, in float64."""
        z = self.logits.astype(np.float64)
        z = np.exp(z - z.max(axis=3, keepdims=True))
        return z / z.sum(axis=3, keepdims=True)

    def gold_probability(self) -> np.ndarray:
        """(N, R, E) probability of the gold label after each epoch."""
        return self._at_gold(self.probabilities())

    def _at_gold(self, values: np.ndarray) -> np.ndarray:
        """(N, R, E) of (N, R, E, C) ``values``: each row's at its gold label."""
        idx = np.broadcast_to(self.gold[:, None, None, None], values.shape[:3] + (1,))
        return np.take_along_axis(values, idx, axis=3)[..., 0]

    def correct(self) -> np.ndarray:
        """(N, R, E) whether the arg-max prediction was the gold label (first index on ties,
        as ``numpy.argmax`` in cartography)."""
        return self.logits.argmax(axis=3) == self.gold[:, None, None]


def record_dynamics(
    x: Any,
    y: np.ndarray,
    n_classes: int,
    folds: np.ndarray,
    *,
    options: DynamicsOptions | None = None,
    seed: int = 0,
    device: Any = "cpu",
) -> TrainingDynamics:
    """Train the R x K fold models of ``folds`` (R, N) and record every row's held-out
    logits after each epoch (see the module docstring)."""
    import torch

    from aflite._internal.device import make_generator, resolve_device
    from aflite.algorithm.numerics.store import FeatureStore

    opt = options or DynamicsOptions()
    dev = resolve_device(device)
    gen = make_generator(seed, torch.device("cpu"))  # the order of rows: same on every device
    xs = FeatureStore(np.asarray(x), dev).standardised()
    n, d = xs.shape
    reps, n_folds = folds.shape[0], int(folds.max()) + 1
    p = reps * n_folds
    yt = torch.as_tensor(y, dtype=torch.int64, device=dev)
    onehot = torch.nn.functional.one_hot(yt, n_classes).to(torch.float32)

    # each model's training rows, padded to the longest with -1
    rows = [np.flatnonzero(folds[r] != k) for r in range(reps) for k in range(n_folds)]
    n_max = max(len(v) for v in rows)
    padded = np.full((p, n_max), -1, dtype=np.int64)
    for j, v in enumerate(rows):
        padded[j, : len(v)] = v
    padded_t = torch.as_tensor(padded)
    lr = 0.05 / float(np.sqrt(d)) if opt.lr == "auto" else float(opt.lr)
    batch = int(np.clip(n_max // 32, 8, 128)) if opt.batch_size == "auto" else opt.batch_size
    is_pad = padded_t < 0
    own = torch.as_tensor(np.arange(reps)[None, :] * n_folds + folds.T, device=dev)  # (N, R)

    w = torch.zeros((p, d, n_classes), device=dev)
    b = torch.zeros((p, n_classes), device=dev)
    state = [torch.zeros_like(t) for t in (w, w, b, b)]  # Adam moments of w and b
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    out = np.empty((n, reps, opt.epochs, n_classes), dtype=np.float32)
    step = 0
    for epoch in range(opt.epochs):
        keys = torch.rand(padded_t.shape, generator=gen).masked_fill_(is_pad, 2.0)
        order = torch.gather(padded_t, 1, torch.argsort(keys, dim=1)).to(dev)
        for s in range(0, n_max, batch):
            idx = order[:, s : s + batch]
            valid = (idx >= 0).to(torch.float32)
            idx = idx.clamp(min=0)
            xb = xs[idx]  # (P, B, d)
            z = torch.baddbmm(b[:, None, :], xb, w)
            g = (torch.softmax(z, dim=2) - onehot[idx]) * valid[..., None]
            g /= valid.sum(dim=1).clamp(min=1.0)[:, None, None]
            grads = (torch.bmm(xb.transpose(1, 2), g) + opt.l2 * w, g.sum(dim=1))
            step += 1
            for param, grad, m, v in ((w, grads[0], *state[:2]), (b, grads[1], *state[2:])):
                m.mul_(beta1).add_(grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = (v / (1 - beta2**step)).sqrt_().add_(eps)
                param.addcdiv_(m, denom, value=-lr / (1 - beta1**step))
        stacked = w.permute(1, 0, 2).reshape(d, p * n_classes)
        for s in range(0, n, 8192):
            z = (xs[s : s + 8192] @ stacked + b.reshape(-1)).view(-1, p, n_classes)
            mine = torch.gather(z, 1, own[s : s + 8192, :, None].expand(-1, -1, n_classes))
            out[s : s + 8192, :, epoch] = mine.cpu().numpy()
    info = {"source": "cross-fit", "n_folds": n_folds, "repeats": reps} | asdict(opt)
    info |= {"lr": lr, "batch_size": batch}
    return TrainingDynamics(out, np.asarray(y, dtype=np.int64), None, info)


def dynamics_of(ctx: Any) -> TrainingDynamics:
    """The training dynamics of a scoring call: those given (``dynamics=``, e.g. read with
    :func:`~aflite.scoring.load_cartography_dynamics`), else recorded once and shared by
    every dynamics scorer of the call."""
    given = ctx.options.get("dynamics")
    if given is not None:
        return given

    def record() -> TrainingDynamics:
        opts = DynamicsOptions(**{k: ctx.options[k] for k in DYNAMICS_OPTIONS})
        return record_dynamics(
            ctx.x, ctx.y, ctx.n_classes, ctx.folds, options=opts, seed=ctx.seed, device=ctx.device
        )

    return ctx.shared("dynamics", record)
