"""Example files of the ``pde_field`` input kind (:mod:`backend.io.registry`): one small valid file and valid-but-odd
variants, from which the bad-input corpus and the fuzzing tests are built (the kind's decoder is
``backend.physics.pdes.read_field``)."""

from __future__ import annotations

import io

import numpy as np


def _solved(fields: np.ndarray) -> np.ndarray:
    """Solver output rounded to 9 decimals: the linear solve's last bits differ between BLAS builds, and the corpus
    derived from these examples is compared byte for byte."""
    return np.round(fields, 9)


def pde_field(seed: int = 0) -> bytes:
    """An NPZ Darcy field ``[2, 64]``: log-permeability and pressure."""
    from .pdes import darcy_fields

    buf = io.BytesIO()
    np.savez(buf, field=_solved(darcy_fields(1, seed)[0]))
    return buf.getvalue()


def pde_field_odd() -> dict[str, bytes]:
    from .pdes import darcy_fields, heat_fields

    heat, other_key, f32 = io.BytesIO(), io.BytesIO(), io.BytesIO()
    np.savez(heat, field=_solved(heat_fields(1, 2)[0]))
    np.savez(other_key, u=_solved(darcy_fields(1, 3)[0]))
    np.savez_compressed(f32, field=_solved(darcy_fields(1, 4)[0]).astype(np.float32))
    rows = "\n".join(",".join(f"{v:.6g}" for v in r) for r in _solved(darcy_fields(1, 5)[0])).encode()
    return {"heat.npz": heat.getvalue(), "other_key.npz": other_key.getvalue(), "float32.npz": f32.getvalue(),
            "rows.csv": rows}
