"""aflite's numerics are its own: a run's products at the precision the solvers were built
for, whatever the calling program set.

Training scripts often turn on TF32 (``torch.backends.cuda.matmul.allow_tf32 = True``) or
``torch.set_float32_matmul_precision("medium")`` (bfloat16 products on CPUs that have them),
or run inside ``torch.autocast``. A float32 product then keeps about 10 bits: the logistic
solver's gradients stall far above its tolerance, and the exact family's float32 factors stop
converging under refinement. :func:`own_numerics` sets full float32 products and no autocast
for the duration of a phase, and puts the caller's settings back afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["own_numerics"]


@contextlib.contextmanager
def own_numerics() -> Iterator[None]:
    """Full-precision float32 matrix products (CPU and CUDA) and autocast off in this thread,
    restored on exit. The matmul precision is a process-wide setting: products elsewhere in
    the program run at full precision too while the block is open."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.autocast("cpu", enabled=False))
            if torch.cuda.is_available():
                stack.enter_context(torch.autocast("cuda", enabled=False))
            yield
    finally:
        torch.set_float32_matmul_precision(before)
