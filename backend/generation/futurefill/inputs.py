"""The inputs of FutureFill: the ``series`` kind (a user's 1-D series), its examples, and the synthetic series the page
and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``series`` | ``backend.generation.futurefill.futurefill.load_series`` | text / CSV of numbers | 5 MB, 16-65,536 finite values | futurefill page; ``futurefill generate --series`` |

``PRESETS``: ``{name: f(n, seed) -> [n] float64}``, the synthetic series (two sines, an AR(2) process, a random walk,
random +-1 tokens); ``futurefill.preset_series`` draws one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="series",
        what="a 1-D series",
        decoder="backend.generation.futurefill.futurefill:load_series",
        extensions=("txt", "csv"),
        max_bytes=5 * MB,
        limits="UTF-8 text or CSV, one number per line (or one numeric column); 16 to 65,536 finite values, 5 MB",
        family="csv",
    ),
)


def _ar2(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros(n)
    e = rng.standard_normal(n)
    for t in range(2, n):
        x[t] = 1.6 * x[t - 1] - 0.8 * x[t - 2] + 0.3 * e[t]
    return x


PRESETS: dict[str, Callable[[int, int], np.ndarray]] = {
    "sines": lambda n, s: (np.sin(2 * np.pi * np.arange(n) / 50) + 0.5 * np.sin(2 * np.pi * np.arange(n) / 13)
                           + 0.1 * np.random.default_rng(s).standard_normal(n)),
    "ar2": lambda n, s: _ar2(n, s),
    "random walk": lambda n, s: np.cumsum(np.random.default_rng(s).standard_normal(n)) * 0.1,
    "random tokens": lambda n, s: np.random.default_rng(s).choice([-1.0, 1.0], size=n),
}


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def series(seed: int = 0) -> bytes:
    """A 1-D series of 40 numbers, one per line, with a header."""
    r = np.random.default_rng(seed)
    x = np.sin(np.arange(40) / 3.0) + r.normal(0, 0.05, 40)
    return _lines(["value"] + [f"{v:.4f}" for v in x])


def series_odd() -> dict[str, bytes]:
    """Valid-but-odd series: CRLF line ends, all on one line, semicolons with negatives, one row, a byte-order mark."""
    x = [f"{np.sin(i / 2):.3f}" for i in range(20)]
    return {"crlf.txt": _lines(x, crlf=True), "one_line.txt": " ".join(x).encode(),
            "negative_semicolons.csv": _lines([f"{i};-{v.lstrip('-')}" for i, v in enumerate(x)]),
            "one_row.csv": _lines(["value", "1.0"]), "bom.txt": b"\xef\xbb\xbf" + _lines(x)}
