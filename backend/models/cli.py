"""CLI group ``models``: ``python -m backend models list [--json]`` and
``python -m backend models check ID [--source NAME] [--json] [--record]``.

Handlers return their result and print nothing (:mod:`backend.cli_common` prints); ``check`` exits with 1 when the
sanity check fails and 2 on bad input. torch and transformers are imported only when a check runs, so importing this
module is light.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..cli_common import Output, add_action, add_group


def _list(args: argparse.Namespace) -> Output:  # noqa: ARG001
    from . import MODELS, recorded_metadata

    recorded = recorded_metadata()
    rows: list[dict[str, Any]] = []
    for model_id, s in MODELS.items():
        row = s.to_dict()
        last = recorded.get(model_id, {})
        row["recorded"] = {k: last.get(k) for k in ("load_s", "converted_now", "sanity", "sanity_ok", "measured_unix")}
        rows.append(row)
    lines = []
    for row in rows:
        load_s = row["recorded"]["load_s"]
        timing = f"{load_s:.2f} s" if isinstance(load_s, (int, float)) else "not measured"
        lines.append(f"{row['id']:<13} {row['role']:<17} {row['title']:<34} {row['parameters']:>12,} params  load "
                     f"{timing}")
        lines.append(f"{'':<13} {row['default_source']}")
    return Output({"models": rows}, lines=lines)


def _check(args: argparse.Namespace) -> Output:
    from ..errors import InputError
    from ..runtime import provenance
    from . import check, record

    if args.record and args.source:
        raise InputError("Only the embedded defaults are recorded: drop --record or --source.")
    result = check(args.model, args.source)
    if args.record:
        record(args.model, result)
    ok = {True: "ok", False: "FAILED", None: "no reference"}[result["sanity_ok"]]
    lines = [f"{result['id']}: loaded in {result['load_s']:.2f} s, {result['parameters']:,} parameters",
             f"  {result['sanity']}  [{ok}]"]
    return Output({**result, "provenance": provenance(None, source=args.source)}, lines=lines,
                  code=1 if result["sanity_ok"] is False else 0)


def add_parser(subparsers: Any) -> argparse._SubParsersAction:
    """Add the ``models`` group (actions ``list`` and ``check``) to an argparse subparsers object."""
    from . import MODELS

    actions = add_group(subparsers, "models", "embedded default models: list them, load and check one")
    add_action(actions, "list", _list, "the embedded models with their last recorded check (loads nothing)")

    p_check = add_action(actions, "check", _check, "load a model and run its one-line sanity check")
    p_check.add_argument("model", metavar="NAME", choices=list(MODELS), help=f"one of: {', '.join(MODELS)}")
    p_check.add_argument(
        "--source",
        default=None,
        help="load this local folder or cached Hugging Face name instead of the embedded default",
    )
    p_check.add_argument("--record", action="store_true", help="store the result in assets/models.json")
    return actions
