"""The one output path of every CLI group (``python -m backend <id> <action> ... [--json]``).

A group module's ``add_parser(subparsers)`` calls :func:`add_group` once and :func:`add_action` per action. A handler
is ``handler(args) -> dict | Output``: it computes, it never prints. :func:`finish` is the only place that prints:

* with ``--json``: the result as strict JSON (numpy values, tuples, ``Path`` handled; NaN and infinities -> null), with
  a ``provenance`` block (:func:`backend.runtime.provenance`; added from the arguments when the handler gave none);
* without: the handler's text lines, or one ``key: value`` line per field;
* an :class:`~backend.errors.InputError` ends the command with exit code 2, its message on stderr and, with
  ``--json``, ``{"error": message}`` on stdout.

Every action gets a working ``--json`` flag from :func:`add_action`. ``tests/test_cli.py`` runs ``--help`` and one
JSON action of every group.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from .errors import InputError


def report_input_error(err: InputError, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": str(err)}, indent=2))
    print(f"error: {err}", file=sys.stderr)
    return 2


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
    """Plain JSON values: numpy arrays and scalars -> Python, tuples and sets -> lists, paths -> str, NaN and
    infinities -> null (strict JSON)."""
    if isinstance(o, dict):
        return {str(k): json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [json_safe(v) for v in o]
    if isinstance(o, (set, frozenset)):
        return [json_safe(v) for v in sorted(o, key=str)]
    if isinstance(o, PurePath):
        return str(o)
    if hasattr(o, "tolist"):
        return json_safe(o.tolist())
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def dumps_compact(obj: object) -> str:
    """JSON with 2-space indent, innermost lists of numbers on one line (curves stay readable)."""
    import re

    text = json.dumps(obj, indent=2)

    def flat(m: re.Match) -> str:
        return re.sub(r"\s+", " ", m.group(0)).replace("[ ", "[").replace(" ]", "]")

    return re.sub(r"\[[^\[\]{}\"]*\]", flat, text)


def emit(result: dict, as_json: bool, lines: list[str] | None = None, compact: bool = False) -> None:
    """Print a command's result: JSON with ``--json``, else ``lines`` or one ``key: value`` line per field (no
    provenance). ``compact`` keeps innermost lists of numbers on one line."""
    result = json_safe(result)
    if as_json:
        print(dumps_compact(result) if compact else json.dumps(result, indent=2, default=str, allow_nan=False))
        return
    if lines is not None:
        for line in lines:
            print(line)
        return
    for k, v in result.items():
        if k != "provenance":
            print(f"{k}: {json.dumps(v, default=str) if isinstance(v, (dict, list)) else v}")


@dataclass
class Output:
    """What a handler returns when a plain dict is not enough: text lines for the human form, a non-zero exit code
    (e.g. "not detected" in a detection command), compact JSON for long numeric curves."""

    result: dict[str, Any]
    lines: list[str] | None = None
    code: int = 0
    compact: bool = False


_NOT_PARAMS = {"func", "group", "action", "json"}


def _default_provenance(args: argparse.Namespace) -> dict:
    from .runtime import provenance

    params = {k: v for k, v in vars(args).items() if k not in _NOT_PARAMS and not callable(v)}
    return provenance(params.pop("seed", None), **json_safe(params))


def finish(args: argparse.Namespace, out: dict | Output | int | None) -> int:
    """Print a handler's result the one way (see the module docstring) and return the exit code."""
    if out is None or isinstance(out, int):
        return int(out or 0)
    if not isinstance(out, Output):
        out = Output(dict(out))
    as_json = bool(getattr(args, "json", False))
    if as_json and "provenance" not in out.result:
        out.result["provenance"] = _default_provenance(args)
    emit(out.result, as_json, out.lines, out.compact)
    return out.code


def command(handler: Callable[[argparse.Namespace], dict | Output | int | None]) -> Callable[[argparse.Namespace], int]:
    """Wrap a handler: call it, print its result through :func:`finish`, end an InputError with exit code 2."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return finish(args, handler(args))
        except InputError as err:
            return report_input_error(err, bool(getattr(args, "json", False)))

    run.handler = handler  # type: ignore[attr-defined]
    return run


def add_group(subparsers: argparse._SubParsersAction, id_: str, help: str,
              description: str | None = None) -> argparse._SubParsersAction:
    """Add the group ``id_`` (a catalog id) and return its action subparsers."""
    p = subparsers.add_parser(id_, help=help, description=description or help,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    return p.add_subparsers(dest="action", metavar="<action>")


def add_action(actions: argparse._SubParsersAction, name: str, handler: Callable, help: str,
               **kwargs: Any) -> argparse.ArgumentParser:
    """Add one action whose handler returns a result (see :class:`Output`); the ``--json`` flag comes with it."""
    q = actions.add_parser(name, help=help, description=kwargs.pop("description", help), **kwargs)
    q.add_argument("--json", action="store_true", help="print the result as JSON (with a provenance block)")
    q.set_defaults(func=command(handler))
    return q
