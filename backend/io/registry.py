"""Every entry point through which user data enters the lab: one row per kind of input, its decoder and its limits.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``image`` | ``backend.io.images.decode_image`` | PNG, JPEG, WebP | 20 MB, 40 megapixels, 16-12,000 px per side | attribution, illava, models, rewatermark pages; ``illava run --image``, ``rewatermark run IMAGE``, ``attribution embed/attribute``, image folders of the watermark CLIs (``backend.watermark.datasets.read_image_file``) |
| ``video`` | ``backend.io.video.decode_video`` | MP4, WebM, GIF, NPZ, ZIP of PNG | 20 MB, 5-240 frames, 1,024 px per side | sigmark page; ``sigmark extract FILE`` |
| ``text_corpus`` | ``backend.compression.corpus.decode_upload`` | UTF-8 text | 2 MB | pruning, stamp, tactic pages; ``pruning run --calib/--eval``, ``pruning encoder --text``, ``stamp eval --text``, ``tactic run/ppl --text`` |
| ``model_folder`` | ``backend.io.folders.check_model_folder`` | a folder with ``config.json`` | config.json 1 MB, a JSON object | every local model folder a loader is given (``backend.models._common.resolve_source``): models page source boxes, ``models check --source``, ``glot --backbone``, ``softbon text --encoder`` |

Pages read uploads with ``ui.inputs.upload(kind, ...)`` / ``ui.inputs.file_input(kind, ...)`` and CLI handlers read a
path with :func:`read_path`; both go through :func:`decode`. Each kind also names a small valid example and its
valid-but-odd variants (:mod:`backend.io.examples`), from which ``tests/data/bad/make_corpus.py`` builds the bad-input
corpus and the fuzzing tests build their mutations. A new kind of input is one row in ``KINDS`` below and one in the
table above: the corpus, the fuzzing and the bypass scan (``tests/test_inputs.py``) then cover it.

Kinds that one method reads are declared by that method's package, in its ``inputs`` module (``KINDS``, a tuple of
:class:`InputKind` whose decoder, example and odd examples are ``"module:function"`` names inside the package) and
discovered through the catalog (:func:`discover`): this module imports no method package. The shared kinds are
listed in ``_SHARED`` below and in the table above; a method package's own kinds are in its ``inputs`` docstring.

Decoders are named by import path and imported on first use, so this table stays import-light (no torch, no pandas).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError

MB = 2**20


@dataclass(frozen=True)
class InputKind:
    """One entry point.

    ``decoder``/``example``/``odd`` are ``"module:function"``. A ``source="bytes"`` decoder is called as
    ``decoder(data, name=..., **options)``; a ``source="folder"`` one as ``decoder(path, name=..., **options)``, and
    its corpus files are the folder's ``config.json``. ``family`` chooses the corpus mutations (``image``, ``archive``,
    ``netcdf``, ``csv``, ``text``, ``json``).
    """

    name: str
    what: str
    decoder: str
    extensions: tuple[str, ...]
    max_bytes: int
    limits: str
    example: str
    odd: str
    family: str
    source: str = "bytes"

    def load(self, attr: str = "decoder") -> Callable[..., Any]:
        module, _, func = getattr(self, attr).partition(":")
        return getattr(importlib.import_module(module), func)

    @property
    def max_mb(self) -> float:
        return self.max_bytes / MB


def declare(module: str, name: str, what: str, decoder: str, extensions: tuple[str, ...], max_bytes: int,
            limits: str, family: str, source: str = "bytes", example: str | None = None) -> InputKind:
    """A kind whose example files are made by the functions ``<example or name>`` and ``<example or name>_odd`` of
    ``module`` (a method's ``inputs`` module passes ``__name__``)."""
    ex = f"{module}:{example or name}"
    return InputKind(name, what, decoder, extensions, max_bytes, limits, ex, f"{ex}_odd", family, source)


def _k(*args: Any, **kwargs: Any) -> InputKind:
    """A shared row: its examples live in :mod:`backend.io.examples`."""
    return declare("backend.io.examples", *args, **kwargs)


_SHARED: tuple[InputKind, ...] = (
    _k("image", "an image", "backend.io.images:decode_image", ("png", "jpg", "jpeg", "webp"), 20 * MB,
       "PNG, JPEG or WebP; at most 20 MB, 40 megapixels and 12,000 px per side", "image"),
    _k("video", "a video", "backend.io.video:decode_video", ("mp4", "webm", "gif", "npz", "zip"), 20 * MB,
       "MP4, WebM, GIF, or a lossless NPZ / ZIP of PNG frames; at most 20 MB, 5-240 frames, 1,024 px per side",
       "archive"),
    _k("text_corpus", "a text corpus", "backend.compression.corpus:decode_upload", ("txt", "md"), 2 * MB,
       "UTF-8 text (.txt, .md), at most 2 MB", "text"),
    _k("model_folder", "a model folder", "backend.io.folders:check_model_folder", (), MB,
       "a folder written by save_pretrained: config.json (a JSON object, at most 1 MB) plus weights", "json",
       source="folder", example="model_config"),
)


def declared_kinds(package: str) -> tuple[InputKind, ...]:
    """The kinds a method package declares in its ``inputs`` module (``KINDS``; none when it has no such module)."""
    name = f"{package}.inputs"
    try:
        if importlib.util.find_spec(name) is None:
            return ()
    except ModuleNotFoundError:
        return ()
    kinds = tuple(getattr(importlib.import_module(name), "KINDS", ()))
    for k in kinds:
        if not isinstance(k, InputKind):
            raise TypeError(f"{name}.KINDS must hold InputKind rows, got {type(k).__name__}")
    return kinds


def discover() -> dict[str, InputKind]:
    """The shared kinds above plus the kinds of every method package the catalog names (its ``inputs.KINDS``).

    A kind's name is unique across the lab; a package declaring a name already taken is a bug (ValueError).
    """
    from .. import catalog  # pure data: no method package is imported here, only the catalog's package names

    out = {k.name: k for k in _SHARED}
    for paper in catalog.packaged():
        for k in declared_kinds(paper.package):
            if k.name in out:
                raise ValueError(f"input kind {k.name!r} of {paper.package} is registered twice")
            out[k.name] = k
    return out


class _Kinds(Mapping[str, InputKind]):
    """``name -> InputKind`` for every registered kind, discovered on first use (so importing this module stays
    import-light and no method package is imported before a kind is asked for)."""

    def __init__(self) -> None:
        self._table: dict[str, InputKind] | None = None

    @property
    def table(self) -> dict[str, InputKind]:
        if self._table is None:
            self._table = discover()
        return self._table

    def refresh(self) -> None:
        """Forget the discovered table (tests that add a package to the catalog call it)."""
        self._table = None

    def __getitem__(self, name: str) -> InputKind:
        return self.table[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


KINDS = _Kinds()


def get(kind: str) -> InputKind:
    """The registered kind; an unknown name raises InputError listing the registered ones."""
    try:
        return KINDS[kind]
    except KeyError:
        raise InputError(f"Unknown input kind {kind!r}; registered: {', '.join(KINDS)}.") from None


def _too_large(size: int, name: str, k: InputKind) -> InputError:
    return InputError(f"{name} is {size / MB:.1f} MB; the limit for {k.what} is {k.max_mb:g} MB. ({k.limits}.)")


def decode(kind: str, data: bytes, name: str = "the upload", **options: Any) -> Any:
    """Decode user bytes as ``kind``: the size is checked first, then the registered decoder runs.

    Raises InputError for anything wrong with the data (the decoder's own messages); any other exception is a bug.
    """
    k = get(kind)
    if k.source != "bytes":
        raise TypeError(f"{kind} is read from a folder path: use read_path")
    if len(data) > k.max_bytes:
        raise _too_large(len(data), name, k)
    return k.load()(data, name=name, **options)


def read_path(kind: str, path: str | Path, **options: Any) -> Any:
    """Read a file (or folder) a user names on the command line and decode it as ``kind``.

    Missing paths, directories given for files, unreadable files and files above the kind's limit (checked with
    ``stat`` before reading) raise InputError.
    """
    k = get(kind)
    p = Path(path).expanduser()
    if k.source == "folder":
        return k.load()(p, name=str(path), **options)
    if not p.exists():
        raise InputError(f"No such file: {path}")
    if not p.is_file():
        raise InputError(f"{path} is not a file; give the path of {k.what} ({k.limits}).")
    try:
        size = p.stat().st_size
        if size > k.max_bytes:
            raise _too_large(size, p.name, k)
        data = p.read_bytes()
    except OSError as err:
        raise InputError(f"Cannot read {path}: {err.strerror or err}.") from None
    return decode(kind, data, name=p.name, **options)


def example(kind: str, seed: int = 0) -> bytes:
    """A small valid file of ``kind`` (for a folder kind: its config.json)."""
    return get(kind).load("example")(seed)


def odd_examples(kind: str) -> dict[str, bytes]:
    """Valid-but-odd files of ``kind``: each is processed or refused with an InputError."""
    return get(kind).load("odd")()
