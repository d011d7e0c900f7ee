"""Method Lab command line: ``python -m backend <id> <action> ... [--json]``.

Each group is the catalog id of a method (see backend/catalog.py); its module exposes ``add_parser(subparsers)``.
Groups are imported lazily so ``--help`` stays fast and a broken optional dependency only breaks its own group.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import catalog
from .cli_common import report_input_error
from .errors import InputError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend",
        description="Method Lab: run ICLR 2026 methods from the command line. Every action prints JSON with --json.",
    )
    sub = parser.add_subparsers(dest="group", metavar="<id>")
    for id_, module in catalog.cli_modules().items():
        try:
            importlib.import_module(module).add_parser(sub)
        except ImportError as err:  # pragma: no cover - shown in --help instead of crashing every command
            sub.add_parser(id_, help=f"(unavailable: {err})")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if args.group is None else 2
    from .runtime import setup_torch_if_loaded

    setup_torch_if_loaded()
    try:
        return int(args.func(args) or 0)
    except InputError as err:
        return report_input_error(err, bool(getattr(args, "json", False)))


if __name__ == "__main__":
    sys.exit(main())
