"""One weights I/O for every safetensors file the project ships (``assets/<id>_*.safetensors``).

Layout: the tensors, plus ONE metadata key ``method_lab`` holding JSON with a fixed schema::

    {"schema": 1,
     "config":     {...},   # the dataclass config the module rebuilds its model from
     "command":    "python -m backend.train <id> ...",   # the exact project command that made the file
     "data_seeds": {...},   # seeds / index ranges of the training data
     "quality":    {...},   # what the file reaches, measured by the command in quality["command"]
     "extra":      {...}}   # anything else a method needs at load time (e.g. an architecture tag)

:func:`save` writes it; :func:`load` reads tensors and metadata after :func:`check` (a clear :class:`WeightsError`
when the file is missing, saying which command makes it, or when a shipped file does not match the sha256 of its row
in ``assets/manifest.json``); :func:`load_into` fills an ``nn.Module``. Only safetensors are read: no pickle.
Saving into ``assets/`` a file that has a manifest row refreshes the row's size and sha256 (a retrained file is the
shipped one from then on; its quality fields are the training command's to update).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"
MANIFEST_JSON = ASSETS / "manifest.json"
META_KEY = "method_lab"
SCHEMA = 1


class WeightsError(InputError):
    """A weights file is missing, unreadable or not the one the manifest lists; the message says how to get it."""


@dataclass
class WeightsMeta:
    """The metadata of one weights file (see the module docstring for the schema)."""

    config: dict[str, Any] = field(default_factory=dict)
    command: str = ""
    data_seeds: dict[str, Any] = field(default_factory=dict)
    quality: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"schema": SCHEMA, "config": self.config, "command": self.command,
                           "data_seeds": self.data_seeds, "quality": self.quality, "extra": self.extra},
                          sort_keys=True, default=str)

    @classmethod
    def from_header(cls, header: dict[str, str] | None) -> WeightsMeta:
        raw = (header or {}).get(META_KEY)
        if raw is None:
            return cls(extra=dict(header or {}))
        d = json.loads(raw)
        return cls(config=d.get("config", {}), command=d.get("command", ""), data_seeds=d.get("data_seeds", {}),
                   quality=d.get("quality", {}), extra=d.get("extra", {}))


def manifest_rows() -> dict[str, dict[str, Any]]:
    """Rows of ``assets/manifest.json`` by file name (empty if the manifest is absent)."""
    if not MANIFEST_JSON.is_file():
        return {}
    return {row["file"]: row for row in json.loads(MANIFEST_JSON.read_text())["files"]}


def _is_shipped(p: Path) -> bool:
    try:
        return p.resolve().parent == ASSETS.resolve()
    except OSError:
        return False


def check(path: str | Path, made_by: str | None = None, verify: bool = True) -> Path:
    """The path, after checking it exists and (for a shipped file listed in the manifest) matches its sha256.

    ``made_by`` is the command that makes the file, named in the error when it is missing (default: the manifest's)."""
    from .runtime import sha256_file

    p = Path(path)
    row = manifest_rows().get(p.name) if _is_shipped(p) else None
    if not p.is_file():
        how = made_by or (row or {}).get("command") or "its training command (python -m backend.train --help)"
        raise WeightsError(f"No weights file at {p}. It is made by `{how}`.")
    if verify and row is not None and row.get("sha256") and sha256_file(p) != row["sha256"]:
        raise WeightsError(f"{p.name} does not match assets/manifest.json (sha256 differs): the file was changed or "
                           f"replaced. Restore it from git, or remake it with `{row.get('command', '?')}` and update "
                           "the manifest (`python -m backend.manifest --write`).")
    return p


_VERIFIED: dict[tuple[str, float, int], bool] = {}


def _check_cached(p: Path, made_by: str | None) -> Path:
    """:func:`check`, hashing each (path, mtime, size) once per process."""
    p = check(p, made_by, verify=False)
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime, st.st_size)
    if key not in _VERIFIED:
        check(p, made_by, verify=True)
        _VERIFIED[key] = True
    return p


def read_meta(path: str | Path) -> WeightsMeta:
    """The metadata of a weights file, without reading its tensors."""
    from safetensors import safe_open

    p = _check_cached(Path(path), None)
    with safe_open(str(p), framework="pt") as f:
        return WeightsMeta.from_header(f.metadata())


def load(path: str | Path, made_by: str | None = None, device: str = "cpu") -> tuple[dict[str, Any], WeightsMeta]:
    """Tensors ``{name: Tensor}`` and metadata of a safetensors file (checked first, see :func:`check`)."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    p = _check_cached(Path(path), made_by)
    with safe_open(str(p), framework="pt") as f:
        meta = WeightsMeta.from_header(f.metadata())
    return load_file(str(p), device=device), meta


def load_into(module: Any, path: str | Path, made_by: str | None = None, strict: bool = True) -> WeightsMeta:
    """Load a file written by :func:`save` into ``module`` (eval mode); returns its metadata."""
    state, meta = load(path, made_by)
    result = module.load_state_dict(state, strict=strict)
    if strict is False and (result.missing_keys or result.unexpected_keys):
        meta.extra.setdefault("_load", {"missing": list(result.missing_keys),
                                        "unexpected": list(result.unexpected_keys)})
    module.eval()
    return meta


def save(path: str | Path, tensors: dict[str, Any] | Any, *, config: dict[str, Any] | None = None, command: str = "",
         data_seeds: dict[str, Any] | None = None, quality: dict[str, Any] | None = None,
         extra: dict[str, Any] | None = None) -> Path:
    """Write ``tensors`` (a state dict, or an ``nn.Module``) with the one metadata layout; returns the path.

    Written through a temporary file and a rename (two processes never see half a file)."""
    import os

    from safetensors.torch import save_file

    if hasattr(tensors, "state_dict"):
        tensors = tensors.state_dict()
    state = {k: v.detach().contiguous() for k, v in tensors.items()}
    meta = WeightsMeta(config or {}, command, data_seeds or {}, quality or {}, extra or {})
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    save_file(state, str(tmp), metadata={META_KEY: meta.to_json()})
    tmp.chmod(0o644)  # readable by the app's non-root user, whatever the trainer's umask
    os.replace(tmp, p)
    if _is_shipped(p) and p.name in manifest_rows():
        # A training command that writes into assets/ makes the new file the shipped one: its manifest row takes the
        # new size and sha256 at once, so the file loads (and the manifest check passes) without a manual step.
        from . import manifest

        manifest.write()
    return p


def tensor_hashes(path: str | Path) -> dict[str, str]:
    """sha256 of every tensor (dtype, shape and raw bytes, read straight from the safetensors layout): equal before
    and after a rewrite that changes only the metadata."""
    import hashlib
    import struct

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name in sorted(k for k in header if k != "__metadata__"):
            t = header[name]
            start, end = t["data_offsets"]
            f.seek(base + start)
            h = hashlib.sha256(f"{t['dtype']}{t['shape']}".encode())
            h.update(f.read(end - start))
            out[name] = h.hexdigest()
    return out


RECORDED_TENSORS = ROOT / "tests" / "weights_tensors.json"


def record_tensors(path: Path = RECORDED_TENSORS) -> dict[str, dict[str, str]]:
    """Write the per-tensor digests of every shipped safetensors file (``tests/test_weights.py`` compares them)."""
    table = {p.name: tensor_hashes(p) for p in sorted(ASSETS.glob("*.safetensors"))}
    path.write_text(json.dumps(table, indent=1) + "\n")
    return table


def main(argv: list[str] | None = None) -> int:
    """``python -m backend.weights --record``: rewrite ``tests/weights_tensors.json`` from ``assets/``."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["--record"]:
        print("usage: python -m backend.weights --record", file=sys.stderr)
        return 2
    print(f"recorded {len(record_tensors())} files in {RECORDED_TENSORS.relative_to(ROOT)}")
    return 0


__all__ = ["WeightsError", "WeightsMeta", "check", "load", "load_into", "manifest_rows", "read_meta", "record_tensors",
           "save", "tensor_hashes"]

if __name__ == "__main__":
    raise SystemExit(main())
