"""Build the multiple-choice slices shipped in the package (src/aflite/data/): 2,000
HellaSwag validation items drawn at random (seed 0, kept in file order) and the 400 COPA
training items as they are.

    python scripts/make_choice_slices.py ../shared/data 2000
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "src" / "aflite" / "data"


def main(src: str, n_items: str) -> None:
    lines = (Path(src) / "hellaswag" / "val.jsonl").read_text().splitlines()
    pick = np.sort(np.random.default_rng(0).choice(len(lines), int(n_items), replace=False))
    rows = [json.loads(lines[i]) for i in pick]
    (OUT / "hellaswag_slice.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    copa = (Path(src) / "copa" / "train.jsonl").read_text().splitlines()
    (OUT / "copa.jsonl").write_text("".join(json.dumps(json.loads(r)) + "\n" for r in copa))


if __name__ == "__main__":
    main(*sys.argv[1:])
