"""Data shipped inside the package: a 6,000-pair slice of SNLI 1.0 (CC BY-SA 4.0, Bowman et
al. 2015), two multiple-choice sets -- 2,000 HellaSwag validation items (MIT, Zellers et al.
2019) and the 400 COPA training items (BSD 2-clause, Roemmele et al. 2011); see
ATTRIBUTION.md -- and the identity-word list of the identity PMI audit."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["bundled_copa", "bundled_hellaswag", "bundled_snli", "identity_words_path"]


def bundled_snli() -> Path:
    """Path of the SNLI slice shipped inside the package (JSON Lines: id, premise,
    hypothesis, label)."""
    return Path(str(resources.files("aflite.data") / "snli_slice.jsonl"))


def bundled_hellaswag() -> Path:
    """Path of the HellaSwag slice shipped inside the package (JSON Lines: ind,
    ctx_with_activity_label, label (0-based), endings (4 strings))."""
    return Path(str(resources.files("aflite.data") / "hellaswag_slice.jsonl"))


def bundled_copa() -> Path:
    """Path of the COPA items shipped inside the package (JSON Lines: premise, choice1,
    choice2, question, label (0-based), idx)."""
    return Path(str(resources.files("aflite.data") / "copa.jsonl"))


def identity_words_path() -> Path:
    """Path of the shipped identity-word list (category<TAB>word per line)."""
    return Path(str(resources.files("aflite.data") / "identity_words.txt"))
