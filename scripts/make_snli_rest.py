"""Build the rest of SNLI 1.0 dev+test for the tests (tests/data/snli_dev_test_rest.jsonl.gz):
every pair of the two splits that the package's slice (src/aflite/data/snli_slice.jsonl) does
not hold, so the slice and this file together are the whole of dev+test, read from inside the
repository. Gzip without a timestamp, so the file is the same on every run.

    python scripts/make_snli_rest.py ../shared/data/snli
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(src: str) -> None:
    slice_rows = (ROOT / "src" / "aflite" / "data" / "snli_slice.jsonl").read_text().splitlines()
    shipped = {json.loads(line)["id"] for line in slice_rows}
    rest = [
        line
        for name in ("dev.jsonl", "test.jsonl")
        for line in (Path(src) / name).read_text().splitlines()
        if json.loads(line)["id"] not in shipped
    ]
    out = ROOT / "tests" / "data" / "snli_dev_test_rest.jsonl.gz"
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write("".join(line + "\n" for line in rest).encode())
    print(f"wrote {len(rest)} pairs beside the slice's {len(shipped)} to {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
