"""The lazy public API of a method package: ``__init__.py`` names its public objects and the module each lives in,
and each is imported on first use, so importing the package (for ``--help``, the input registry or the catalog
checks) imports nothing heavy::

    __getattr__, __dir__, __all__ = lazy_api(__name__, {
        "SIGMarkConfig": "gfprc", "generate": "gfprc",
        "run_generate": "jobs",
    })
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_api(package: str, api: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` whose public ``name -> submodule`` table is ``api``."""

    def __getattr__(name: str) -> object:
        module = api.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return sorted(api)

    return __getattr__, __dir__, sorted(api)


__all__ = ["lazy_api"]
