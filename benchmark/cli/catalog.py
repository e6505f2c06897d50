"""``sourcesum list``: datasets and their splits, rankers and their typed parameters, measures
and training protocols."""

from __future__ import annotations

import argparse
import inspect
import json
from typing import Any

from sourcesum.cli.common import SCHEMAS, print_json


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("list", help="list datasets, splits, rankers, measures and training protocols")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)


def ranker_listing(name: str, cls: Any) -> dict[str, Any]:
    parameters = []
    for key, (spec, default) in cls.parameters().items():
        parameters.append(
            {
                "name": key,
                "type": spec.type_name,
                "default": None if default is inspect.Parameter.empty else default,
                "required": default is inspect.Parameter.empty,
                "accepts": spec.accepts,
                "choices": list(spec.allowed) if spec.allowed is not None else None,
                "min": spec.min,
                "max": spec.max,
                "runtime": key in cls.runtime_params,
                "doc": spec.doc,
            }
        )
    return {
        "name": name,
        "version": cls.version,
        "reference": cls.reference,
        "description": (cls.__doc__ or "").strip().split("\n")[0],
        "parameters": parameters,
    }


def cmd_list(args: argparse.Namespace) -> int:
    from sourcesum.data import all_datasets
    from sourcesum.evaluation.measures import MEASURES
    from sourcesum.rankers import RANKERS
    from sourcesum.rankers.context import PROTOCOLS

    listed: list[dict[str, Any]] = []
    for ds in all_datasets():
        listed.append(
            {
                "name": ds.name,
                "title": ds.title,
                "description": (type(ds).__doc__ or "").strip().split("\n")[0],
                "board_splits": ds.board_splits(),
                "sources": [s.describe() for s in ds.sources().values()],
                "splits": [
                    {"name": s.name, "title": s.title, "pairs": s.pairs, "corpus": s.corpus, "board": s.board}
                    for s in ds.splits
                ],
            }
        )
    splits = [split for ds in listed for split in ds["splits"]]
    rankers = [ranker_listing(name, cls) for name, cls in RANKERS.items()]
    measures = [
        {
            "family": f.name,
            "relevance": f.relevance,
            "cutoff": f.cutoff,
            "options": dict(f.options),
            "doc": f.doc,
        }
        for f in MEASURES.values()
    ]
    protocols = [{"name": p.name, "description": p.description} for p in PROTOCOLS.values()]
    if args.json:
        print_json(
            SCHEMAS["list"],
            {
                "datasets": listed,
                "splits": splits,
                "rankers": rankers,
                "measures": measures,
                "protocols": protocols,
            },
        )
        return 0
    print("Datasets and splits ('all' = the board splits of sourcesum; a dataset name = its board splits):")
    every = [s for entry in listed for s in entry["splits"]]
    name_width = max([20, *(len(s["name"]) for s in every)])
    title_width = max([24, *(len(s["title"]) for s in every)])
    for entry in listed:
        print(f"  {entry['name']}: {entry['title']}")
        for s in entry["splits"]:
            board = "board" if s["board"] else ""
            print(
                f"    {s['name']:<{name_width}} {s['pairs']:>5} pairs  {s['title']:<{title_width}} {board}".rstrip()
            )
    print("Rankers (parameter: type = default, accepted values; * = not in the cache key):")
    for r in rankers:
        print(f"  {r['name']:<16} v{r['version']:<3} {r['description']}")
        for p in r["parameters"]:
            star = "*" if p["runtime"] else ""
            print(
                f"      {p['name']}{star}: {p['type']} = {json.dumps(p['default'])}  ({p['accepts']})"
                + (f"  {p['doc']}" if p["doc"] else "")
            )
    print("Measures (--measures):")
    for m in measures:
        print(f"  {m['family']:<10} {m['relevance']:<7} {m['doc']}")
    print("Training protocols (how a trained ranker may read labels):")
    for p in protocols:
        print(f"  {p['name']:<13} {p['description']}")
    return 0
