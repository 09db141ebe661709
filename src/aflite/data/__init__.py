"""Data shipped inside the package: a 6,000-pair slice of SNLI 1.0 (CC BY-SA 4.0, Bowman et
al. 2015; see ATTRIBUTION.md) and the identity-word list of the identity PMI audit."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["bundled_snli", "identity_words_path"]


def bundled_snli() -> Path:
    """Path of the SNLI slice shipped inside the package (JSON Lines: id, premise,
    hypothesis, label)."""
    return Path(str(resources.files("aflite.data") / "snli_slice.jsonl"))


def identity_words_path() -> Path:
    """Path of the shipped identity-word list (category<TAB>word per line)."""
    return Path(str(resources.files("aflite.data") / "identity_words.txt"))
