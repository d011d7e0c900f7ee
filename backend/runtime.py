"""Runtime plumbing shared by every method: seeding, torch threads, device, progress callbacks, cancellation, the job
lock that serialises heavy work on a small machine, the user cache folder, and the provenance block of every report.

Nothing here imports torch at module import time (the home page must render without torch); functions that need it
import it lazily.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import random
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .errors import JobCancelled

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"


class Progress(Protocol):
    """A progress callback: ``progress(fraction in [0, 1], message)``. Long backend loops call it; pages map it onto
    ``st.progress``/``st.status``. It may raise :class:`JobCancelled` to stop the job."""

    def __call__(self, fraction: float, message: str = "") -> None: ...


def null_progress(fraction: float, message: str = "") -> None:  # noqa: ARG001 - the no-op Progress
    return None


def report(progress: Progress | None, fraction: float, message: str = "") -> None:
    """Call ``progress`` if given (clamping the fraction to [0, 1])."""
    if progress is not None:
        progress(min(1.0, max(0.0, float(fraction))), message)


def checked(progress: Progress | None, token: CancelToken | None) -> Progress | None:
    """``progress`` that first checks ``token`` (a job's cancel flag and time cap); ``token`` None: ``progress``
    itself. Every job ``run_*(..., progress=None, token=None)`` starts with it."""
    return progress if token is None else token.wrap(progress)


def sub_progress(progress: Progress | None, start: float, end: float) -> Progress:
    """Map a child job's [0, 1] onto ``[start, end]`` of the parent's progress."""

    def child(fraction: float, message: str = "") -> None:
        report(progress, start + (end - start) * fraction, message)

    return child


# ----------------------------------------------------------------------------------------------------------- threads
def cache_dir() -> Path:
    """The user cache folder for one-time conversions (``$METHOD_LAB_CACHE``, default ``~/.cache/method-lab``)."""
    path = Path(os.environ.get("METHOD_LAB_CACHE", Path.home() / ".cache" / "method-lab")).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_threads() -> int:
    """Torch threads for heavy work: ``$METHOD_LAB_THREADS`` or 1 (two sessions on two cores must not oversubscribe)."""
    try:
        return max(1, int(os.environ.get("METHOD_LAB_THREADS", "1")))
    except ValueError:
        return 1


_threads_set = False


def setup_torch(threads: int | None = None) -> None:
    """Set torch's intra-op thread count once per process (later calls with an explicit value change it)."""
    global _threads_set
    import torch

    if threads is not None or not _threads_set:
        torch.set_num_threads(threads or default_threads())
        _threads_set = True


def device(prefer: str | None = None) -> str:
    """``cuda`` when asked for and available (or ``$METHOD_LAB_DEVICE``), else ``cpu``."""
    import torch

    want = prefer or os.environ.get("METHOD_LAB_DEVICE", "cpu")
    return "cuda" if want == "cuda" and torch.cuda.is_available() else "cpu"


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (if imported). Methods still take explicit ``seed``/``generator`` arguments."""
    import sys

    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % 2**32)
    except ImportError:  # pragma: no cover
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


# ----------------------------------------------------------------------------------------------------- cancellation
@dataclass
class CancelToken:
    """A cancel flag plus an optional deadline (the per-job time cap). ``check()`` raises :class:`JobCancelled`."""

    time_cap_s: float | None = None
    started: float = field(default_factory=time.monotonic)
    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise JobCancelled("The job was cancelled.")
        if self.time_cap_s is not None and time.monotonic() - self.started > self.time_cap_s:
            raise JobCancelled(f"The job ran past its time cap of {self.time_cap_s:.0f} s; try a smaller setting.")

    def wrap(self, progress: Progress | None) -> Progress:
        """A Progress that checks this token before forwarding to ``progress``."""

        def wrapped(fraction: float, message: str = "") -> None:
            self.check()
            report(progress, fraction, message)

        return wrapped


# --------------------------------------------------------------------------------------------------------- job lock
class JobLock:
    """A FIFO lock for heavy jobs. Waiters learn their queue position through ``on_wait(position)`` (1 = next).

    One instance is shared by all sessions of a server (the UI keeps it in ``st.cache_resource``); the CLI and tests
    use :func:`job_lock`'s process-wide default.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[object] = []
        self._holder: object | None = None

    def queue_length(self) -> int:
        with self._cond:
            return len(self._queue) + (self._holder is not None)

    @contextmanager
    def hold(
        self,
        on_wait: Callable[[int], None] | None = None,
        token: CancelToken | None = None,
        poll_s: float = 0.5,
    ) -> Iterator[None]:
        me = object()
        with self._cond:
            self._queue.append(me)
        try:
            while True:
                with self._cond:
                    if self._holder is None and self._queue[0] is me:
                        self._queue.pop(0)
                        self._holder = me
                        break
                    position = self._queue.index(me) + 1
                if on_wait is not None:
                    on_wait(position)
                if token is not None:
                    token.check()
                with self._cond:
                    self._cond.wait(timeout=poll_s)
        except BaseException:
            with self._cond:
                if me in self._queue:
                    self._queue.remove(me)
                self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self._holder = None
                self._cond.notify_all()


_default_lock = JobLock()


def job_lock() -> JobLock:
    """The process-wide job lock (Streamlit pages get the same object through ``ui.runner``)."""
    return _default_lock


# ------------------------------------------------------------------------------------------------------- provenance
def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def git_commit() -> str | None:
    """The project's git commit (``$METHOD_LAB_COMMIT`` in images without .git), or None."""
    if os.environ.get("METHOD_LAB_COMMIT"):
        return os.environ["METHOD_LAB_COMMIT"]
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5, check=True
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


_VERSIONED = ("torch", "transformers", "diffusers", "numpy", "scipy", "streamlit", "pillow", "scikit-image", "pysteps")


def package_versions(names: Iterable[str] = _VERSIONED) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return out


def provenance(seed: int | None, assets: Iterable[str | Path] = (), **params: object) -> dict[str, object]:
    """The block every JSON report carries: versions, git commit, seed, sha256 of the assets used, parameters."""
    hashes = {}
    for a in assets:
        p = Path(a)
        if p.is_file():
            try:
                rel = str(p.resolve().relative_to(ROOT))
            except ValueError:
                rel = p.name
            hashes[rel] = sha256_file(p)
    return {
        "method_lab_version": __import__("backend").__version__,
        "git_commit": git_commit(),
        "seed": seed,
        "packages": package_versions(),
        "assets_sha256": hashes,
        "params": params,
        "created_unix": round(time.time(), 3),
    }


def write_json_atomic(path: str | Path, data: object, indent: int = 2) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file and a rename, so a reader never sees half a file."""
    import json

    path = Path(path)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=indent, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def timed() -> Callable[[], float]:
    """``t = timed(); ...; t()`` -> seconds elapsed (perf_counter)."""
    start = time.perf_counter()
    return lambda: time.perf_counter() - start


def setup_torch_if_loaded() -> None:
    """Apply the thread setting only if torch is importable (CLI start-up; does not import torch otherwise)."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        setup_torch()
