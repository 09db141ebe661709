"""Show that a change leaves a run's outputs as they were: the demo, a run with audits before
and after, and a run by a per-example score, each run by an earlier revision and by this tree,
their files compared byte for byte (JSON documents field by field, timings left out).

    python scripts/same_outputs.py REV        # e.g. a tag, or HEAD~5

Prints one line per output file: ``same``, or the fields that differ (the report, which
shows each phase's seconds and the input's path, by the number of lines that differ).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNLI = "src/aflite/data/snli_slice.jsonl"
RUNS = {
    "demo": ["demo"],
    "audits": ["filter", SNLI, "--text-fields", "hypothesis", "--group-field", "premise",
               "--audits", "pmi,partial"],
    "by": ["filter", SNLI, "--text-fields", "hypothesis", "--by", "pvi", "--min-bias", "0.02"],
}  # fmt: skip
# what changes from run to run, or with where the tree is
VOLATILE = {"seconds", "input", "versions", "created", "elapsed"}


def run(tree: Path, name: str, out: Path) -> Path:
    args = [a if a != SNLI else str(tree / SNLI) for a in RUNS[name]]
    env = os.environ | {"PYTHONPATH": str(tree / "src"), "OMP_NUM_THREADS": "1"}
    target = out / name
    subprocess.run(
        [sys.executable, "-m", "aflite", *args, "--out-dir", str(target), "--quiet"],
        check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return target


def differences(a: object, b: object, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k in VOLATILE:
                continue
            if k not in a or k not in b:
                out.append(f"{path}{k} ({'added' if k in b else 'removed'})")
            else:
                out += differences(a[k], b[k], f"{path}{k}.")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}{i}.")]
    return [] if a == b else [path.rstrip(".")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the earlier revision to compare with")
    rev = parser.parse_args().rev
    with tempfile.TemporaryDirectory() as tmp:
        earlier = Path(tmp) / "earlier"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach",
                        str(earlier), rev], check=True)  # fmt: skip
        try:
            for name in RUNS:
                a, b = run(earlier, name, Path(tmp) / "a"), run(ROOT, name, Path(tmp) / "b")
                files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
                files += sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()
                                and not (a / p.relative_to(b)).exists())  # fmt: skip
                for rel in files:
                    fa, fb = a / rel, b / rel
                    if not (fa.exists() and fb.exists()):
                        print(f"{name}/{rel}: {'added' if fb.exists() else 'removed'}")
                    elif fa.read_bytes() == fb.read_bytes():
                        print(f"{name}/{rel}: same")
                    elif rel.suffix == ".json":
                        diff = differences(json.loads(fa.read_text()), json.loads(fb.read_text()))
                        print(f"{name}/{rel}: " + ("same but for timings and paths" if not diff
                                                   else "differs in " + ", ".join(diff)))  # fmt: skip
                    elif rel.suffix == ".html":  # it shows each phase's seconds, the input
                        la, lb = (
                            f.read_text().replace("><", ">\n<").splitlines() for f in (fa, fb)
                        )
                        n = sum(x != y for x, y in zip(la, lb)) + abs(len(la) - len(lb))
                        print(f"{name}/{rel}: differs in {n} lines (timings, the input's path)")
                    else:
                        print(f"{name}/{rel}: differs")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(earlier)], check=False)  # fmt: skip


if __name__ == "__main__":
    main()
