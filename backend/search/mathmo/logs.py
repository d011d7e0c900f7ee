"""Recorded model spaces and LM transcripts of MATHMO's claims (``python -m backend.train mathmo``).

``assets/mathmo_spaces.json.gz``: every model of the space (:func:`.facility.all_models`) run on the paired generated
instances (``facility.generate(10, 30, seed)``, seeds 0-19): per model ``[cost, effort, robust, work, open mask,
seconds]``, with a digest of the instance it was run on. Searches are deterministic given the models' objectives, so
the claims replay the strategies on these logs; the tests re-run a sample of the logged models (and the full tier all
of them) and compare.

``assets/mathmo_lm_log.json``: the language-model operator's transcripts (prompt and reply per call, in order) of the
paired searches the LM claim measures; replaying them gives the same searches without the model, and the tests
re-generate a sample of the replies with the model.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np

from ...weights import ASSETS
from . import facility as F

SPACES_FILE = ASSETS / "mathmo_spaces.json.gz"
LM_FILE = ASSETS / "mathmo_lm_log.json"
SIZE = (10, 30)  # facilities, customers of the logged instances
SEEDS = 20


def instance_digest(inst: F.Instance) -> str:
    """sha256 (16 hex) of the instance's arrays: a log row set belongs to exactly this instance."""
    h = hashlib.sha256()
    for a in (inst.fac_xy, inst.fixed, inst.capacity, inst.cust_xy, inst.demand):
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def encode(row: dict[str, object], m: int) -> list:
    mask = sum(1 << int(j) for j in row["open"])  # type: ignore[union-attr]
    assert max(row["open"] or [0]) < m  # type: ignore[type-var, operator]
    return [row["cost"], row["effort"], row["robust"], row["work"], mask, round(float(row["seconds"]), 5)]


def decode(vec: list, model: tuple[str, tuple]) -> dict[str, object]:
    f, values = model
    cost, effort, robust, work, mask, seconds = vec
    return {"framework": f, "knobs": dict(zip(F.KNOBS[f], values)), "open": [j for j in range(64) if mask >> j & 1],
            "cost": float(cost), "effort": float(effort), "work": int(work), "robust": float(robust),
            "seconds": float(seconds)}


def write_spaces(entries: list[dict[str, object]], path: Path = SPACES_FILE) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump({"size": list(SIZE), "models": len(F.all_models()), "seeds": entries}, fh, separators=(",", ":"))


_SPACES: dict | None = None


def load_spaces(path: Path = SPACES_FILE) -> dict[int, dict[str, object]] | None:
    """Seed -> ``{"digest", "rows"}`` of the shipped log (None when it is missing or for another model space)."""
    global _SPACES
    if _SPACES is None:
        if not path.exists():
            return None
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            _SPACES = json.load(fh)
    if _SPACES["models"] != len(F.all_models()):
        return None
    return {int(e["seed"]): e for e in _SPACES["seeds"]}


def logged_rows(inst: F.Instance, seed: int) -> list[dict[str, object]] | None:
    """The logged model runs of ``inst`` with scenario seed ``seed``, when the log holds exactly this instance."""
    spaces = load_spaces()
    if not spaces or seed not in spaces or spaces[seed]["digest"] != instance_digest(inst):
        return None
    models = F.all_models()
    return [decode(v, mdl) for v, mdl in zip(spaces[seed]["rows"], models)]


def load_lm_log(path: Path = LM_FILE) -> dict[str, object] | None:
    return json.loads(path.read_text()) if path.exists() else None
