"""The inputs of PBFM: the ``pde_field`` kind (one PDE field, checked against the case's residual), its examples, and
the presets the page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``pde_field`` | ``backend.physics.pbfm.pdes.read_field`` | NPZ / CSV of one PDE field | 2 MB, Darcy [2, 64] or heat [1, 8, 32], finite | pbfm page; ``pbfm residual --field`` |

``PRESETS``: the PDE cases of the project's own solvers (:data:`backend.physics.pbfm.pdes.CASES`: darcy, heat).
The examples are solver fields: one small valid file and valid-but-odd variants, from which the bad-input corpus and
the fuzzing tests are built.
"""

from __future__ import annotations

import io

import numpy as np

from ...io.registry import MB, InputKind, declare
from .pdes import CASES

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="pde_field",
        what="a PDE field",
        decoder="backend.physics.pbfm.pdes:read_field",
        extensions=("npz", "csv", "txt"),
        max_bytes=2 * MB,
        limits="NPZ with a float array 'field' (or CSV rows): Darcy [2, 64] (log k, u) or heat [1, 8, 32]; finite "
               "values, no object arrays; 2 MB",
        family="archive",
    ),
)
PRESETS = CASES


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
