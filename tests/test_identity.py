"""Identity-word PMI (the stereotype audit): exact counts on planted text, the study's findings
on real SNLI, saved counts, queries and their command line."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from aflite.audits import (
    count_cooccurrences,
    count_fields,
    identity_pmi,
    load_counts,
    load_identity_words,
    run_audits,
    save_counts,
)
from aflite.audits.identity import compound_terms
from aflite.audits.text import get_tokenizer, stop_words
from aflite.cli.main import main as cli_main
from aflite.data import bundled_snli

# SNLI 1.0 dev+test: the package's slice and the rest of the two splits beside the tests
SNLI_REST = Path(__file__).resolve().parent / "data" / "snli_dev_test_rest.jsonl.gz"
WOMAN_WORDS = {"skirt", "purse", "heels", "bikini", "dress", "blouse", "headscarf", "gown"}
MAN_WORDS = {"mustache", "beard", "bearded", "balding", "tuxedo", "shirtless"}


def cli(capsys, *args) -> tuple[int, str, str]:
    """Run ``aflite ARGS`` in this process (no interpreter start-up): exit code, out, err."""
    argv, sys.argv = sys.argv, ["aflite", *map(str, args)]
    try:
        cli_main()
        code = 0
    except SystemExit as e:
        code = e.code or 0
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return code, out, err


def _filler(rng, n, k=5, vocab=30):
    return [" ".join(f"w{i}" for i in rng.choice(vocab, k, replace=False)) for _ in range(n)]


def _planted():
    """800 sentences of common filler words (each seen > 100 times); "zebra" 12 times, always
    with "woman"; "african boy" always with "sits dirt"."""
    rng = np.random.default_rng(0)
    texts = [f"woman {s}" for s in _filler(rng, 300)]
    texts += [f"man {s}" for s in _filler(rng, 400)]
    texts += [f"african boy sits dirt {s}" for s in _filler(rng, 30)]
    texts += _filler(rng, 70)
    for i in range(12):
        texts[i * 20] += " zebra"
    return texts


# --- exact behaviour on planted text ---------------------------------------------------------


def test_pmi_matches_a_plain_loop_reference():
    texts = [
        "The woman cooks dinner.",
        "A woman cooks soup",
        "the man drives a truck",
        "Man drives, woman reads",
        "her dinner",
    ] * 3
    counts = count_cooccurrences(texts, min_count=1, dedupe_sentences=False, n_jobs=1)
    stop = stop_words(load_identity_words())
    tok = get_tokenizer()
    sents = [[t for t in tok(s.lower()) if t not in stop] for s in texts]
    grams = [s + [f"{a} {b}" for a, b in itertools.pairwise(s)] for s in sents]
    n = sum(len(s) for s in sents)
    c = {g: sum(gs.count(g) for gs in grams) for g in {g for gs in grams for g in gs}}
    ref = {}
    for g in c:
        if "woman" not in g.split():
            joint = sum(1 for gs in grams if "woman" in gs and g in gs)
            if joint:
                ref[g] = math.log2(n * joint / (c["woman"] * c[g]))
    got = {a.ngram: a.pmi for a in counts.top_associations("woman", 100, ngrams="all")}
    assert got.keys() == ref.keys() and "truck" not in got  # never in a sentence with woman
    assert all(got[g] == pytest.approx(ref[g]) for g in ref)
    assert counts.n_tokens == n and "the" not in counts and "her" in counts  # identity, kept


def test_dedupe_counts_a_repeated_sentence_once_per_field():
    texts = {
        "premise": ["A woman holds a purse."] * 3 + ["A man reads."],
        "hypothesis": ["A woman holds a purse."],
    }
    once = count_fields(texts, min_count=1, n_jobs=1)
    every = count_fields(texts, min_count=1, dedupe_sentences=False, n_jobs=1)
    assert list(once) == ["premise", "hypothesis", "premise+hypothesis"]
    assert once["premise"].count("purse") == 1 and every["premise"].count("purse") == 3
    assert once["premise+hypothesis"].count("purse") == 2  # once in each field
    assert once["premise"].n_sentences == 2 and every["premise"].n_sentences == 4
    assert once["premise"].settings["n_input_sentences"] == 5


def test_parallel_counting_equals_serial():
    texts = [f"woman {i % 7} man {i % 5} child" for i in range(3000)]
    a = count_cooccurrences(texts, min_count=2, dedupe_sentences=False, n_jobs=1, chunk_size=500)
    b = count_cooccurrences(texts, min_count=2, dedupe_sentences=False, n_jobs=2, chunk_size=500)
    assert a.vocab == b.vocab == sorted(a.vocab)
    assert (a.cooc != b.cooc).nnz == 0 and (a.postings != b.postings).nnz == 0


def test_rare_word_ranks_first_at_min_count_10_and_drops_at_100():
    counts = count_cooccurrences(_planted(), min_count=10, n_jobs=1)
    assert counts.n_sentences == 800
    at10 = counts.top_associations("woman", 8, min_count=10)
    assert at10[0] == ("zebra", math.log2(counts.n_tokens / counts.count("woman")), 12, 12)
    at100 = counts.top_associations("woman", 8, min_count=100)
    assert len(at100) == 8 and all(a.count >= 100 for a in at100)
    assert "zebra" not in {a.ngram for a in at100}
    res = identity_pmi(_planted(), min_counts="100,10", n_jobs=1)
    woman = {r[3]: r[4] for r in res[0].rows if r[0] == "woman"}
    assert woman[10].startswith("zebra (12/12),") and "zebra" not in woman[100]
    # woman, man, boy, african / woman, man
    assert res[0].details["surviving"] == {"10": 4, "100": 2}
    assert "4 of 89 identity words occur >= 10" in res[0].summary
    assert "2 of 89 identity words occur >= 100" in res[0].summary


def test_ties_rank_by_joint_count_then_alphabetically():
    # all three occur only with "woman", so their PMI is the same log2(N / c(woman))
    texts = [f"woman bb w{i}" for i in range(12)] + [f"woman aa x{i}" for i in range(12)]
    texts += [f"woman cc y{i}" for i in range(20)] + [f"man z{i}" for i in range(40)]
    counts = count_cooccurrences(texts, min_count=12, n_jobs=1)
    top = counts.top_associations("woman", 3)
    assert [a.ngram for a in top] == ["cc", "aa", "bb"]
    assert top[0].pmi == top[1].pmi == top[2].pmi
    assert [(a.joint, a.count) for a in top] == [(20, 20), (12, 12), (12, 12)]


def test_two_word_term_reports_bigrams_that_share_no_word_with_it(tmp_path):
    counts = count_cooccurrences(_planted(), min_count=10, n_jobs=1)
    assert "african boy" in compound_terms(counts, load_identity_words())
    bigrams = counts.top_associations("African  Boy", 5, ngrams="bigrams")
    assert bigrams[0].ngram == "sits dirt" and bigrams[0].joint == 30
    every = counts.top_associations("african boy", 1000, ngrams="all")
    assert every and not any({"african", "boy"} & set(a.ngram.split()) for a in every)
    assert "boy sits" in counts  # co-occurs every time, yet it is the term's own text
    listed = tmp_path / "ids.txt"
    listed.write_text("race\tafrican\ngroup\tAfrican Boy\n")
    assert compound_terms(counts, load_identity_words(listed)) == {"african boy": "group"}


def test_save_load_round_trip_and_examples(tmp_path):
    views = count_fields(
        {"premise": _planted()[:400], "hypothesis": _planted()[400:]}, min_count=10, n_jobs=1
    )
    path = save_counts(tmp_path / "c.npz", views)
    back = load_counts(path)
    assert back.name == "premise+hypothesis" and back.vocab == views["premise+hypothesis"].vocab
    for name in views:
        a, b = views[name], load_counts(path, name)
        assert a.top_associations("man", 20) == b.top_associations("man", 20)
        assert (a.postings != b.postings).nnz == 0
    n, ex = back.example_sentences("african boy", "sits dirt", 2)
    assert n == 30 and all("african boy sits dirt" in s for s in ex)
    n, ex = load_counts(path, "premise").example_sentences("woman", "zebra", 20)
    assert n == 12 and len(ex) == 12 and all("zebra" in s and "woman" in s for s in ex)
    with pytest.raises(KeyError, match="not in the vocabulary"):
        back.top_associations("qwxzy")
    with pytest.raises(ValueError, match="below the 10"):
        back.top_associations("man", min_count=5)


# --- real SNLI ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def snli_counts():
    lines = bundled_snli().read_text().splitlines()
    lines += gzip.decompress(SNLI_REST.read_bytes()).decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 19_666  # all of dev (9,842) and test (9,824)
    texts = {k: [r[k] for r in rows] for k in ("premise", "hypothesis")}
    return texts, count_fields(texts, min_count=10, n_jobs=1)


def test_snli_no_association_contains_its_query_or_is_contained_in_it(snli_counts):
    _, views = snli_counts
    identity = load_identity_words()
    n_checked = 0
    for cc in views.values():
        queries = [w for w in identity if w in cc] + list(compound_terms(cc, identity))
        for q, m in itertools.product(queries, (10, 100)):
            if cc.count(q) < m:
                continue
            for a in cc.top_associations(q, 20, ngrams="all", min_count=m):
                n_checked += 1
                assert not set(a.ngram.split()) & set(q.split()), (q, a)
    assert n_checked > 2000


def test_snli_man_and_woman_associate_with_appearance_words(snli_counts):
    _, views = snli_counts
    for view in ("premise", "premise+hypothesis"):
        cc = views[view]
        woman = {a.ngram for a in cc.top_associations("woman", 8)}
        man = {a.ngram for a in cc.top_associations("man", 8)}
        assert woman & WOMAN_WORDS, (view, woman)
        assert man & MAN_WORDS, (view, man)
    assert {a.ngram for a in views["hypothesis"].top_associations("man", 8)} & MAN_WORDS


def test_snli_identity_audit_tables(snli_counts):
    texts, views = snli_counts
    results = identity_pmi(texts, counts=views)
    assert [r.name for r in results] == [
        "identity-word PMI (premise): unigrams",
        "identity-word PMI (hypothesis): unigrams",
        "identity-word PMI (premise+hypothesis): unigrams",
        "identity-word PMI: two-word identity terms, bigrams",
    ]
    both = results[2]
    surviving = both.details["surviving"]
    assert int(surviving["10"]) > int(surviving["100"]) > 0
    assert f"{surviving['10']} of " in both.summary and "rare words" in both.details["note"]
    assert both.rows[0][:2] == ["man", "gender"] and both.rows[0][3] == 10
    assert {r[0] for r in both.rows} <= set(load_identity_words())
    assert results[3].rows and all(len(r[1].split()) == 2 for r in results[3].rows)
    assert views["premise"].n_sentences < 0.4 * views["premise"].settings["n_input_sentences"]


# --- rendering and the command line ---------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("counts") / "counts.npz"
    texts = _planted()
    texts[20] = "woman zebra [red]markup[/red] \x1b[31m"  # one of the zebra sentences
    run_audits(
        {"premise": texts[:400], "hypothesis": texts[400:]},
        ["x"] * 400,
        audits=["identity"],
        identity_min_count="100,10",
        save_counts=path,
    )
    return path


def _rows(out):
    """The association rows of a query's output: pmi, joint, count, n-gram."""
    return [r for r in map(str.split, out.splitlines()) if len(r) == 4 and r[1].isdigit()]


def test_cli_query_tables_min_count_and_examples(saved, capsys):
    code, out, err = cli(capsys, "pmi-query", saved, "woman", "--top", "5")
    assert code == 0 and err == "" and "min count 10" in out
    rows = _rows(out)
    assert len(rows) == 5 and rows[0][3] == "zebra" and rows[0][1:3] == ["12", "12"]
    code, out, _ = cli(capsys, "pmi-query", saved, "woman", "--min-count", "100", "--top", "50")
    assert code == 0 and all(int(r[2]) >= 100 for r in _rows(out)) and "zebra" not in out
    code, out, _ = cli(capsys, "pmi-query", saved, "african boy", "--top", "3")
    assert code == 0 and "top 3 unigrams" in out and "bigrams by PMI" in out and "sits dirt" in out
    code, out, _ = cli(
        capsys, "pmi-query", saved, "woman", "--examples", "zebra", "--field", "premise"
    )
    assert code == 0 and "sentences holding 'woman' and 'zebra': 12 (first 5)" in out
    assert "[red]markup[/red] \\x1b[31m" in out and "\x1b" not in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["woman-x"], "'woman-x' is not in the vocabulary of premise+hypothesis"),
        (["a b c"], "only unigrams and bigrams are counted"),
        (["woman", "--examples", "qwxzy"], "'qwxzy' is not in the vocabulary"),
        (["woman", "--field", "title"], "no view 'title' here; saved views: premise, hypothesis"),
        (["woman", "--min-count", "5"], "min count 5 is below the 10"),
        (["african boy", "--min-count", "100"], "occurs 30 times in premise+hypothesis, under"),
        (["woman", "--ngrams", "trigrams"], "--ngrams must be unigrams, bigrams, both or auto"),
    ],
)
def test_cli_query_errors_are_one_line(saved, capsys, args, message):
    code, out, err = cli(capsys, "pmi-query", saved, *args)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("aflite: error: ") and message in err


def test_cli_bad_counts_files_are_one_line_errors(saved, tmp_path, capsys):
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(saved.read_bytes()[:5000])
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not numpy at all\n")
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, x=np.arange(3))
    cases = {
        tmp_path / "missing.npz": "no such counts file",
        truncated: "not a counts file",
        garbage: "not a counts file saved by `aflite audit --save-counts` (not an .npz archive)",
        foreign: "(no readable metadata)",
    }
    for path, message in cases.items():
        code, out, err = cli(capsys, "pmi-query", path, "woman")
        assert code == 2 and err.count("\n") == 1 and message in err, (path, err)
    code, _, err = cli(
        capsys, "audit", bundled_snli(), "--text-fields", "hypothesis", "--audits", "identity",
        "--identity-min-count", "10,ten",
    )  # fmt: skip
    assert code == 2 and "min counts must be integers like 10,100" in err


def test_spacy_tokenizer_is_optional():
    try:
        import spacy  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="needs spaCy"):
            count_cooccurrences(["a woman"], tokenizer="spacy", n_jobs=1)
        with pytest.raises(ValueError, match="needs spaCy"):
            run_audits({"h": ["a woman"]}, ["x"], audits=["pmi", "identity"], tokenizer="spacy")
        return
    text = ["A woman's T-shirt, isn't it?"]
    spacy_counts = count_cooccurrences(text, min_count=1, tokenizer="spacy", n_jobs=1)
    regex_counts = count_cooccurrences(text, min_count=1, n_jobs=1)
    assert "woman" in spacy_counts and "shirt" in spacy_counts and "t-shirt" not in spacy_counts
    assert "woman's" in regex_counts and "t-shirt" in regex_counts


def test_loaded_counts_skip_text_unless_asked(saved):
    cc = load_counts(saved, text=False)
    with pytest.raises(ValueError, match="hold no sentences"):
        cc.example_sentences("woman", "zebra")
