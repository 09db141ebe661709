"""The Markdown of a data set card, below its front matter: what a reader of the Hub's page
needs, made from the front matter alone (:class:`~aflite.api.card.DatasetCard`), so the two
never disagree."""

from __future__ import annotations

from typing import Any

from aflite.algorithm.loop.result import STOP_REASONS

__all__ = ["card_body"]

_CITATION = (
    "Ronan Le Bras, Swabha Swayamdipta, Chandra Bhagavatula, Rowan Zellers, Matthew E. Peters, "
    "Ashish Sabharwal and Yejin Choi. 2020. *Adversarial Filters of Dataset Biases.* ICML 2020."
)


def card_body(data: dict[str, Any]) -> str:
    """The card's Markdown for its front matter ``data``."""
    p = data["aflite"]
    rows, res = p["result"]["rows"], p["result"]
    unit = f"{res.get('unit', 'row')}s"
    title = data.get("pretty_name") or f"{p['input']['name']} filtered with AFLITE"
    lines = [
        f"# {_cell(title)}",
        "",
        f"The {rows['kept']:,} {unit} kept of {rows['filtered']:,} by AFLITE (adversarial "
        f"filtering of data set biases) with aflite {p['version']}: {unit} that simple models "
        f"trained on the features `{p['features']['spec']}` predicted too easily were removed.",
        "",
        "| | |",
        "|---|---|",
        f"| kept-set fingerprint | `{res['kept_fingerprint']}` |",
        f"| input | {_cell(p['input']['name'])}, {p['input']['rows']:,} {unit}, content "
        f"fingerprint `{p['input']['fingerprint']}` |",
        f"| features | {_features(p['features'])} |",
        f"| options | {_options(p['resolved'], unit)} |",
        f"| stopped | {_cell(STOP_REASONS.get(res['stop_reason'], res['stop_reason']))} |",
        f"| representation bias | {_bias(res['representation_bias'])} |",
        *_seed_check(res.get("seed_check"), unit),
        "",
        f"## {unit.capitalize()} by class"
        + (" (the answer's position)" if unit == "items" else ""),
        "",
        "| class | filtered | kept | removed |",
        "|---|---|---|---|",
        *(
            f"| {_cell(c)} | {n['filtered']:,} | {n['kept']:,} | {n['removed']:,} |"
            for c, n in res["classes"].items()
        ),
        "",
        "## Reproduce",
        "",
    ]
    reproduce = p["reproduce"]
    if reproduce.get("command"):
        lines += ["```bash", reproduce["command"], "```", ""]
    if reproduce.get("python"):
        lines += ["```python", "import aflite", "", f"out = {reproduce['python']}", "```", ""]
    lines += [
        "## Verify",
        "",
        "Re-run the filter from this card on the input and compare the kept sets' "
        "fingerprints (exit code 0: the same kept set; 1: it differs; 3: it differs and was "
        "made with another aflite version or encoder; 2: a bad card or input):",
        "",
        "```bash",
        f"pip install aflite=={p['version']}",
        reproduce["verify"],
        "```",
        "",
    ]
    if data.get("license"):
        lines += ["## Licence", "", _cell(str(data["license"])), ""]
    lines += ["## Citation", ""]
    if data.get("citation"):
        lines += ["```", str(data["citation"]).rstrip(), "```", "", "Filtered with AFLITE:", ""]
    lines += [_CITATION, ""]
    return "\n".join(lines)


def _cell(text: Any) -> str:
    """Text for one line of Markdown (a table's cell): no line breaks, no column marks."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _features(f: dict[str, Any]) -> str:
    extra = ", ".join(
        f"{k} {v}" for k, v in f.items() if k not in ("spec", "kind") and v is not None
    )
    return f"`{_cell(f['spec'])}`" + (f" ({_cell(extra)})" if extra else "")


def _options(r: dict[str, Any], unit: str) -> str:
    shown = [
        f"family {r.get('model_family')}",
        f"{r.get('n_partitions')} partitions ({r.get('partitions')})",
        f"target {r.get('target_size')} {unit}",
        f"training part {r.get('train_size')} {unit}",
        f"slice {r.get('slice_size')} {unit}",
        f"threshold {r.get('threshold')}",
        f"seed {r.get('seed')}",
    ]
    return _cell(", ".join(shown))


def _seed_check(check: dict[str, Any] | None, unit: str) -> list[str]:
    if not check:
        return []
    return [
        f"| another seed | seed {check['seed']} removed {check['removed']:,} {unit}, "
        f"{check['removed_by_both']:,} of them also removed by this run (removed-set Jaccard "
        f"{check['jaccard']:.3f}); its kept set `{check['kept_fingerprint']}` |"
    ]


def _bias(b: dict[str, Any]) -> str:
    def num(v: Any) -> str:
        return "not measured" if v is None else f"{v:.3f}"

    return (
        f"{num(b['before'])} (chance {num(b['chance_before'])}) before, "
        f"{num(b['after'])} (chance {num(b['chance_after'])}) after"
    )
