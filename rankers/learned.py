"""Learning to rank from base rankers' stored scores, under a protocol that never trains on the
pairs it scores.

**Features** of sentence ``i`` (0-based) of a pair with ``n`` sentences of ``w_1..w_n`` words:
each base's per-pair normalised score (``normalization``, see
:mod:`sourcesum.rankers.composite`), then the groups named in ``features``:

- ``position``: ``i / (n - 1)`` (0 when ``n = 1``), ``[i = 0]``, ``1 / (i + 1)``;
- ``length``: ``log(1 + w_i)`` and the per-pair z-score of ``w_i``.

The paper's published outputs are never features (they are not rankers; see
:class:`~sourcesum.rankers.composite.BaseRankers`).

**Models.**

- ``logistic`` (default, scikit-learn, liblinear solver): features standardised on the training
  rows, then L1- or L2-regularised (``l1_ratio`` 1 or 0) logistic regression on the *share* of
  annotators who voted each sentence a source, ``p_i = votes_i / annotators_i`` (soft labels: each sentence enters once as a
  positive with weight ``p_i`` and once as a negative with weight ``1 - p_i``, i.e. the
  cross-entropy against ``p_i``); the score is the linear predictor ``w . x + b``.
- ``lambdamart`` (LightGBM ``lambdarank``, the ``learned`` extra): gradient-boosted trees on the
  graded relevance (number of 1-votes), one query per pair; fixed in advance: learning rate 0.05,
  15 leaves, 20 rows per leaf at least, deterministic, one thread.

**Hyper-parameters.** Those left at ``None`` (logistic: ``C`` from ``C_GRID``, ``l1_ratio``
from ``L1_GRID``; lambdamart: ``trees`` from ``TREES_GRID``) are chosen together by grouped
``folds``-fold cross-validation *inside the training pairs* (folds by document, seeded): the
combination with the highest pooled ``(mean nDCG + mean AP) / 2`` over the held-out inner
folds (ties: the earlier in grid order, smaller ``C`` and L1 first); the model is then refitted
on all training pairs with it.

**Protocols** (named in the row label) are applied by the harness, which alone hands out
labels (:mod:`sourcesum.runner.protocols`); the ranker only fits what it is given (:meth:`train`):

- ``cross-corpus`` (default): a pair of one corpus (XSum or CNN/DM) is scored by a model fitted
  on the board splits of the *other* corpus: no pair, document or vote of the evaluated corpus
  is read to fit it (the two splits of a corpus share one model).
- ``kfold``: the split's pairs are cut into ``folds`` folds by document (a seeded permutation
  of the sorted document keys, dealt round-robin); each fold is scored by a model fitted on
  the other folds only.
- ``same-corpus``: for splits outside the board only (e.g. the held-out splits): a pair is
  scored by a model fitted on the board splits of its own corpus.
- ``in-domain``: a model fitted on the training splits the scored split's dataset declares
  (WiCE dev for WiCE test, QMSum train for QMSum test).
- ``from-sourcesum``: another dataset's pairs scored by a model fitted on SourceSum's four main
  splits (out of domain).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sourcesum.data.folds import document_folds
from sourcesum.data.pairs import Pair
from sourcesum.errors import ParameterError, RankerError
from sourcesum.evaluation.evaluate import evaluate
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.evaluation.metrics import pad
from sourcesum.evaluation.qrels import Qrels
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.composite import NORMALIZATIONS, BaseRankers, CompositeRanker, normalize
from sourcesum.rankers.context import LEARNABLE_PROTOCOLS, ProtocolSpec, TrainingData
from sourcesum.util.hashing import sha256_hex

MODELS = ("logistic", "lambdamart")
FEATURE_GROUPS = ("position", "length")
C_GRID = (0.01, 0.1, 1.0, 10.0)
L1_GRID = (1.0, 0.0)
TREES_GRID = (50, 100, 200, 400)
DEFAULT_FOLDS = 5


def position_features(n: int) -> np.ndarray:
    """``(n, 3)``: relative position, is-first, reciprocal position (module docstring)."""
    i = np.arange(n, dtype=float)
    relative = i / (n - 1) if n > 1 else np.zeros(n)
    return np.column_stack([relative, (i == 0).astype(float), 1.0 / (i + 1.0)])


def length_features(sentences: Sequence[str]) -> np.ndarray:
    """``(n, 2)``: ``log(1 + words)`` and the per-pair z-score of the word count."""
    words = np.array([len(s.split()) for s in sentences], dtype=float)
    return np.column_stack([np.log1p(words), normalize(words, "zscore")])


GROUP_FEATURES: dict[str, tuple[tuple[str, ...], Callable[[Pair], np.ndarray]]] = {
    "position": (
        ("position:relative", "position:first", "position:reciprocal"),
        lambda p: position_features(p.n_sentences),
    ),
    "length": (("length:log_words", "length:z_words"), lambda p: length_features(p.sentences)),
}


@dataclass
class TrainingSet:
    """Feature rows of some pairs, with their votes and documents (pairs in order)."""

    pair_ids: list[str]
    documents: list[str]
    features: list[np.ndarray]
    graded: list[np.ndarray]
    share: list[np.ndarray]
    min_relevant: float
    """Binary relevance threshold of the training data (the inner CV's AP reads it)."""

    def subset(self, keep: np.ndarray) -> TrainingSet:
        index = np.flatnonzero(keep)
        lists: list[list[Any]] = [
            [values[i] for i in index]
            for values in (self.pair_ids, self.documents, self.features, self.graded, self.share)
        ]
        pair_ids, documents, features, graded, share = lists
        return TrainingSet(pair_ids, documents, features, graded, share, min_relevant=self.min_relevant)

    def digest(self) -> str:
        h = hashlib.sha256()
        for name, x, g, s in zip(self.pair_ids, self.features, self.graded, self.share, strict=True):
            h.update(name.encode())
            for array in (x, g, s):
                h.update(np.ascontiguousarray(array).tobytes())
        return h.hexdigest()


def ranking_quality(
    scores: Sequence[np.ndarray], graded: Sequence[np.ndarray], min_relevant: float
) -> tuple[float, float]:
    """Mean nDCG and mean AP (the harness's kernels and tie rules) of score lists."""
    values, _ = pad([list(s) for s in scores])
    qrels = Qrels.from_graded([list(g) for g in graded], min_relevant)
    result = evaluate(qrels, values, (NDCG, AP))
    return float(np.nanmean(result[NDCG])), float(np.nanmean(result[AP]))


@dataclass
class Model:
    """A fitted model, its hyper-parameter and the inner cross-validation that chose it."""

    kind: str
    hyper: dict[str, Any]
    estimator: Any
    feature_names: list[str]
    trained_on: list[str]
    n_pairs: int
    cv: list[dict[str, Any]] = field(default_factory=list)

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "logistic":
            return np.asarray(self.estimator.decision_function(x), dtype=float)
        return np.asarray(self.estimator.predict(x), dtype=float)

    def weights(self) -> dict[str, float]:
        """Logistic: coefficients on the standardised features (plus the intercept); LambdaMART:
        the share of the total split gain of each feature."""
        if self.kind == "logistic":
            logistic = self.estimator[-1]
            out = dict(zip(self.feature_names, (float(c) for c in logistic.coef_[0]), strict=True))
            out["(intercept)"] = float(logistic.intercept_[0])
            return out
        gains = np.asarray(self.estimator.booster_.feature_importance(importance_type="gain"), dtype=float)
        total = gains.sum() or 1.0
        return dict(zip(self.feature_names, (float(g / total) for g in gains), strict=True))

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.kind,
            "trained_on": self.trained_on,
            "pairs": self.n_pairs,
            **self.hyper,
            "cv": self.cv,
            "weights": self.weights(),
        }


def _fit_estimator(kind: str, hyper: dict[str, Any], train: TrainingSet, seed: int) -> Any:
    x = np.vstack(train.features)
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        share = np.concatenate(train.share)
        rows = np.vstack([x, x])
        target = np.concatenate([np.ones(len(x)), np.zeros(len(x))])
        weight = np.concatenate([share, 1.0 - share])
        keep = weight > 0
        model = make_pipeline(
            StandardScaler(),
            LogisticRegression(
                C=hyper["C"], l1_ratio=hyper["l1_ratio"], solver="liblinear", max_iter=1000, random_state=seed
            ),
        )
        model.fit(rows[keep], target[keep], logisticregression__sample_weight=weight[keep])
        return model
    try:
        import lightgbm
    except ImportError as exc:
        raise RankerError(
            "learned(model=lambdamart) needs LightGBM: pip install 'sourcesum-bench[learned]'"
        ) from exc
    ranker = lightgbm.LGBMRanker(
        objective="lambdarank",
        n_estimators=hyper["trees"],
        learning_rate=0.05,
        num_leaves=15,
        min_child_samples=20,
        deterministic=True,
        force_row_wise=True,
        n_jobs=1,
        random_state=seed,
        verbose=-1,
    )
    ranker.fit(x, np.concatenate(train.graded).astype(int), group=[len(f) for f in train.features])
    return ranker


_FITTED: dict[str, Model] = {}
"""Models fitted in this process, keyed by a digest of their configuration and training rows
(the two splits of a corpus share the cross-corpus model of the other)."""


def train_model(
    kind: str,
    hyper: dict[str, Any],
    train: TrainingSet,
    feature_names: list[str],
    trained_on: list[str],
    folds: int,
    seed: int,
) -> Model:
    """Fit ``kind`` on ``train``; a ``None`` hyper-parameter is chosen by grouped inner CV."""
    key = sha256_hex([kind, hyper, folds, seed, feature_names, train.digest(), train.min_relevant])
    if key in _FITTED:
        return _FITTED[key]
    grids = {"C": C_GRID, "l1_ratio": L1_GRID, "trees": TREES_GRID}
    free = [name for name in hyper if hyper[name] is None]
    cv: list[dict[str, Any]] = []
    if free:
        # With fewer training documents than folds the extra folds are empty and skipped: the
        # same folds as folds = documents (a position modulo either is the same).
        inner = document_folds(train.documents, folds, seed)
        trials = [
            dict(zip(free, values, strict=True)) for values in itertools.product(*(grids[n] for n in free))
        ]
        for values in trials:
            trial = {**hyper, **values}
            scores: list[np.ndarray] = []
            graded: list[np.ndarray] = []
            for fold in range(min(folds, len(set(train.documents)))):
                model = _fit_estimator(kind, trial, train.subset(inner != fold), seed)
                held = train.subset(inner == fold)
                scores += [
                    np.asarray(model.decision_function(x) if kind == "logistic" else model.predict(x))
                    for x in held.features
                ]
                graded += held.graded
            ndcg, ap = ranking_quality(scores, graded, train.min_relevant)
            cv.append({**values, "ndcg": ndcg, "ap": ap, "objective": (ndcg + ap) / 2})
        best = max(range(len(cv)), key=lambda i: (cv[i]["objective"], -i))
        cv[best]["selected"] = True
        hyper = {**hyper, **trials[best]}
    model = Model(
        kind,
        hyper,
        _fit_estimator(kind, hyper, train, seed),
        feature_names,
        trained_on,
        len(train.pair_ids),
        cv,
    )
    _FITTED[key] = model
    return model


@register
class LearnedRanker(CompositeRanker):
    """Learning to rank on base rankers' normalised scores plus position and length (logistic or LambdaMART)."""

    name = "learned"
    version = "1"
    reproduction_tolerance = 2e-3
    """Fitted by liblinear and scaled with numpy: the sums round differently on another CPU, and
    where two grid values' inner-CV objectives nearly tie another machine may choose the other.
    Recomputing the committed entries here gave differences up to 1e-6 (cross-corpus) and 1.1e-3
    (kfold); on one machine a configuration reproduces bit for bit."""
    label_params: ClassVar[tuple[str, ...]] = ("rankers", "protocol", "model")
    board_note = (
        "trained on the votes, under the protocol in its label, never on the pairs it scores. "
        "`protocol=cross-corpus`: the XSum splits are scored by a model fitted on the two CNN/DM "
        "splits and the CNN/DM splits by one fitted on the two XSum splits, so no pair, document or "
        "vote of the evaluated corpus is read. `protocol=kfold`: each split is cut into 5 folds by "
        "document (seeded) and each fold is scored by a model fitted on the other 4. Features: each "
        "base ranker's per-pair normalised score, sentence position and length; hyper-parameters are "
        "chosen by cross-validation inside the training pairs (`sourcesum explain learned` prints "
        "the fitted weights). The paper's published outputs are never features. The configurations "
        "were chosen with results on these splits in view: `docs/learned-selection.md` lists, in order, "
        "the configurations evaluated on them before each row was declared; the Held-out test section reports them on pairs "
        "on which nothing was chosen."
    )
    libraries = ("scikit-learn", "lightgbm")
    requires = {"learned": ("lightgbm",)}
    param_specs = {
        "rankers": BaseRankers(),
        "protocol": Param(
            str,
            "cross-corpus: fit on the other corpus's main splits; kfold: folds by document within the "
            "split; same-corpus (splits outside the board): fit on the same corpus's main splits; "
            "in-domain: fit on the dataset's declared training split; from-sourcesum: fit on SourceSum",
            registry=LEARNABLE_PROTOCOLS,
            training_protocol=True,
        ),
        "model": Param(
            str, "logistic regression (scikit-learn) or LambdaMART (LightGBM lambdarank)", choices=MODELS
        ),
        "normalization": Param(str, "per-pair normalisation of each base's scores", choices=NORMALIZATIONS),
        "features": Param(str, "extra feature groups, comma-separated: position, length (empty: none)"),
        "C": Param(
            float,
            "logistic inverse regularisation; none = chosen by inner CV from 0.01, 0.1, 1, 10",
            min=1e-6,
            max=1e4,
            optional=True,
        ),
        "l1_ratio": Param(
            float,
            "logistic penalty: 1 = L1, 0 = L2; none = chosen by inner CV",
            choices=(0.0, 1.0),
            optional=True,
        ),
        "trees": Param(
            int,
            "LambdaMART boosting rounds; none = chosen by inner CV from 50, 100, 200, 400",
            min=1,
            max=5000,
            optional=True,
        ),
        "folds": Param(
            int, "folds of the kfold protocol and of the inner CV (grouped by document)", min=2, max=100
        ),
        "seed": Param(int, "seed of the fold assignment (and of LightGBM)", min=0, max=2**32 - 1),
    }

    def __init__(
        self,
        rankers: str | list[Any] = "bm25,embedding",
        protocol: str = "cross-corpus",
        model: str = "logistic",
        normalization: str = "zscore",
        features: str = "position,length",
        C: float | None = None,
        l1_ratio: float | None = None,
        trees: int | None = None,
        folds: int = DEFAULT_FOLDS,
        seed: int = 0,
    ):
        self.rankers = self.param_specs["rankers"].coerce(rankers, f"{self.name}.rankers")
        self.protocol, self.model, self.normalization = protocol, model, normalization
        self.C, self.l1_ratio, self.trees, self.folds, self.seed = C, l1_ratio, trees, folds, seed
        self.features = self.canonicalize(
            {"features": features, "model": model, "C": C, "l1_ratio": l1_ratio, "trees": trees}, {}
        )["features"]

    @classmethod
    def requirements(cls, params: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
        """``model=lambdamart``: LightGBM (the ``learned`` extra); logistic: the core package's
        scikit-learn. Base rankers check their own when they are computed."""
        return cls.requires if params["model"] == "lambdamart" else {}

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """Feature groups in their fixed order; hyper-parameters only for their model."""
        groups = [g.strip() for g in str(params["features"]).split(",") if g.strip()]
        unknown = [g for g in groups if g not in FEATURE_GROUPS]
        if unknown:
            raise ParameterError(
                f"{cls.name}.features={params['features']}: unknown group {unknown[0]!r}; expected a "
                f"comma-separated subset of {', '.join(FEATURE_GROUPS)}"
            )
        if params["model"] == "logistic" and params["trees"] is not None:
            raise ParameterError(f"{cls.name}.trees applies to model=lambdamart only")
        if params["model"] == "lambdamart" and (params["C"] is not None or params["l1_ratio"] is not None):
            raise ParameterError(f"{cls.name}.C and l1_ratio apply to model=logistic only")
        return {**params, "features": ",".join(g for g in FEATURE_GROUPS if g in groups)}

    @classmethod
    def training_protocol(cls, params: Mapping[str, Any]) -> ProtocolSpec:
        return ProtocolSpec(str(params["protocol"]), {"folds": params["folds"], "seed": params["seed"]})

    @property
    def feature_names(self) -> list[str]:
        names = [f"{label}:{self.normalization}" for label in self.base_labels]
        for group in self.features.split(","):
            if group:
                names += GROUP_FEATURES[group][0]
        return names

    def pair_features(self, pair: Pair, base_scores: np.ndarray | None = None) -> np.ndarray:
        """``(n_sentences, n_features)`` feature rows of one pair (module docstring) from its
        bases' raw scores (default: those the runner handed in)."""
        raw = self.pair_scores(pair) if base_scores is None else base_scores
        columns = [normalize(raw, self.normalization).T]
        for group in self.features.split(","):
            if group:
                columns.append(GROUP_FEATURES[group][1](pair))
        return np.hstack(columns)

    def training_set(self, data: TrainingData) -> TrainingSet:
        if data.base_scores is None:
            raise RankerError(f"ranker {self.name}: training data without base scores")
        return TrainingSet(
            [p.id for p in data.pairs],
            [p.document_key for p in data.pairs],
            [self.pair_features(p, s) for p, s in zip(data.pairs, data.base_scores, strict=True)],
            [j.graded for j in data.judgments],
            [j.soft for j in data.judgments],
            min_relevant=data.min_relevant,
        )

    def train(self, data: TrainingData) -> None:
        """Fit (or reuse, when the same rows were fitted before in this process) the model that
        scores the pairs the protocol assigns to ``data``."""
        hyper = (
            {"C": self.C, "l1_ratio": self.l1_ratio} if self.model == "logistic" else {"trees": self.trees}
        )
        self._model = train_model(
            self.model,
            hyper,
            self.training_set(data),
            self.feature_names,
            list(data.trained_on),
            self.folds,
            self.seed,
        )

    def fitted(self) -> Model:
        model: Model | None = self.__dict__.get("_model")
        if model is None:
            raise RankerError(f"ranker {self.label}: not trained; the runner trains it under its protocol")
        return model

    def score(self, pair: Pair) -> Sequence[float]:
        scores: list[float] = self.fitted().predict(self.pair_features(pair)).tolist()
        return scores

    def describe_model(self) -> dict[str, Any]:
        """The current model: training data, chosen hyper-parameters, the inner CV table, and
        the weights (logistic) or gain shares (LambdaMART); ``sourcesum explain`` prints it."""
        return self.fitted().describe()
