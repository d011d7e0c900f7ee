"""Shared plumbing of the model loaders: turning a user's model name into a local folder, writing one-time conversions
atomically into the user cache folder, and counting parameters.

Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..runtime import cache_dir

# A Hugging Face repository id: "name" or "owner/name" (letters, digits, "-", "_", "."), at most 96 characters each.
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def resolve_source(name: str, role: str) -> Path:
    """Turn ``name`` (a local folder or a Hugging Face repository id) into a local model folder, without any network.

    A local folder must exist and hold a ``config.json``. A hub id must already be in the local Hugging Face cache
    (``huggingface_hub.snapshot_download(..., local_files_only=True)``); the lab never downloads. Anything else raises
    :class:`InputError` with a message the user can act on. ``role`` (e.g. "text encoder") only words the message.
    """
    text = str(name).strip()
    if not text:
        raise InputError(f"Empty model name for the {role}: leave it blank for the embedded default.")
    path = Path(text).expanduser()
    looks_local = path.is_absolute() or text.startswith((".", "~")) or path.exists()
    if path.is_dir():  # the registered model-folder entry point (backend.io.registry, kind "model_folder")
        from ..io.registry import read_path

        return read_path("model_folder", path, role=role)
    if path.exists():
        raise InputError(f"{path} is a file; the {role} needs a model folder (config.json plus weights) or a hub name.")
    if looks_local or not _HUB_ID.match(text):
        raise InputError(
            f"'{text}' is neither an existing local folder nor a valid Hugging Face model name (owner/name) for the "
            f"{role}."
        )
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(text, local_files_only=True)
    except Exception as err:  # noqa: BLE001 - LocalEntryNotFoundError, offline mode, bad ids, ... all mean "not here"
        raise InputError(
            f"The model '{text}' is not in the local Hugging Face cache and this lab works offline (no downloads). "
            f"Download it elsewhere with `hf download {text}` into the cache, or pass the path of a "
            f"local folder with the model's files, or leave the {role} blank for the embedded default."
        ) from err
    folder_path = Path(folder)
    if not (folder_path / "config.json").is_file():
        raise InputError(f"The cached copy of '{text}' has no config.json; it is not a transformers model.")
    return folder_path


def load_error(name: str, role: str, err: Exception) -> InputError:
    """Wrap a failure of ``from_pretrained`` on a user-given model into an :class:`InputError`."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return InputError(f"Could not load '{name}' as the {role}: {first[:300]}")


def count_parameters(module: Any) -> int:
    """Number of distinct parameters of a torch module (tied weights count once)."""
    return int(sum(p.numel() for p in module.parameters()))


# --------------------------------------------------------------------------------------------- one-time conversions
@contextlib.contextmanager
def _file_lock(path: Path, timeout_s: float) -> Iterator[None]:
    """An inter-process lock (``filelock``, a dependency of huggingface-hub) so that two processes do not run the same
    slow conversion at once. Without filelock the atomic rename alone still keeps the result consistent."""
    try:
        from filelock import FileLock
    except ImportError:  # pragma: no cover - filelock ships with huggingface-hub
        yield
        return
    with FileLock(str(path), timeout=timeout_s):
        yield


def cached_conversion(
    folder_name: str,
    convert: Callable[[Path], None],
    required: tuple[str, ...],
    recipe: dict[str, Any],
    timeout_s: float = 900.0,
) -> tuple[Path, bool]:
    """Return ``cache_dir()/folder_name``, creating it once with ``convert(tmp_folder)``.

    ``convert`` writes the converted model into an empty temporary folder beside the target; the folder is then moved
    into place with one atomic ``os.rename``, so a concurrent reader sees either nothing or a complete conversion.
    A lock file serialises concurrent converters; a process that loses the race simply uses the winner's folder.
    ``recipe`` (source file, versions, ...) is stored as ``conversion.json`` in the folder; a folder whose recipe
    differs (e.g. another source file) or that lacks one of the ``required`` files is converted again.

    Returns ``(folder, converted_now)``.
    """
    root = cache_dir()
    target = root / folder_name

    def complete() -> bool:
        if not all((target / f).is_file() for f in required):
            return False
        try:
            stored = json.loads((target / "conversion.json").read_text())
        except (OSError, ValueError):
            return False
        return stored.get("recipe") == recipe

    if complete():
        return target, False
    with _file_lock(root / f".{folder_name}.lock", timeout_s):
        if complete():  # another process finished while we waited
            return target, False
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder_name}.tmp-", dir=root))
        tmp.chmod(0o755)  # mkdtemp makes it 0700; the final folder should read like any other cache folder
        try:
            start = time.perf_counter()
            convert(tmp)
            for f in tmp.rglob("*"):  # some writers create 0600 files; a shared or baked-in cache must be readable
                f.chmod(0o755 if f.is_dir() else 0o644)
            meta = {"recipe": recipe, "seconds": round(time.perf_counter() - start, 2), "created_unix": time.time()}
            (tmp / "conversion.json").write_text(json.dumps(meta, indent=2))
            if target.exists():  # stale or incomplete: move it aside atomically, then delete
                stale = Path(tempfile.mkdtemp(prefix=f".{folder_name}.stale-", dir=root))
                os.rename(target, stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            try:
                os.rename(tmp, target)
            except OSError:
                if not complete():  # someone else wrote a folder that is not usable either
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target, True
