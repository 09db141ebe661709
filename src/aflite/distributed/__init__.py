"""Beyond one machine: an optional Ray backend (``pip install 'aflite[ray]'``)."""

from aflite.distributed.ray_backend import RayBackend, embed_with_ray

__all__ = ["RayBackend", "embed_with_ray"]
