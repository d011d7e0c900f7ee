"""The inputs of STDDN: the ``trajectories`` kind (a user's pedestrian tracks), its examples (one small valid file and
valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), the scenes the page offers
instead of an upload and the shipped sample CSV.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``trajectories`` | ``backend.forecast.crowd.csvio.read_trajectories`` | CSV ``frame,id,x,y`` | 5 MB, 600 pedestrians, 180 s | crowd page; ``crowd simulate --input`` |

``PRESETS``: the held-out scenes by their page labels (values: the scene kinds of
:data:`backend.forecast.crowd.scenes.PRESETS`, ``python -m backend crowd simulate --scene <kind>``); ``SAMPLE``: a
20 s bottleneck clip written at ``SAMPLE_FPS`` (``python -m backend.train crowd --sample``).
"""

from __future__ import annotations

import numpy as np

from backend.io.registry import MB, InputKind, declare
from backend.runtime import ASSETS

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="trajectories", what="pedestrian trajectories",
            decoder="backend.forecast.crowd.csvio:read_trajectories", extensions=("csv", "txt"), max_bytes=5 * MB,
            limits="UTF-8 CSV with columns frame, id, x, y (metres); at most 5 MB, 600 pedestrians, 180 s",
            family="csv"),
)

PRESETS: dict[str, str] = {"Bottleneck (gap 1.6 m)": "bottleneck", "Corridor, counter-flow (5 m)": "corridor",
                           "Crossing flows (6 m streets)": "crossing", "Concourse (GC-like, layout C)": "concourse"}
SAMPLE = ASSETS / "crowd_sample_bottleneck.csv"
SAMPLE_FPS = 2.5


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def trajectories(seed: int = 0) -> bytes:
    """A ``frame,id,x,y`` CSV: 3 pedestrians over 8 frames."""
    r = np.random.default_rng(seed)
    rows = ["frame,id,x,y"]
    for f in range(8):
        for i in range(3):
            rows.append(f"{f},{i},{i * 1.5 + 0.3 * f + r.normal(0, 0.01):.3f},{2.0 - 0.1 * f * i:.3f}")
    return _lines(rows)


def trajectories_odd() -> dict[str, bytes]:
    """Valid-but-odd CSVs: CRLF line ends, a byte-order mark, one row, capitalised headers with an extra formula
    column, text ids."""
    base = trajectories(1).decode().splitlines()
    named = ["Frame,ID,X,Y,extra"] + [f"{ln},=HYPERLINK(\"x\")" for ln in base[1:]]
    return {"crlf.csv": _lines(base, crlf=True), "bom.csv": b"\xef\xbb\xbf" + _lines(base),
            "one_row.csv": _lines(base[:2]), "formula_and_case.csv": _lines(named),
            "text_ids.csv": _lines(["frame,id,x,y"] + [f"{f},-walker{i},{i + 0.2 * f},{f * 0.1}"
                                                       for f in range(4) for i in range(2)])}
