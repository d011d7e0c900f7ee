"""The inputs of CatalystBench: the ``element_records`` kind (element-like records to predict for), its examples (one
small valid file and valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), and the
presets of the page and the CLI.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``element_records`` | ``backend.data.catalystbench.records.read_records`` | CSV (UTF-8 or Latin-1, comma or semicolon) | 64 KB, 10 rows, the seven record columns | catalystbench page; ``catalystbench predict --records FILE`` |

``PRESETS``: benchmark views (name -> :class:`backend.data.catalystbench.jobs.BenchmarkConfig` settings).
``EXAMPLE_SENTENCES``: sentences for the extraction task.
"""

from __future__ import annotations

from typing import Any

from backend.io.registry import InputKind, declare

from .records import LIMITS, MAX_BYTES

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="element_records", what="element-like records",
            decoder="backend.data.catalystbench.records:read_records", extensions=("csv", "txt"),
            max_bytes=MAX_BYTES, limits=LIMITS, family="csv"),
)

PRESETS: dict[str, dict[str, Any]] = {
    "Recorded test metrics, 5 seeds (instant)": {"source": "recorded"},
    "Re-evaluate the checkpoints on 4 test elements, seed 0": {"source": "reevaluate", "elements": 4, "seeds": (0,)},
    "Re-evaluate every test element, 5 seeds (minutes)": {"source": "reevaluate", "elements": 0},
}

EXAMPLE_SENTENCES: tuple[str, ...] = (
    "Gallium melts at 303 K and has a density of 5.91 g/cm3.",
    "At 1941 K solid titanium turns liquid; it boils at 3560 K.",
)

HEADER = "id,name,symbol,atomic_number,period,group,block,atomic_weight\n"


def element_records(seed: int = 0) -> bytes:
    """Two real records and one invented one."""
    return (HEADER + "1,Iron,Fe,26,4,8,d,55.845\n2,Selenium,Se,34,4,16,p,78.971\n"
            "3,Examplium,Ex,126,8,,g,330.5\n").replace(",g,", ",d,").encode("utf-8")


def element_records_odd() -> dict[str, bytes]:
    """Valid-but-odd files: CRLF, a byte-order mark, semicolons with decimal commas, Latin-1, upper-case headers,
    extra columns and blank lines, an empty group cell."""
    rows = ["Iron,Fe,26,4,8,d,55.845", "Cerium,Ce,58,6,,f,140.116"]
    base = "name,symbol,atomic_number,period,group,block,atomic_weight\n" + "\n".join(rows) + "\n"
    return {
        "crlf.csv": base.replace("\n", "\r\n").encode(),
        "bom.csv": b"\xef\xbb\xbf" + base.encode(),
        "semicolon.csv": (b"name;symbol;atomic_number;period;group;block;atomic_weight\n"
                          b"Iron;Fe;26;4;8;d;55,845\n"),
        "latin1.csv": ("name,symbol,atomic_number,period,group,block,atomic_weight\n"
                       "Éxotium,Ét,120,8,1,s,320.0\n").encode("latin-1"),
        "upper.csv": base.upper().replace("D,", "d,").replace(",F,", ",f,").encode(),
        "extra_columns.csv": (b"note,name,symbol,atomic_number,period,group,block,atomic_weight,colour\n"
                              b"x,Iron,Fe,26,4,8,d,55.845,grey\n\n"),
    }
