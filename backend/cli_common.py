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
