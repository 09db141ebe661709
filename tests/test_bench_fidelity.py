"""The fidelity benchmark's --quick run: every arm, every training set, finite numbers."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_fidelity.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_fidelity", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _needs_minilm() -> bool:
    from aflite.features.encoders import resolve_model_path

    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return True
    return resolve_model_path("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"


def _numbers(cell: str) -> list[float]:
    """The floats of a cell: '0.512 ± 0.004 (-0.010)' -> [0.512, 0.004, -0.01]."""
    parts = cell.replace("±", " ").replace("(", " ").replace(")", " ").split()
    return [float(p) for p in parts]


def test_premise_split_holds_out_whole_premises_and_nests():
    bench = _bench()
    premises = [f"p{i // 3}" for i in range(3000)]  # three hypotheses per premise
    train, held = bench.premise_split(premises, None, 0.2)
    assert sorted([*train, *held]) == list(range(3000))
    assert not {premises[i] for i in train} & {premises[i] for i in held}
    assert 0.15 < len(held) / 3000 < 0.25
    small_train, small_held = bench.premise_split(premises, 600, 0.2)
    assert len(small_train) + len(small_held) == 600  # whole premises of three rows
    assert set(small_train) <= set(train) and set(small_held) <= set(held)


@pytest.mark.slow
@pytest.mark.encoder
@pytest.mark.skipif(_needs_minilm(), reason="needs sentence-transformers and packaged MiniLM")
def test_quick_run_has_every_arm_and_finite_numbers(tmp_path, capsys):
    bench = _bench()
    out = tmp_path / "fidelity.json"
    doc = bench.main(["--quick", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "command: python benchmarks/bench_fidelity.py --quick" in printed
    table = [line for line in printed.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| Phi | evaluator | trained on | size | held-out |")
    body = [[c.strip() for c in line.strip("|").split("|")] for line in table[1:]]
    labels = [label for label, _ in bench.ARMS.values()]
    for label in labels:
        arm = [r for r in body if r[0] == label]
        trained = {(r[1], r[2]) for r in arm}
        for ev in bench.EVALUATORS:
            for tr in ("D", "D_n (random)", "D(Phi) (AFLITE)", "Δ AFLITE − random"):
                assert (ev, tr) in trained, (label, ev, tr)
        assert ("majority label", "") in trained
        for r in arm:
            values = [v for cell in r[4:] for v in _numbers(cell)]
            assert len(values) >= 2 and all(math.isfinite(v) for v in values), r
            if r[2] != "Δ AFLITE − random":
                assert all(0 <= _numbers(c)[0] <= 1 for c in r[4:])
    assert len(body) == len(labels) * (4 * len(bench.EVALUATORS) + 1)

    saved = json.loads(out.read_text())
    assert saved["markdown"] == doc["markdown"] and set(saved["arms"]) == set(bench.ARMS)
    for arm in saved["arms"].values():
        assert arm["seeds"] == [0, 1]
        # the same number of rows for the filtered set and its random control, every seed
        for run in arm["runs"]:
            assert run["sizes"]["D(Phi) (AFLITE)"] == run["sizes"]["D_n (random)"]
    assert saved["arms"]["minilm-ft"]["sizes"]["warm-up"] > 0


def test_stress_sets_by_category_and_chosen_evaluators(capsys):
    bench = _bench()
    argv = ["--arms", "ngrams", "--rows", "300", "--seeds", "1", "--evaluators", "partial"]
    arm = bench.main(argv)["arms"]["ngrams"]
    tests = ["length_mismatch", "negation", "spelling_keyboard", "spelling_swap", "word_overlap"]
    assert arm["eval_sets"] == ["dev", "dev (filtered)", "stress"] + [f"stress[{t}]" for t in tests]
    assert {r["evaluator"] for r in arm["rows"]} == {"partial"}
    # every test rewrites each held-out pair once (the SNLI hypotheses all have a long word)
    assert arm["sizes"]["stress[negation]"] == arm["sizes"]["dev"]
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| Phi"))
    assert "| held-out (hard) | stress | stress[length_mismatch] |" in header
    plain = bench.main([*argv, "--no-stress"])["arms"]["ngrams"]
    assert plain["eval_sets"] == ["dev", "dev (filtered)"]
