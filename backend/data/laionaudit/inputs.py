"""The inputs of the LAION audit: the ``captions`` kind (a user's caption corpus), its examples (one small valid file
and valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), and the presets the
page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``captions`` | ``backend.data.laionaudit.captions.read_captions`` | CSV (UTF-8, or a chosen encoding), Parquet, a ZIP holding one | 20 MB, 1,000,000 rows, 512 MB uncompressed, a caption column | laionaudit page; ``laionaudit audit/association --captions FILE`` |

``PRESETS``: the page's audit presets, name -> :class:`backend.data.laionaudit.jobs.AuditConfig` settings (generated
corpora, no upload needed).
"""

from __future__ import annotations

from typing import Any

from backend.io.registry import InputKind, declare

from .captions import LIMITS, MAX_BYTES

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="captions", what="a caption corpus",
            decoder="backend.data.laionaudit.captions:read_captions", extensions=("csv", "parquet", "zip", "tsv"),
            max_bytes=MAX_BYTES, limits=LIMITS, family="csv"),
)

PRESETS: dict[str, dict[str, Any]] = {
    "Web-style captions with planted skews (20,000)": {"source": "webstyle", "size": 20_000},
    "Planted corpus of the transfer study (20,000)": {"source": "planted", "size": 20_000, "ngrams": False,
                                                      "lists": ("objects",)},
    "Web-style captions, 100,000": {"source": "webstyle", "size": 100_000},
}


def _cell(v: str) -> str:
    return '"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"\n\r') else v


def _csv(rows: list[list[str]], crlf: bool = False) -> bytes:
    """Example files (the test corpus): cells quoted where RFC 4180 needs it, written as they are."""
    end = "\r\n" if crlf else "\n"
    return "".join(",".join(_cell(c) for c in row) + end for row in rows).encode("utf-8")


def captions(seed: int = 0) -> bytes:
    """A small CSV: an id column, a URL column and 50 web-style captions."""
    from .webcorpus import generate

    caps = generate(50, seed=seed)
    return _csv([["id", "url", "caption"]] + [[str(i), f"https://example.org/{i}.jpg", c] for i, c in enumerate(caps)])


def captions_odd() -> dict[str, bytes]:
    """Valid-but-odd files: CRLF, a byte-order mark, semicolons, a column named TEXT, empty captions, formula-like
    cells (escaped when exported), quoted commas and newlines, non-ASCII text, Parquet, a ZIP of the CSV."""
    import io
    import zipfile

    from .captions import to_parquet
    from .webcorpus import generate

    caps = generate(30, seed=1)
    rows = [["id", "caption"]] + [[str(i), c] for i, c in enumerate(caps)]
    semi = "\n".join(["id;caption"] + [f"{i};{c}" for i, c in enumerate(caps)]).encode()
    formula = rows + [["900", "=HYPERLINK(\"http://x\",\"click\") woman with a laptop"], ["901", "+man -with a cup"],
                      ["902", "@SUM(1) nurse"]]
    quoted = rows + [["903", "a woman, smiling, with a \"red\" umbrella"], ["904", "line one\nline two: a man"]]
    unicode = rows + [["905", "Frau mit Fahrrad – eine Ärztin"], ["906", "一个女人在厨房 woman"], ["907", "café owner 😀"]]
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("captions.csv", (2024, 1, 1, 0, 0, 0))  # a fixed stamp: the same bytes every run
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, _csv(rows))
    return {"crlf.csv": _csv(rows, crlf=True), "bom.csv": b"\xef\xbb\xbf" + _csv(rows), "semicolon.csv": semi,
            "text_column.csv": _csv([["TEXT", "width"]] + [[c, "512"] for c in caps]),
            "empty_captions.csv": _csv(rows + [["908", ""], ["909", "   "]]), "formula_cells.csv": _csv(formula),
            "quoted.csv": _csv(quoted), "unicode.csv": _csv(unicode), "captions.parquet": to_parquet(caps),
            "zipped.zip": zbuf.getvalue()}
