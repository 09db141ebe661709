"""Beyond one machine: an optional Ray backend (``pip install 'aflite[ray]'``) whose workers
hold the rows in shards (:class:`~aflite.ShardedFeatures` for an input in parts), and
:func:`register_backend` for one of your own (``backend="name"``, ``--backend name``)."""

from aflite._internal.backends import BACKENDS, register_backend
from aflite.algorithm.numerics.shards import ShardedFeatures
from aflite.distributed.ray_backend import RayBackend, embed_to_parts, embed_with_ray

__all__ = [
    "BACKENDS",
    "RayBackend",
    "ShardedFeatures",
    "embed_to_parts",
    "embed_with_ray",
    "register_backend",
]
