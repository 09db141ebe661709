"""A filtered set's data set card: Markdown with YAML front matter in the form the Hugging Face
Hub reads for data set cards (``README.md`` of a data set repository). The front matter holds
the fields the user gave (``license``, ``citation``, ``pretty_name``, ...) and, under
``aflite``, the run's provenance (:mod:`aflite.api.provenance` makes it): aflite's version,
the input's content fingerprint, the features, every option, the counts and biases, the
kept set's fingerprint and per-phase fingerprints of the removed ids, and the command line
and Python call that reproduce it. The Markdown below says the same for a reader;
``aflite verify`` reads the front matter only."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aflite.errors import DataError

__all__ = ["CARD_NAME", "DatasetCard"]

CARD_NAME = "card.md"
# what a card's provenance must hold for verify to read it
_NEEDED = ("version", "input", "fields", "features", "options", "result", "reproduce")


@dataclass(frozen=True)
class DatasetCard:
    """A data set card: ``data``, its front matter (the user's fields, then the ``aflite``
    section); :meth:`text` renders it, :meth:`save` writes it, :meth:`read` reads one back."""

    data: dict[str, Any]

    @property
    def provenance(self) -> dict[str, Any]:
        """The run the card describes (the front matter's ``aflite`` section)."""
        return self.data["aflite"]

    @property
    def version(self) -> str:
        """The aflite version that made the kept set."""
        return str(self.provenance["version"])

    @property
    def kept_fingerprint(self) -> str:
        """The kept set's fingerprint (the first 12 hex digits of the SHA-256 of its sorted
        ids), as ``aflite filter`` prints it."""
        return str(self.provenance["result"]["kept_fingerprint"])

    @property
    def fields(self) -> dict[str, str]:
        """The fields the user gave (``license``, ``citation``, ...)."""
        return {k: v for k, v in self.data.items() if k not in ("aflite", "tags")}

    def text(self) -> str:
        """The card: YAML front matter between ``---`` lines, then Markdown."""
        import yaml

        from aflite.api.card_text import card_body

        front = yaml.dump(
            self.data, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=4096
        )
        return f"---\n{front}---\n\n{card_body(self.data)}"

    def __str__(self) -> str:
        return self.text()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the card to ``path``, or to ``path/README.md`` where ``path`` is a folder (a
        kept set written with ``save_to_disk``: the Hub shows its README as its card), whole
        or not at all; the path written."""
        from aflite._internal.atomic import atomic_path

        target = Path(path)
        if target.is_dir():
            target = target / "README.md"
        with atomic_path(target) as tmp:
            tmp.write_text(self.text(), encoding="utf-8")
        return target

    @classmethod
    def read(cls, path: str | os.PathLike) -> DatasetCard:
        """The card in ``path`` (``card.md``, or a folder's ``README.md``); a file that is no
        aflite card is a one-line DataError naming it."""
        p = Path(path)
        if p.is_dir():
            p = p / "README.md"
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise DataError(f"{p}: no such file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise DataError(f"{p}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
        return cls.parse(text, where=str(p))

    @classmethod
    def parse(cls, text: str, *, where: str = "card") -> DatasetCard:
        """A card from its text (what :meth:`text` writes)."""
        import yaml

        text = text.lstrip("\ufeff")
        head, sep, rest = text.partition("---\n")
        end = rest.find("\n---\n")
        if head.strip() or not sep or end < 0:
            raise DataError(
                f"{where}: not a data set card (no YAML front matter between --- lines)"
            )
        try:
            data = yaml.safe_load(rest[: end + 1])
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            line = f" at line {mark.line + 2}" if mark is not None else ""
            raise DataError(f"{where}: the front matter is not YAML{line}") from None
        own = data.get("aflite") if isinstance(data, dict) else None
        if not isinstance(own, dict):
            raise DataError(
                f"{where}: not an aflite card (its front matter has no 'aflite' section)"
            )
        missing = [k for k in _NEEDED if not isinstance(own.get(k), (dict, str))]
        if missing:
            raise DataError(f"{where}: the card's 'aflite' section lacks '{missing[0]}'")
        return cls(data)


@functools.cache
def _dumper() -> type:
    """A SafeDumper that writes text of several lines (a citation) as a literal block, as a
    reader would type it."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper
