"""Collect a board's rows from the score store and the published outputs (nothing is recomputed).

Two modes. **Declared** (the official board): the declaration names exactly the rows; each
ranker must have a complete, valid entry on every board split of the declaration's dataset,
made with the ranker's current version on the current data, or :func:`collect_declared`
raises :class:`IncompleteLeaderboard` naming every missing, partial or invalid entry and the
command that computes it. The one exception is the declared held-out test, reported once when
complete: while some of its entries are missing or partial (none invalid) the board carries only
its progress (``board.heldout_pending``), never a held-out number. **All** (any store): every valid, complete, current entry on the
dataset's board splits becomes a row, plus every published output; anything else is listed as
skipped with the reason. In both modes, store layers that disagree on an entry of the board's
splits are a :class:`~sourcesum.errors.StoreConflict` naming both files, never a dropped entry.
Rows are one configuration each (grouped by ranker, key version and
parameters, never by label alone). Rows are named and keyed from the ranker class and the
canonical parameters (:class:`~sourcesum.runner.configs.Configuration`): no ranker is instantiated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sourcesum import paths
from sourcesum.board.declaration import Declaration, DeclaredRow
from sourcesum.board.heldout import heldout_board
from sourcesum.board.model import LEADERBOARD_MEASURES, HeldOutProgress, Leaderboard, RankerFacts, Row
from sourcesum.board.rows import finish
from sourcesum.data import Dataset, Split, dataset, load_split
from sourcesum.errors import ScoreFileError, SourceSumError, StoreConflict
from sourcesum.evaluation.evaluate import memoised_evaluation
from sourcesum.evaluation.measures import Measure
from sourcesum.rankers.base import RANKERS
from sourcesum.runner.configs import Configuration
from sourcesum.store.entry import ScoreEntry, fit_problem
from sourcesum.store.published import PublishedOutput, load_published, published_method, published_methods
from sourcesum.store.stores import ScoreStore, StoreStack


class IncompleteLeaderboard(SourceSumError):
    """A declared row lacks a complete, valid, current entry (the message lists each)."""


def is_current(entry: ScoreEntry, split: Split) -> str | None:
    """``None`` if ``entry`` can be used for ``split``, else why it is stale."""
    if entry.data_sha256 != split.sha256:
        return "computed on other data"
    problem = fit_problem(entry, split)
    if problem:
        return problem
    if entry.ranker in RANKERS:
        try:
            config = Configuration.of(entry.ranker, entry.params)
            version = config.key_version(split.name)
        except (SourceSumError, TypeError, ValueError) as exc:
            return f"parameters no longer valid ({exc})"
        if version != entry.version:
            return f"version {entry.version}, ranker is now {version}"
        if config.params != entry.params:
            return f"parameters {entry.params} are not in canonical form {config.params}"
    if not entry.complete:
        return f"partial ({len(entry.scores)}/{entry.n_pairs} pairs)"
    return None


NOT_INSTALLED = "not installed: not re-validated"


def unvalidated_label(entry: ScoreEntry) -> str:
    """The row name of an entry whose ranker is not installed: its (checked) ranker name and
    parameters, never the label stored in the file, marked as not re-validated."""
    from sourcesum.util.hashing import canonical_json

    params = canonical_json(entry.params, compact=True)
    return f"{entry.ranker}{params if entry.params else ''} ({NOT_INSTALLED})"


def _add_entry(row: Row, entry: ScoreEntry, split: Split, source: str, measures: Sequence[Measure]) -> None:
    row.entries[split.name] = entry
    row.evaluations[split.name] = memoised_evaluation(
        split, entry.scores, entry.scores_checksum(), row.label, measures, source
    )


def _published_row(
    outputs: Sequence[PublishedOutput], splits: dict[str, Split], measures: Sequence[Measure]
) -> Row:
    """One row from a published method's outputs on the splits it was published on."""
    method = outputs[0].method
    row = Row(method.label, method.ranker, {}, reference=False, published=True, board_splits=tuple(splits))
    for output in outputs:
        _add_entry(row, output.entry, splits[output.entry.split], str(output.path), measures)
        row.nan_replaced[output.entry.split] = (output.nan_replaced, output.all_nan_pairs)
    return row


def _published_rows(
    ds: Dataset, keys: Sequence[str], splits: dict[str, Split], measures: Sequence[Measure]
) -> list[Row]:
    if not ds.published_source:
        return []
    return [
        _published_row(
            [load_published(s, key) for s in splits if s in published_method(key).reported], splits, measures
        )
        for key in keys
    ]


def _board_splits(ds: Dataset) -> dict[str, Split]:
    return {name: load_split(name) for name in ds.board_splits()}


def _row(
    config: Configuration, splits: dict[str, Split], reference: bool = False, name: str | None = None
) -> Row:
    from sourcesum.board.names import default_name

    return Row(
        config.label,
        config.ranker,
        config.params,
        reference or config.reference,
        supervised=config.protocol is not None and config.protocol.votes and not config.reference,
        outside_source=config.outside_source(next(iter(splits))),
        name=name or default_name(config),
        board_splits=tuple(splits),
        facts=ranker_facts(config),
    )


def ranker_facts(config: Configuration) -> RankerFacts:
    """What the board states about ``config``'s ranker class (:class:`RankerFacts`)."""
    cls = config.ranker_class
    specs = cls.parameters()
    return RankerFacts(
        known=True,
        note=cls.board_note,
        defaults={key: cls.default_of(key) for key in specs},
        policies=frozenset(key for key, (param, _) in specs.items() if param.unscorable_policy),
        protocol_params=frozenset(key for key, (param, _) in specs.items() if param.training_protocol),
    )


def _declared_rows(
    items: Sequence[DeclaredRow],
    splits: dict[str, Split],
    store: ScoreStore | StoreStack,
    measures: Sequence[Measure],
    where: str,
) -> tuple[list[Row], list[str], _Tally]:
    """Rows of the declared (non-published) ``items`` on ``splits``, what is missing, and how
    far the entries are."""
    rows: list[Row] = []
    problems: list[str] = []
    tally = _Tally()
    seen: dict[str, int] = {}
    for number, item in enumerate(items, start=1):
        if item.published:
            continue
        config = Configuration.of(item.ranker, item.params)
        same = seen.setdefault(config.config_id(next(iter(splits))), number)
        if same != number:
            raise SourceSumError(
                f"{where}: rows #{same} and #{number} declare the same configuration "
                f"({config.label}); a row may appear once"
            )
        row = _row(config, splits, item.reference, item.name)
        for split in splits.values():
            key = config.entry_key(split.name, split.sha256)
            path = store.path_for(config.ranker, split.name, key)
            command = config.run_command(split.name, run_dir(store), given=item.params)
            tally.entries += 1
            tally.pairs += len(split)
            try:
                entry = store.load(config.ranker, split.name, key)
            except StoreConflict:
                raise  # layers that disagree: every reader refuses, as `run` does
            except ScoreFileError as exc:
                problems.append(f"{config.label} on {split.name}: invalid entry: {exc}")
                tally.invalid += 1
                continue
            if entry is None:
                problems.append(f"{config.label} on {split.name}: missing ({path}); compute: {command}")
                continue
            tally.scored += len(entry.scores)
            if not entry.complete:
                problems.append(
                    f"{config.label} on {split.name}: partial ({len(entry.scores)}/"
                    f"{entry.n_pairs} pairs, {path}); resume: {command}"
                )
                continue
            tally.complete += 1
            _add_entry(row, entry, split, str(path), measures)
        rows.append(row)
    return rows, problems, tally


def reads_committed_only(store: ScoreStore | StoreStack) -> bool:
    """``store`` is the committed ``data/scores`` alone (the committed board's store)."""
    layers = store.stores if isinstance(store, StoreStack) else [store]
    return [s.root.resolve() for s in layers] == [paths.COMMITTED_SCORES_DIR.resolve()]


def run_dir(store: ScoreStore | StoreStack) -> str | None:
    """The ``--scores-dir`` a hint's ``sourcesum run`` names: the board's top store when it is
    neither ``run``'s default (your store, which ``run`` writes without the option) nor the
    committed store alone (``run`` never writes ``data/scores``: :func:`committed_only_note`
    says where to look instead)."""
    if reads_committed_only(store) or store.root.resolve() == paths.user_scores_dir().resolve():
        return None
    return str(store.root)


def committed_only_note() -> str:
    """What a hint adds when the board reads ``data/scores`` alone: where ``run`` writes, and
    the command that renders the board from there."""
    mine = paths.shown(paths.user_scores_dir())
    return (
        f"this board reads the committed data/scores alone; `sourcesum run` writes your store ({mine}): "
        f"render the board over it with `sourcesum leaderboard --scores-dir {mine} -o FILE`"
    )


@dataclass
class _Tally:
    """Counts over the declared entries of a set of rows (:class:`HeldOutProgress`)."""

    entries: int = 0
    complete: int = 0
    invalid: int = 0
    scored: int = 0
    pairs: int = 0


def collect_declared(
    declaration: Declaration,
    store: ScoreStore | StoreStack,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
) -> Leaderboard:
    """Exactly the declared rows, each from a complete, valid, current entry per board split;
    and the declared held-out test's rows on its splits (``board.heldout``)."""
    from sourcesum.board.names import check_declared_names

    items = [
        *declaration.rows,
        *(declaration.heldout.rows if declaration.heldout else ()),
        *(row for task in declaration.tasks for row in task.rows),
    ]
    check_declared_names(
        [
            (Configuration.of(item.ranker, item.params).label, item.name)
            for item in items
            if not item.published
        ],
        str(declaration.path),
    )
    ds = dataset(declaration.dataset)
    splits = _board_splits(ds)
    published = _published_rows(ds, [d.ranker for d in declaration.rows if d.published], splits, measures)
    rows, problems, _ = _declared_rows(declaration.rows, splits, store, measures, str(declaration.path))
    heldout_rows: list[Row] = []
    heldout_splits: dict[str, Split] = {}
    pending: HeldOutProgress | None = None
    if declaration.heldout is not None:
        heldout_splits = {name: load_split(name) for name in declaration.heldout.splits}
        heldout_rows, more, tally = _declared_rows(
            declaration.heldout.rows, heldout_splits, store, measures, f"{declaration.path} [heldout]"
        )
        if more and not tally.invalid:  # missing or partial: reported once, when complete
            pending = HeldOutProgress(
                rows=len(declaration.heldout.rows),
                splits=tuple((s.name, s.title, len(s)) for s in heldout_splits.values()),
                entries=tally.entries,
                complete=tally.complete,
                scored=tally.scored,
                pairs=tally.pairs,
                to_compute=tuple(more),
            )
        else:
            problems += [f"held out: {p}" for p in more]
    tasks: list[tuple[Dataset, dict[str, Split], list[Row]]] = []
    for task in declaration.tasks:
        task_ds = dataset(task.dataset)
        task_splits = _board_splits(task_ds)
        task_rows, more, _ = _declared_rows(
            task.rows, task_splits, store, measures, f"{declaration.path} [[tasks]] {task.dataset}"
        )
        problems += [f"{task.dataset}: {p}" for p in more]
        tasks.append((task_ds, task_splits, task_rows))
    if problems:
        note = [committed_only_note()] if reads_committed_only(store) else []
        raise IncompleteLeaderboard(
            f"{len(problems)} declared entr{'y is' if len(problems) == 1 else 'ies are'} not complete "
            "and valid; nothing was written:\n  " + "\n  ".join(problems + note)
        )
    board = finish(ds, splits, published + rows, [], measures)
    for (task_ds, task_splits, task_rows), task in zip(tasks, declaration.tasks, strict=True):
        task_board = finish(task_ds, task_splits, task_rows, [], measures)
        task_board.note = task.note
        board.tasks.append(task_board)
    if pending is not None:
        board.heldout_pending = pending
    elif declaration.heldout is not None:
        board.heldout = heldout_board(ds, heldout_splits, heldout_rows, measures)
    board.inputs_sha256 = inputs_sha256(board, declaration.path.read_bytes())
    return board


def inputs_sha256(board: Leaderboard, declaration: bytes | None = None) -> str:
    """The sha256 of everything a board is computed from: the declaration's bytes (when it has
    one), every split's data checksum, and every row's entries (split, key, sha256 of the
    scores), held-out and task rows included. Two boards with the same digest show the same numbers."""

    from sourcesum.util.hashing import sha256_bytes, sha256_hex

    boards = [board, *board.tasks] + ([board.heldout] if board.heldout is not None else [])
    payload: dict[str, object] = {
        "declaration": sha256_bytes(declaration) if declaration is not None else None,
        "data": {s.name: s.sha256 for b in boards for s in b.splits},
        "entries": sorted(
            [split, entry.key, entry.scores_checksum()]
            for b in boards
            for row in b.rows
            for split, entry in row.entries.items()
        ),
    }
    if board.heldout_pending is not None:  # the progress the board states is part of what it shows
        p = board.heldout_pending
        payload["heldout_pending"] = [p.entries, p.complete, p.scored, p.pairs]
    return sha256_hex(payload)


def collect(
    store: ScoreStore | StoreStack,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
    published: bool = True,
    dataset_name: str = "sourcesum",
    include_unknown: bool = False,
    declared: Declaration | None = None,
    merge_agreeing: bool = False,
) -> Leaderboard:
    """Every usable store entry on the dataset's board splits as a row, plus (``published``) a
    row per published method; invalid, stale and partial entries are listed in ``stale`` with
    the reason. Entries of rankers that are not installed cannot be re-validated (version,
    parameters): they become rows only with ``include_unknown`` (``leaderboard --all``), named
    by :func:`unvalidated_label`, and are otherwise listed in ``stale``. Rows of configurations
    that ``declared`` names get those names (:mod:`sourcesum.board.names`); with
    ``merge_agreeing``, configurations whose scores agree are shown once
    (:mod:`sourcesum.board.agreeing`), each one left out said in ``merged``."""
    ds = dataset(dataset_name)
    splits = _board_splits(ds)
    rows: dict[str, Row] = {}
    stale: list[str] = []
    for path, entry in store.entries(splits):
        where = paths.shown(path)
        if isinstance(entry, StoreConflict) and path.name.split(".")[0] in splits:
            raise entry  # layers that disagree: every reader refuses, as `run` does
        if isinstance(entry, ScoreFileError):
            stale.append(f"{where}: invalid ({str(entry).replace(str(path), where)})")
            continue
        split = splits.get(entry.split)
        if split is None:
            continue
        reason = is_current(entry, split)
        if reason:
            stale.append(f"{where}: {reason}")
            continue
        if entry.ranker not in RANKERS and not include_unknown:
            stale.append(
                f"{where}: ranker {entry.ranker} is not installed ({NOT_INSTALLED}; shown by `leaderboard --all`)"
            )
            continue
        if entry.config_id not in rows:
            if entry.ranker in RANKERS:
                rows[entry.config_id] = _row(Configuration.of(entry.ranker, entry.params), splits)
            else:
                rows[entry.config_id] = Row(
                    unvalidated_label(entry), entry.ranker, entry.params, False, board_splits=tuple(splits)
                )
        _add_entry(rows[entry.config_id], entry, split, str(path), measures)
    labels = [r.label for r in rows.values()]
    for config, row in rows.items():
        if labels.count(row.label) > 1:  # same label, other configuration: say which
            row.label = f"{row.label} [{config[:6]}]"
            for evaluation in row.evaluations.values():
                evaluation.system = row.label
    if declared is not None:
        _apply_declared_names(list(rows.values()), declared)
    kept = list(rows.values())
    merged: list[str] = []
    if merge_agreeing:
        from sourcesum.board.agreeing import merge_agreeing as merge

        kept, merged = merge(kept)
    extra = _published_rows(ds, [m.key for m in published_methods()], splits, measures) if published else []
    board = finish(ds, splits, kept + extra, stale, measures)
    board.merged = merged
    board.inputs_sha256 = inputs_sha256(board)
    return board


def collect_stores(
    scores_dir: str | Path | None = None,
    dataset_name: str = "sourcesum",
    published: bool = True,
    measures: Sequence[Measure] = LEADERBOARD_MEASURES,
    include_unknown: bool = False,
    merge_agreeing: bool = False,
) -> Leaderboard:
    """Every usable entry of the user store (``scores_dir``, else the default one) over the
    committed store on ``dataset_name``'s board splits, plus (``published``) the published
    outputs: :func:`collect`, where rows that the committed declaration names carry those names
    (``compare``, ``show``, ``export`` and the notebook API's ``load_scores`` read this board;
    ``leaderboard --all`` and ``site --all`` with unknown rankers and agreeing rows merged)."""
    from sourcesum.board.declaration import read_declaration
    from sourcesum.store.stores import open_stores

    try:
        declared: Declaration | None = read_declaration(paths.DECLARATION_PATH)
    except SourceSumError:
        declared = None
    return collect(
        open_stores(scores_dir, must_exist=True),
        measures=measures,
        published=published,
        dataset_name=dataset_name,
        include_unknown=include_unknown,
        declared=declared if declared is not None and declared.dataset == dataset_name else None,
        merge_agreeing=merge_agreeing,
    )


def _apply_declared_names(rows: Sequence[Row], declared: Declaration) -> None:
    """Give each row of a configuration the declaration names (board or held-out rows) that name."""
    from sourcesum.util.hashing import canonical_json

    items = [*declared.rows, *(declared.heldout.rows if declared.heldout else ())]
    names: dict[tuple[str, str], str] = {}
    for item in items:
        if item.name is not None and not item.published and item.ranker in RANKERS:
            try:
                config = Configuration.of(item.ranker, item.params)
            except SourceSumError:
                continue
            names[(config.ranker, canonical_json(config.params))] = item.name
    for row in rows:
        name = names.get((row.ranker, canonical_json(row.params)))
        if name is not None:
            row.name = name
