"""The report's plots as matplotlib figures, and as inline PNGs (``data:`` URIs).

Legends sit outside the axes, so no line or bar is ever hidden behind one; every label that
comes from the data goes through :func:`aflite._internal.text.plot_text`.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

from aflite._internal.text import plot_text

__all__ = [
    "png_data_uri",
    "phase_figures",
    "label_figure",
    "heatmap_figure",
    "outside_legend",
]


def png_data_uri(fig: Any) -> str:
    """A matplotlib figure as an inline PNG (``data:`` URI); the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def outside_legend(fig: Any, handles: list[Any], labels: list[str]) -> Any:
    """One legend for the whole figure, below every axes and its tick labels, so it covers
    no bar or line (``bbox_inches="tight"`` keeps it in the saved image)."""
    renderer = fig.canvas.get_renderer()
    bottom = min(ax.get_tightbbox(renderer).y0 for ax in fig.axes)
    _, y = fig.transFigure.inverted().transform((0, bottom))
    return fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, y - 0.01),
        ncol=min(3, len(labels)),
        fontsize=8,
        frameon=False,
    )


def _integer_ticks(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def phase_figures(history: list[dict[str, Any]], nouns: str = "rows") -> list[Any]:
    """Rows removed and left per phase with the bias against chance; predictability
    histograms of the first, middle and last phase (``nouns``: what the run filters)."""
    if not history:
        return []
    plt = _pyplot()
    phases = [h["phase"] for h in history]
    removed = [h["n_removed"] for h in history]
    left = [h["size_before"] - h["n_removed"] for h in history]
    bias = [h["representation_bias"] for h in history]
    chance = [h.get("chance") for h in history]
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    bars = ax.bar(phases, removed, color="#90cdf4", label="removed in the phase")
    ax.set_xlabel("phase")
    ax.set_ylabel(nouns)
    (size_line,) = ax.plot(phases, left, color="#2b6cb0", marker=".", label=f"{nouns} left")
    ax.set_ylim(0, max(left + removed) * 1.08)
    _integer_ticks(ax)
    ax2 = ax.twinx()
    handles = [bars, size_line]
    handles += ax2.plot(phases, bias, color="#c05621", marker=".", label="representation bias")
    if all(c is not None for c in chance):
        handles += ax2.plot(
            phases, chance, color="#718096", ls="--", label="chance (majority rate)"
        )
    ax2.set_ylabel("representation bias", color="#c05621")
    ax2.set_ylim(0, 1)
    ax.set_title(f"{nouns.capitalize()} removed and bias per phase")
    outside_legend(fig, handles, [h.get_label() for h in handles])
    out = [fig]

    picks = sorted({0, len(history) // 2, len(history) - 1})
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    edges = np.linspace(0, 1, len(history[0]["score_histogram"]) + 1)
    handles = []
    for i in picks:
        hist = np.asarray(history[i]["score_histogram"], dtype=float)
        if hist.sum():
            handles.append(
                ax.stairs(
                    hist / hist.sum(), edges, label=f"phase {history[i]['phase']}", linewidth=1.6
                )
            )
    ax.set_xlabel("predictability score")
    ax.set_ylabel(f"share of {nouns}")
    ax.set_title("Predictability per phase")
    if handles:
        outside_legend(fig, handles, [h.get_label() for h in handles])
    out.append(fig)
    return out


def label_figure(before: dict[str, int], after: dict[str, int], nouns: str = "rows") -> Any:
    """Rows (``nouns``) per label before filtering and kept."""
    plt = _pyplot()
    labels = sorted(set(before) | set(after))
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    a = ax.bar(x - 0.2, [before.get(k, 0) for k in labels], 0.4, label="before")
    b = ax.bar(x + 0.2, [after.get(k, 0) for k in labels], 0.4, label="kept")
    ax.set_xticks(x, [plot_text(k) for k in labels], rotation=20)
    ax.set_ylabel(nouns)
    ax.set_title("Labels before and after")
    outside_legend(fig, [a, b], ["before", "kept"])
    return fig


def heatmap_figure(cls: str, similarity: Any, n_kept: int, nouns: str = "rows") -> Any:
    """Cosine similarities of sampled kept rows (first) and removed rows (``nouns``) of one
    class; the diagonal (each row with itself) is left blank so the colours show the rest."""
    plt = _pyplot()
    sim = np.array(similarity, dtype=float)
    n = len(sim)
    np.fill_diagonal(sim, np.nan)
    fig, ax = plt.subplots(figsize=(4.4, 4.0))
    im = ax.imshow(sim, cmap="viridis", vmin=-1, vmax=1)
    ax.axhline(n_kept - 0.5, color="w", lw=1)
    ax.axvline(n_kept - 0.5, color="w", lw=1)
    centres = [(n_kept - 1) / 2, n_kept + (n - n_kept - 1) / 2]
    names = [f"kept ({n_kept})", f"removed ({n - n_kept})"]
    ax.set_xticks(centres, names)
    ax.set_yticks(centres, names, rotation=90, va="center")
    ax.set_xlabel(f"sampled {nouns}")
    ax.set_ylabel(f"sampled {nouns}")
    ax.set_title(f"Cosine similarity (centred features), class {plot_text(cls)}", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, label="cosine similarity")
    return fig
