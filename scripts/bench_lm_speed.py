"""End-to-end speed of the LM rankers, and agreement of their scores with the committed float32 ones:
prints each ranker's wall time, pairs/s and model load time, then per ranker the mean and minimum
per-pair Spearman against the committed float32 scores and the largest score difference, and (on
complete runs in a reduced dtype) every leaderboard cell and mark of the LM rows that changes when
the new entries replace the committed ones.

Runs ``perplexity_gain``, ``pmi`` and ``attention`` (default model, ``--dtype``, CPU unless
``--device``) over SourceSum's four board splits through the runner, into an empty temporary
store (or ``--scores-dir``), one ranker after the other, and prints each ranker's wall time and
pairs/s (the model load is timed apart: it is cached after the first use). ``--docs N`` scores only the
first N documents of each corpus (all their pairs, in every split holding them): a sample.

Then it compares the new scores with the float32 reference, the committed store (the declared
rows in leaderboard.toml pin ``dtype = "float32"``), without recomputing it:
  * per-pair Spearman between new and reference scores (``scipy.stats.spearmanr``; pairs where
    either is constant are counted apart), mean and minimum, and the largest score difference;
  * when the new entries are complete on the four splits: the leaderboard rendered by the
    harness's own code (``collect_declared`` with its statistics) from the committed store, and
    again with each declared LM row's dtype replaced by the new one (new entries layered over
    the committed store); every cell (ranker x split, NDCG and MAP) compared with the
    reference row's, and every mark compared (bold best, † not significantly worse than the
    best, significantly better/worse than lead).

    python scripts/bench_lm_speed.py [--dtype auto] [--docs N] [--rankers perplexity_gain,pmi,attention]
                                     [--scores-dir DIR] [--threads 2] [--matmul default|onednn|auto] [--profile]

``--matmul`` picks the Linear layers' kernels (default, onednn, auto: see
``sourcesum.rankers.lm.matmul``); ``attribution`` (which needs gradients) runs on ``default``.
For every ranker it also prints the ratio of the wall time to the ranker's **floor on the same
pairs** (``scripts/bench_lm_floor.py``: the tokens the ranker runs through the model x the
Linear FLOPs per token / the throughput measured here just before, on every matmul path; the
ratio is against the best path's floor, for ``attribution`` the default path's).

Run it on a quiet machine: the figures are wall times; ``uptime``'s load is printed before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
from scipy.stats import spearmanr
from sourcesum import paths
from sourcesum.board import (
    Declaration,
    DeclaredRow,
    Leaderboard,
    board_statistics,
    collect_declared,
    read_declaration,
)
from sourcesum.board.view.cells import cell_mark
from sourcesum.data import Split, dataset, load_split, split_spec
from sourcesum.rankers import create_ranker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_splits
from sourcesum.runner.selection import Selection
from sourcesum.store.stores import ScoreStore, StoreStack

LM_RANKERS = ("perplexity_gain", "pmi", "attention")
NDCG_TOLERANCE, MAP_TOLERANCE = 0.003, 0.005


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def sample_ids(splits, docs: int | None) -> frozenset[str] | None:
    """Pair ids of the first ``docs`` documents of each corpus, in every split holding them."""
    if docs is None:
        return None
    first: dict[str, Split] = {}  # corpus -> its first split
    for split in splits:
        first.setdefault(split_spec(split.name).corpus, split)
    keys: set[str] = set()
    for split in first.values():
        keys.update(list(dict.fromkeys(p.document_key for p in split))[:docs])
    return frozenset(p.id for s in splits for p in s if p.document_key in keys)


def floors(names, dtype: str, splits, ids) -> dict[str, float]:
    """Seconds of matmul work per ranker on the selected pairs under the fastest path measured
    now (bench_lm_floor's count and throughput), for the rankers it counts."""
    import bench_lm_floor as floor  # scripts/ is on sys.path when this script runs

    lm = create_ranker("pmi", dtype="float32", device="cpu").lm()
    body, head = floor.linear_shapes(lm.model)
    body_flops, head_flops = sum(2 * i * o for i, o in body), 2 * head[0] * head[1]
    chosen = [SimpleNamespace(pairs=[p for p in s.pairs if ids is None or p.id in ids]) for s in splits]
    counts = floor.token_counts(lm.tokenizer, floor.documents(chosen))
    rates = floor.measured_rates(floor.available_paths(), [dtype], body, head)
    usable = {path: r[dtype] for path, r in rates.items() if "body" in r[dtype]}
    print(
        "matmul throughput now (GFLOP/s, body/output layer): "
        + "; ".join(f"{p} {r['body']:.0f}/{r['head']:.0f}" for p, r in usable.items()),
        flush=True,
    )
    return {
        name: min(
            floor.floor_seconds(counts[name], body_flops, head_flops, r)
            for path, r in usable.items()
            if name != "attribution" or path == "default"  # gradients: the default path only
        )
        for name in names
        if name in floor.RANKERS
    }


PROFILE = False
"""``--profile``: run each ranker under torch's profiler and print its operator table."""


@contextlib.contextmanager
def operator_profile(name: str, enabled: bool, rows: int = 12):
    """Under ``enabled``: torch.profiler over the block, then the ``rows`` operators with the
    most self CPU time, each with its share of the profiled CPU time (matmuls are ``aten::mm``,
    ``aten::addmm`` or ``mkldnn_linear``)."""
    if not enabled:
        yield
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        yield
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    print(f"  {name}: torch operators by self CPU time (share of {total / 1e6:.1f} s profiled)")
    for event in sorted(events, key=lambda e: -e.self_cpu_time_total)[:rows]:
        print(
            f"    {event.key:40s} {event.self_cpu_time_total / 1e6:8.2f} s  {event.self_cpu_time_total / total:6.1%}"
        )


def time_rankers(names, dtype, device, splits, store, selection, matmul="default") -> tuple[dict, dict]:
    """Run each ranker over the splits; print its time and throughput; return its runs and its
    seconds."""
    runs, times = {}, {}
    for name in names:
        path = "default" if name == "attribution" and matmul == "onednn" else matmul
        ranker = create_ranker(name, dtype=dtype, device=device, matmul=path)
        start = time.perf_counter()
        lm = ranker.lm()
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        with operator_profile(name, enabled=PROFILE):
            runs[name] = run_splits(ranker, splits, store, selection, progress=False)
        seconds = time.perf_counter() - start
        n = sum(len(r.pairs) for r in runs[name])
        times[name] = seconds
        print(
            f"{name:16s} dtype {ranker.dtype:8s} matmul {ranker.matmul:7s} {n:5d} pairs  {seconds / 60:7.2f} min  "
            f"{n / seconds:6.3f} pairs/s  (model load {loaded:.1f} s, {lm.model.dtype}, {lm.device})",
            flush=True,
        )
    return runs, times


def spearman_agreement(runs, committed: ScoreStore) -> None:
    """Per-pair Spearman between the new scores and the committed float32 ones."""
    print("\nper-pair Spearman vs the committed float32 scores:")
    for name, name_runs in runs.items():
        rhos, constant, largest = [], 0, 0.0
        for run in name_runs:
            reference = committed.load(name, run.split.name, float32_key(name, run.split))
            if reference is None:
                raise SystemExit(f"no committed float32 {name} entry for {run.split.name}")
            for pair_id, values in run.scores().items():
                gap = np.abs(np.asarray(values) - np.asarray(reference.scores[pair_id])).max()
                largest = max(largest, float(gap))
                rho = spearmanr(reference.scores[pair_id], values).statistic
                if np.isfinite(rho):
                    rhos.append(rho)
                else:
                    constant += 1
        print(
            f"  {name:16s} mean {np.mean(rhos):.4f}  min {np.min(rhos):.4f}  "
            f"max |score difference| {largest:.2e} ({len(rhos)} pairs; {constant} with constant "
            "scores left out)"
        )


def float32_key(name: str, split) -> str:
    """The entry key of ``name`` with ``dtype=float32`` (other parameters at their defaults) on ``split``."""
    return Configuration.of(name, {"dtype": "float32"}).entry_key(split.name, split.sha256)


def substituted(declared: Declaration, names, dtype: str) -> tuple[Declaration, list[int]]:
    """The declaration with each LM row's dtype set to ``dtype``, and the indices of those rows."""
    out, changed = [], []
    for i, row in enumerate(declared.rows):
        if row.ranker in names and not row.published:
            out.append(DeclaredRow(row.ranker, {**row.params, "dtype": dtype}, row.reference))
            changed.append(i)
        else:
            out.append(row)
    return dataclasses.replace(declared, rows=tuple(out)), changed


def marks(board: Leaderboard) -> dict[tuple[int, str | None, str], str]:
    """Every cell's mark (best / tied / ''), plus significance against lead, by row position."""
    stats = board_statistics(board)
    ranked = board.rows  # published rows too: the best of a column may be one
    columns = [s.name for s in board.splits] + [None]
    out = {}
    for i, row in enumerate(ranked):
        for measure in board.measures:
            for split in columns:
                mark = cell_mark(board, stats, row, split, measure)
                tested = stats.of(row).vs_lead.get((split, measure)) if split is not None else None
                if board.lead is not None and split is not None and tested is not None:
                    better = row.mean(split, measure) > board.lead.mean(split, measure)
                    if tested.decision == "significant":
                        mark += "+lead" if better else "-lead"
                out[(i, split, measure.name)] = mark
    return out


def board_agreement(names, dtype: str, new: ScoreStore, committed: ScoreStore) -> None:
    declared = read_declaration(paths.DECLARATION_PATH)
    replaced, _ = substituted(declared, names, dtype)
    print("\nleaderboard from the committed store vs with the new entries substituted (harness code):")
    before = collect_declared(declared, committed)
    after = collect_declared(replaced, StoreStack([new, committed]))
    ranked_before, ranked_after = before.rows, after.rows
    worst = {"NDCG": 0.0, "MAP": 0.0}
    for row_b, row_a in zip(ranked_before, ranked_after, strict=True):
        if row_b.published or row_b.ranker not in names:
            continue
        cells = []
        for measure in before.measures:
            for split in before.splits:
                diff = row_a.mean(split.name, measure) - row_b.mean(split.name, measure)
                key = "MAP" if measure.name.upper() in ("AP", "MAP") else "NDCG"
                worst[key] = max(worst.get(key, 0.0), abs(diff))
                cells.append(f"{split.name} {measure.name} {row_b.mean(split.name, measure):.4f}{diff:+.4f}")
        print(f"  {row_a.label}: " + "; ".join(cells))
    ok = worst.get("NDCG", 0) <= NDCG_TOLERANCE and worst.get("MAP", 0) <= MAP_TOLERANCE
    print(
        f"  largest cell change: NDCG {worst.get('NDCG', 0):.4f} (limit {NDCG_TOLERANCE}), "
        f"MAP {worst.get('MAP', 0):.4f} (limit {MAP_TOLERANCE}): {'within' if ok else 'OUTSIDE'}"
    )
    m_before, m_after = marks(before), marks(after)
    diffs = [(k, m_before[k], m_after.get(k)) for k in m_before if m_before[k] != m_after.get(k)]
    print(f"  marks compared: {len(m_before)}; changed: {len(diffs)}")
    for (i, split, measure), b, a in diffs:
        print(f"    {ranked_before[i].label} {split or 'average'} {measure}: {b or '-'} -> {a or '-'}")


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rankers", default=",".join(LM_RANKERS))
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--docs", type=int, default=None, help="first N documents of each corpus only")
    parser.add_argument("--scores-dir", type=Path, default=None, help="keep the new entries here")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--matmul", default="default", choices=("default", "onednn", "auto"))
    parser.add_argument("--no-compare", action="store_true", help="timings only")
    parser.add_argument(
        "--profile", action="store_true", help="print each ranker's torch operators by self CPU time (slower)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    global PROFILE
    PROFILE = args.profile
    names = args.rankers.split(",")
    splits = [load_split(s) for s in dataset("sourcesum").board_splits()]
    ids = sample_ids(splits, args.docs)
    selection = Selection(pair_ids=ids)
    scope = f"first {args.docs} documents per corpus" if ids is not None else "all pairs"
    print(
        f"{', '.join(names)} on {', '.join(s.name for s in splits)} ({scope}); torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {torch.backends.cpu.get_cpu_capability()}; load {load_average()}"
    )
    temporary = tempfile.TemporaryDirectory() if args.scores_dir is None else None
    root = args.scores_dir or Path(temporary.name)  # type: ignore[union-attr]
    store = ScoreStore(root)
    start = time.perf_counter()
    runs, times = time_rankers(names, args.dtype, args.device, splits, store, selection, args.matmul)
    print(
        f"{'total':16s} {(time.perf_counter() - start) / 60:.2f} min; load after {load_average()}", flush=True
    )
    if args.device == "cpu":
        dtype = create_ranker(names[0], dtype=args.dtype, device="cpu").dtype
        for name, seconds in floors(names, dtype, splits, ids).items():
            print(
                f"{name:16s} floor {seconds / 60:6.2f} min (best path)  wall / floor {times[name] / seconds:5.2f}"
            )
    if not args.no_compare:
        committed = ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)
        spearman_agreement(runs, committed)
        dtype = create_ranker(names[0], dtype=args.dtype, device=args.device).dtype
        complete = [n for n in names if all(r.entry.complete for r in runs[n])]
        if ids is None and dtype != "float32" and complete:
            board_agreement(complete, dtype, store, committed)
        elif ids is not None:
            print("(a sample: cells and marks need complete entries; run without --docs)")
    if temporary is not None:
        temporary.cleanup()


if __name__ == "__main__":
    main()
