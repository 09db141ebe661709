"""Beyond one machine: an optional Ray backend (``pip install 'aflite[ray]'``), and
:func:`register_backend` for one of your own (``backend="name"``, ``--backend name``)."""

from aflite._internal.backends import BACKENDS, register_backend
from aflite.distributed.ray_backend import RayBackend, embed_with_ray

__all__ = ["BACKENDS", "RayBackend", "embed_with_ray", "register_backend"]
