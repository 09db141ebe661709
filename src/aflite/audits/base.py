"""The shape every audit shares: per-item numbers, a one-line summary, details."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AuditResult"]


@dataclass
class AuditResult:
    """``table`` holds the per-item numbers (header + rows), ``summary`` one line, ``details``
    anything else worth saving. Renders to JSON, the terminal and the HTML report alike."""

    name: str
    summary: str
    header: list[str]
    rows: list[list[Any]]
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary,
            "table": {"header": self.header, "rows": self.rows},
            "details": self.details,
        }
