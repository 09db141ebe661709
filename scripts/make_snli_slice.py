"""Build the SNLI slice shipped in the package (src/aflite/data/snli_slice.jsonl).

Takes whole premise groups (one hypothesis per label) from SNLI 1.0 dev+test, so the slice is
stratified by label and premise-level grouping stays meaningful.

    python scripts/make_snli_slice.py ../shared/data/snli 2000
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np


def main(src: str, n_premises: str) -> None:
    groups: dict[str, list[dict]] = defaultdict(list)
    for name in ("dev.jsonl", "test.jsonl"):
        for line in (Path(src) / name).read_text().splitlines():
            row = json.loads(line)
            groups[row["premise"]].append(row)
    complete = [
        rows
        for rows in groups.values()
        if len(rows) == 3
        and sorted(r["label"] for r in rows) == ["contradiction", "entailment", "neutral"]
    ]
    rng = np.random.default_rng(0)
    pick = rng.choice(len(complete), size=int(n_premises), replace=False)
    out = Path(__file__).resolve().parents[1] / "src" / "aflite" / "data" / "snli_slice.jsonl"
    with out.open("w") as fh:
        for i in sorted(pick):
            for row in complete[i]:
                fh.write(json.dumps(row) + "\n")
    print(f"wrote {3 * len(pick)} pairs from {len(complete)} complete premise groups to {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
