"""Shared by the CLI groups: how an error the user can fix (InputError) ends a command.

The message goes to stderr (and, with ``--json``, as ``{"error": ...}`` to stdout) and the exit code is 2. The top-level
``python -m backend`` does this for every group; ``guard`` does the same for a handler called directly (tests, scripts).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Callable

from .errors import InputError


def report_input_error(err: InputError, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": str(err)}, indent=2))
    print(f"error: {err}", file=sys.stderr)
    return 2


def guard(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a ``func(args) -> int`` handler so an InputError becomes exit code 2 with its message."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except InputError as err:
            return report_input_error(err, bool(getattr(args, "json", False)))

    return run


def float_list(text: str) -> tuple[float, ...]:
    """argparse ``type=`` for a comma-separated list of numbers, e.g. ``--sigmas 0.12,0.25,0.5``."""
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from err


def int_list(text: str) -> tuple[int, ...]:
    """argparse ``type=`` for a comma-separated list of integers, e.g. ``--ns 1,2,4``."""
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from err


def json_safe(o: object) -> object:
    """Plain JSON values: numpy arrays and scalars -> Python, tuples -> lists, NaN -> null (strict JSON)."""
    if isinstance(o, dict):
        return {k: json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [json_safe(v) for v in o]
    if hasattr(o, "tolist"):
        return json_safe(o.tolist())
    if isinstance(o, float) and o != o:
        return None
    return o


def dumps_compact(obj: object) -> str:
    """JSON with 2-space indent, innermost lists of numbers on one line (curves stay readable)."""
    import re

    text = json.dumps(obj, indent=2)

    def flat(m: re.Match) -> str:
        return re.sub(r"\s+", " ", m.group(0)).replace("[ ", "[").replace(" ]", "]")

    return re.sub(r"\[[^\[\]{}\"]*\]", flat, text)


def emit(result: dict, as_json: bool) -> None:
    """Print a command's result: indented JSON with ``--json``, else one ``key: value`` line per field (no provenance)."""
    result = json_safe(result)
    if as_json:
        print(json.dumps(result, indent=2, default=str))
        return
    for k, v in result.items():
        if k != "provenance":
            print(f"{k}: {json.dumps(v, default=str) if isinstance(v, (dict, list)) else v}")


def standalone_main(prog: str, add_parser: Callable, argv: list[str] | None = None) -> int:
    """Run one CLI group on its own (``python -m backend.<pkg>.cli <group> ...``), for when it is not wired into
    ``python -m backend``: parse, call the handler, and end an InputError the same way the top level does."""
    parser = argparse.ArgumentParser(prog=prog)
    add_parser(parser.add_subparsers(dest="group", required=True))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except InputError as err:
        return report_input_error(err, bool(getattr(args, "json", False)))
