"""CLI group ``models``: ``python -m backend models list [--json]`` and
``python -m backend models check ID [--source NAME] [--json] [--record]``.

``add_parser(subparsers)`` receives the ``argparse`` subparsers object of ``python -m backend`` and sets ``func`` on
each action; ``func(args) -> int`` is the exit code (0 ok, 1 sanity check failed, 2 bad input). torch and
transformers are imported only when a check runs, so importing this module is light.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _list(args: argparse.Namespace) -> int:
    from . import MODELS, recorded_metadata

    recorded = recorded_metadata()
    rows: list[dict[str, Any]] = []
    for model_id, s in MODELS.items():
        row = s.to_dict()
        last = recorded.get(model_id, {})
        row["recorded"] = {k: last.get(k) for k in ("load_s", "converted_now", "sanity", "sanity_ok", "measured_unix")}
        rows.append(row)
    if args.json:
        print(json.dumps({"models": rows}, indent=2))
        return 0
    for row in rows:
        load_s = row["recorded"]["load_s"]
        timing = f"{load_s:.2f} s" if isinstance(load_s, (int, float)) else "not measured"
        print(f"{row['id']:<13} {row['role']:<17} {row['title']:<34} {row['parameters']:>12,} params  load {timing}")
        print(f"{'':<13} {row['default_source']}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from . import check, record

    try:
        if args.record and args.source:
            raise InputError("Only the embedded defaults are recorded: drop --record or --source.")
        result = check(args.model, args.source)
    except InputError as err:
        if args.json:
            print(json.dumps({"id": args.model, "error": str(err)}, indent=2))
        else:
            print(f"error: {err}", file=sys.stderr)
        return 2
    if args.record:
        record(args.model, result)
    if args.json:
        from ..runtime import provenance

        print(json.dumps({**result, "provenance": provenance(None, source=args.source)}, indent=2))
    else:
        ok = {True: "ok", False: "FAILED", None: "no reference"}[result["sanity_ok"]]
        print(f"{result['id']}: loaded in {result['load_s']:.2f} s, {result['parameters']:,} parameters")
        print(f"  {result['sanity']}  [{ok}]")
    return 1 if result["sanity_ok"] is False else 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``models`` group (actions ``list`` and ``check``) to an argparse subparsers object."""
    from . import MODELS

    parser = subparsers.add_parser("models", help="embedded default models: list them, load and check one")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    p_list = actions.add_parser("list", help="the embedded models with their last recorded check (loads nothing)")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.set_defaults(func=_list)

    p_check = actions.add_parser("check", help="load a model and run its one-line sanity check")
    p_check.add_argument("model", metavar="NAME", choices=list(MODELS), help=f"one of: {', '.join(MODELS)}")
    p_check.add_argument(
        "--source",
        default=None,
        help="load this local folder or cached Hugging Face name instead of the embedded default",
    )
    p_check.add_argument("--json", action="store_true", help="print JSON")
    p_check.add_argument("--record", action="store_true", help="store the result in assets/models.json")
    p_check.set_defaults(func=_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m backend.models.cli models list``), for when the group is not wired in."""
    from ..cli_common import standalone_main

    return standalone_main("python -m backend.models.cli", add_parser, argv)


if __name__ == "__main__":
    raise SystemExit(main())
