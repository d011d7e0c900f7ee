"""Folders a user names by path: a saved transformers model (``config.json`` plus weights).

Only the small metadata is read here (``config.json``: at most 1 MB of UTF-8 JSON holding an object); weights are read
later by the loaders with ``safetensors`` or ``torch.load(weights_only=True)``. Failures are :class:`InputError`.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError

MAX_CONFIG_BYTES = 2**20


def check_model_folder(path: str | Path, name: str | None = None, role: str = "model") -> Path:
    """The resolved folder when it holds a readable ``config.json`` (a JSON object); InputError otherwise."""
    p = Path(path).expanduser()
    label = name or str(p)
    if not p.is_dir():
        raise InputError(f"{label} is not a folder; the {role} needs a model folder (config.json plus weights).")
    cfg = p / "config.json"
    if not cfg.is_file():
        raise InputError(f"The folder {label} has no config.json, so it is not a saved transformers model. Point the "
                         f"{role} at a folder written by save_pretrained (config.json plus weights).")
    size = cfg.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise InputError(f"config.json in {label} is {size / 2**20:.1f} MB; a model configuration is a few KB "
                         f"(limit {MAX_CONFIG_BYTES // 2**20} MB).")
    try:
        text = cfg.read_bytes().decode("utf-8-sig")
        data = json.loads(text)
    except UnicodeDecodeError as err:
        raise InputError(f"config.json in {label} is not UTF-8 (byte {err.start}).") from None
    except (ValueError, RecursionError) as err:
        raise InputError(f"config.json in {label} is not valid JSON ({str(err)[:120]}).") from None
    except OSError as err:
        raise InputError(f"config.json in {label} cannot be read ({err.strerror or err}).") from None
    if not isinstance(data, dict):
        raise InputError(f"config.json in {label} must hold a JSON object, not {type(data).__name__}.")
    return p.resolve()
