"""One registry helper for every family of interchangeable methods (the pysteps ``interface.py`` pattern).

A family module (``backend/<family>/interface.py`` or the method module itself) fills one :class:`Registry`; its
docstring is the table of methods. Pages, figures, CLI choices and benchmarks read names, labels, kinds and colours
from it, so no page or figure keeps its own method list::

    METHODS = Registry("crowd method")
    METHODS.add("stddn", simulate_stddn, label="STDDN (ours)", kind="ours", color="#d62728")
    METHODS.add("sfm", simulate_sfm, label="Social force", kind="baseline")
    get_method = METHODS.get            # case-insensitive; unknown names raise InputError listing the valid ones

``Registry`` is a read-only mapping ``name -> object`` (``in``, iteration in insertion order, ``len``, ``[name]``),
so code that iterates a plain dict of methods keeps working. ``tests/test_structure.py`` finds every module-level
``Registry`` under ``backend/`` and checks it generically (unknown names, labels, kinds, colours);
``tests/test_method_packages.py`` checks that a method package's registries hold callables and that nothing
dispatches on their names.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from .errors import InputError

T = TypeVar("T")
Kind = Literal["ours", "baseline", "ablation", "reference"]
KINDS: tuple[str, ...] = ("ours", "baseline", "ablation", "reference")

# Colours given by kind when an entry names none: ours in warm colours, baselines in cool/neutral ones, cycled.
PALETTE: dict[str, tuple[str, ...]] = {
    "ours": ("#d62728", "#ff7f0e", "#e377c2", "#8c564b"),
    "baseline": ("#1f77b4", "#2ca02c", "#17becf", "#9467bd", "#7f7f7f", "#bcbd22", "#393b79", "#637939"),
    "ablation": ("#ff9896", "#ffbb78", "#c49c94", "#f7b6d2"),
    "reference": ("#000000", "#7f7f7f"),
}


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One method of a family: the object pages call (a function, class or factory) and how it is shown."""

    name: str
    obj: T
    label: str
    kind: str
    color: str
    about: str = ""


class Registry(Mapping[str, T]):
    """Name -> method table of one family. ``family`` names it in error messages (e.g. "nowcasting method")."""

    def __init__(self, family: str):
        self.family = family
        self._entries: dict[str, Entry[T]] = {}

    # ------------------------------------------------------------------------------------------------ filling
    def add(self, name: str, obj: T, *, label: str | None = None, kind: str = "baseline", color: str | None = None,
            about: str = "") -> T:
        """Register ``obj`` under ``name`` (lower-case key). Returns ``obj`` so it can be used inline."""
        key = name.lower()
        if key in self._entries:
            raise ValueError(f"{self.family} {name!r} is registered twice")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if color is None:
            used = sum(1 for e in self._entries.values() if e.kind == kind)
            color = PALETTE[kind][used % len(PALETTE[kind])]
        self._entries[key] = Entry(key, obj, label or name, kind, color, about)
        return obj

    def register(self, name: str, **meta: str):
        """Decorator form of :meth:`add`."""

        def deco(obj: T) -> T:
            return self.add(name, obj, **meta)

        return deco

    # ------------------------------------------------------------------------------------------------ lookup
    def key(self, name: str) -> str:
        """The registered key for ``name`` (case-insensitive); InputError listing the valid names otherwise."""
        key = str(name).strip().lower()
        if key not in self._entries:
            raise InputError(f"Unknown {self.family} {name!r}. Valid names: {', '.join(self._entries)}.")
        return key

    def get(self, name: str) -> T:  # type: ignore[override]
        """The method object registered under ``name``."""
        return self._entries[self.key(name)].obj

    def entry(self, name: str) -> Entry[T]:
        return self._entries[self.key(name)]

    def label(self, name: str) -> str:
        """The display label; a name that is not registered is shown as itself (recorded results of removed names)."""
        e = self._entries.get(str(name).lower())
        return e.label if e else str(name)

    def color(self, name: str) -> str:
        e = self._entries.get(str(name).lower())
        return e.color if e else "#7f7f7f"

    def kind(self, name: str) -> str:
        return self.entry(name).kind

    def names(self, kind: str | None = None) -> list[str]:
        """Registered names in insertion order, optionally only those of one kind."""
        return [k for k, e in self._entries.items() if kind is None or e.kind == kind]

    def labels(self) -> dict[str, str]:
        return {k: e.label for k, e in self._entries.items()}

    def colors(self) -> dict[str, str]:
        return {k: e.color for k, e in self._entries.items()}

    def entries(self) -> list[Entry[T]]:
        return list(self._entries.values())

    def table(self) -> list[dict[str, str]]:
        """Rows for ``--help`` texts, the models page and ``python -m backend <id> methods --json``."""
        return [{"name": e.name, "label": e.label, "kind": e.kind, "color": e.color, "about": e.about}
                for e in self._entries.values()]

    def keys_of(self, names: str | Iterable[str]) -> tuple[str, ...]:
        """Names as registered keys, in order: ``"all"``, a comma-separated string or a sequence; at least one
        (:class:`InputError` naming the valid ones otherwise). The configs of jobs validate their method lists with it."""
        if isinstance(names, str):
            if names.strip().lower() == "all":
                return tuple(self._entries)
            names = [t.strip() for t in names.split(",") if t.strip()]
        out = tuple(self.key(n) for n in names)
        if not out:
            raise InputError(f"Give at least one {self.family}: {', '.join(self._entries)} or 'all'.")
        return out

    def parse_names(self, text: str | list[str]) -> list[str]:
        """argparse ``type=`` helper: a comma-separated (or list of) method names -> registered keys, in that order."""
        items = text if isinstance(text, list) else [t for t in str(text).split(",") if t.strip()]
        try:
            return [self.key(t) for t in items]
        except InputError as err:
            raise argparse.ArgumentTypeError(str(err)) from err

    # ------------------------------------------------------------------------------------------------ Mapping
    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.family!r}: {', '.join(self._entries)})"


def choose(value: object, valid: Iterable[str], what: str) -> str:
    """``value`` as one of the ``valid`` names (case and surrounding spaces ignored); InputError listing them
    otherwise. The lookup for fixed choices that are not methods (a constraint, a preset, an executor), so every
    "Unknown ..." message is written once, here and in :meth:`Registry.key`."""
    names = list(valid)
    key = str(value).strip().lower()
    for name in names:
        if name.lower() == key:
            return name
    raise InputError(f"Unknown {what} {value!r}. Valid names: {', '.join(names)}.")


__all__ = ["Entry", "KINDS", "PALETTE", "Registry", "choose"]
