"""``python -m backend.train <id> [options]``: retrain the shipped weights of method ``<id>`` (writes assets/<id>_*).

Each method's training module is ``backend.train.<id>`` with a ``main(argv) -> int``. Training is never part of the test
tiers; tests load the shipped weights and check the quality recorded in assets/MANIFEST.md.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import backend.train as pkg


def available() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m backend.train <id> [options]\n\ntrainable ids: " + (", ".join(names) or "(none yet)"))
        return 0
    if argv[0] not in names:
        print(f"error: no training script for {argv[0]!r}; trainable ids: {', '.join(names) or '(none yet)'}",
              file=sys.stderr)
        return 2
    from backend.runtime import setup_torch

    setup_torch()
    return int(importlib.import_module(f"backend.train.{argv[0]}").main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
