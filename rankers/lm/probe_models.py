"""The probes the ``probe`` ranker fits on pooled hidden states, and its choice of layer.

**Features** of a sentence at layer ``l``: its pooled state at ``l`` (``d`` values); at
``all``: the states of every layer concatenated (``(L + 1) x d``). Values are the float16
states in float32 (exact).

**linear**: :mod:`sourcesum.rankers.learned`'s logistic fit, unchanged (features standardised
on the training rows, L2-regularised logistic regression on the annotators' vote share, the
score is the linear predictor); ``C`` given, or chosen by that module's grouped inner
cross-validation from its grid when None.

**mlp** (Zhou et al.'s probe): ``Linear(f -> h), ReLU, Dropout(0.3), Linear(h -> h / 2), ReLU,
Dropout(0.2), Linear(h / 2 -> 1)`` with ``h = max(512, f / 4)``, on the standardised features;
binary cross-entropy of the logit against the vote share; Adam (learning rate 1e-4), batches of
256 sentences, at most 20 epochs. The training pairs' documents are cut into ``folds`` folds
(:func:`sourcesum.folds.document_folds` with ``seed``); fold 0 is the inner validation split,
the others are trained on, and the weights of the epoch with the lowest validation loss are
kept (training stops after 3 epochs without improvement). Seeded by ``seed``, run on one thread
with torch's deterministic algorithms: the same data and seed give the same probe bit for bit.
The score is the logit.

**layer=cv**: each layer ``0..L`` is scored by the linear probe at ``C = 1`` (:data:`CV_C`)
under grouped ``folds``-fold cross-validation inside the training pairs (the folds of
:func:`sourcesum.folds.document_folds` with ``seed``, learned's objective: pooled
``(mean nDCG + mean AP) / 2`` of the held-out inner folds); the best layer (ties: the lower)
is then fitted on all training pairs as a fixed layer would be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sourcesum.data.folds import document_folds
from sourcesum.rankers.learned import Model, TrainingSet, ranking_quality, train_model

CV_C = 1.0
"""The linear probe's C while ``layer=cv`` compares layers."""
MLP_LEARNING_RATE = 1e-4
MLP_BATCH = 256
MLP_EPOCHS = 20
MLP_PATIENCE = 3


def layer_features(states: np.ndarray, layer: int | None) -> np.ndarray:
    """``(n_sentences, f)`` float32 features of one pair's ``(L + 1, n, d)`` states at ``layer``
    (None: every layer concatenated, layer-major)."""
    if layer is None:
        return np.ascontiguousarray(states.transpose(1, 0, 2).reshape(states.shape[1], -1), dtype=np.float32)
    return np.asarray(states[layer], dtype=np.float32)


@dataclass
class Labelled:
    """Training pairs' states with their votes and documents (pairs in order)."""

    pair_ids: list[str]
    documents: list[str]
    states: list[np.ndarray]
    graded: list[np.ndarray]
    share: list[np.ndarray]
    min_relevant: float

    def at(self, layer: int | None) -> TrainingSet:
        """The pairs as :mod:`~sourcesum.rankers.learned`'s training rows at ``layer``."""
        return TrainingSet(
            list(self.pair_ids),
            list(self.documents),
            [layer_features(s, layer) for s in self.states],
            list(self.graded),
            list(self.share),
            min_relevant=self.min_relevant,
        )


def feature_names(layer: int | None, n_layers: int, width: int) -> list[str]:
    """``h<l>:<i>`` for each feature (layer ``l``, unit ``i``)."""
    layers = range(n_layers) if layer is None else [layer]
    return [f"h{index}:{unit}" for index in layers for unit in range(width)]


def fit_linear(
    data: Labelled, layer: int | None, C: float | None, trained_on: list[str], folds: int, seed: int
) -> Model:
    """:func:`sourcesum.rankers.learned.train_model`'s logistic fit at ``layer`` (L2)."""
    width = data.states[0].shape[2]
    return train_model(
        "logistic",
        {"C": C, "l1_ratio": 0.0},
        data.at(layer),
        feature_names(layer, data.states[0].shape[0], width),
        trained_on,
        folds,
        seed,
    )


def choose_layer(
    data: Labelled, trained_on: list[str], folds: int, seed: int
) -> tuple[int, list[dict[str, Any]]]:
    """The layer ``layer=cv`` fits (module docstring) and the table that chose it (one row per
    layer: ``layer``, ``ndcg``, ``ap``, ``objective``; the chosen one ``selected``)."""
    from tqdm.auto import tqdm

    inner = document_folds(data.documents, folds, seed)
    table: list[dict[str, Any]] = []
    layers = range(data.states[0].shape[0])
    # shown on a terminal only: 31 layers x folds fits take minutes on SourceSum's pairs
    for layer in tqdm(layers, desc="probe layer by CV", unit="layer", leave=False, disable=None):
        rows = data.at(layer)
        names = feature_names(layer, data.states[0].shape[0], data.states[0].shape[2])
        scores: list[np.ndarray] = []
        graded: list[np.ndarray] = []
        for fold in range(min(folds, len(set(data.documents)))):
            model = train_model(
                "logistic",
                {"C": CV_C, "l1_ratio": 0.0},
                rows.subset(inner != fold),
                names,
                trained_on,
                folds,
                seed,
            )
            held = rows.subset(inner == fold)
            scores += [model.predict(x) for x in held.features]
            graded += held.graded
        ndcg, ap = ranking_quality(scores, graded, data.min_relevant)
        table.append({"layer": layer, "ndcg": ndcg, "ap": ap, "objective": (ndcg + ap) / 2})
    best = max(range(len(table)), key=lambda i: (table[i]["objective"], -i))
    table[best]["selected"] = True
    return best, table


@dataclass
class MLPProbe:
    """A fitted MLP probe: standardisation, weights, and how training went."""

    mean: np.ndarray
    scale: np.ndarray
    network: Any
    epochs: int
    best_epoch: int
    validation_loss: list[float] = field(default_factory=list)

    def predict(self, x: np.ndarray) -> np.ndarray:
        import torch

        with _deterministic(), torch.inference_mode():
            z = torch.from_numpy(((x - self.mean) / self.scale).astype(np.float32))
            return np.asarray(self.network(z).squeeze(-1).numpy(), dtype=float)

    def describe(self) -> dict[str, Any]:
        return {
            "probe": "mlp",
            "epochs_run": self.epochs,
            "best_epoch": self.best_epoch,
            "validation_loss": [round(v, 6) for v in self.validation_loss],
        }


class _deterministic:
    """One thread and torch's deterministic algorithms inside the block (restored after)."""

    def __enter__(self) -> None:
        import torch

        self.threads = torch.get_num_threads()
        self.strict = torch.are_deterministic_algorithms_enabled()
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.use_deterministic_algorithms(self.strict)
        torch.set_num_threads(self.threads)


def mlp_network(width: int) -> Any:
    """Zhou et al.'s architecture for ``width`` input features (module docstring)."""
    import torch

    hidden = max(512, width // 4)
    return torch.nn.Sequential(
        torch.nn.Linear(width, hidden),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.3),
        torch.nn.Linear(hidden, hidden // 2),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.2),
        torch.nn.Linear(hidden // 2, 1),
    )


def fit_mlp(rows: TrainingSet, folds: int, seed: int) -> MLPProbe:
    """The MLP probe fitted on ``rows`` (module docstring)."""
    import torch

    documents = rows.documents
    inner = document_folds(documents, folds, seed)
    train_mask = inner != 0
    if not train_mask.any() or train_mask.all():
        raise ValueError("the MLP probe needs training pairs of at least two documents")
    x_all = np.vstack(rows.features)
    sizes = [len(f) for f in rows.features]
    pair_of_row = np.repeat(np.arange(len(sizes)), sizes)
    row_train = train_mask[pair_of_row]
    mean = x_all[row_train].mean(axis=0)
    scale = x_all[row_train].std(axis=0)
    scale[scale == 0] = 1.0
    z = ((x_all - mean) / scale).astype(np.float32)
    target = np.concatenate(rows.share).astype(np.float32)
    with _deterministic(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        network = mlp_network(z.shape[1])
        optimizer = torch.optim.Adam(network.parameters(), lr=MLP_LEARNING_RATE)
        loss_of = torch.nn.BCEWithLogitsLoss()
        x_train = torch.from_numpy(z[row_train])
        y_train = torch.from_numpy(target[row_train])
        x_valid = torch.from_numpy(z[~row_train])
        y_valid = torch.from_numpy(target[~row_train])
        order = torch.Generator().manual_seed(seed)
        best = (float("inf"), 0, {k: v.clone() for k, v in network.state_dict().items()})
        losses: list[float] = []
        epoch = 0
        for epoch in range(1, MLP_EPOCHS + 1):
            network.train()
            for batch in torch.split(torch.randperm(len(x_train), generator=order), MLP_BATCH):
                optimizer.zero_grad()
                loss = loss_of(network(x_train[batch]).squeeze(-1), y_train[batch])
                loss.backward()
                optimizer.step()
            network.eval()
            with torch.inference_mode():
                valid = float(loss_of(network(x_valid).squeeze(-1), y_valid))
            losses.append(valid)
            if valid < best[0]:
                best = (valid, epoch, {k: v.clone() for k, v in network.state_dict().items()})
            elif epoch - best[1] >= MLP_PATIENCE:
                break
        network.load_state_dict(best[2])
        network.eval()
    return MLPProbe(mean, scale, network, epoch, best[1], losses)


def predict_all(model: Model | MLPProbe, features: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [model.predict(x) for x in features]
