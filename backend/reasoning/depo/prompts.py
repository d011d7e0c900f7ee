"""The ``prompt_list`` input kind: a user's list of prompts for DEPO's offline selector.

Accepted: UTF-8 text with one prompt per line, or a CSV with a header row whose prompt column is named ``prompt``,
``question``, ``problem``, ``text``, ``query`` or ``instruction`` (any case), an optional id column (``id``, ``name``,
``key``) and an optional difficulty column (``difficulty``, ``pass_rate``, ``accuracy``: a pass rate in [0, 1] per
prompt, for the difficulty-aware sampling). Blank lines are skipped and exact duplicates (after trimming spaces) are
removed, each with a note. Limits: at most 1 MB, 5 to 5,000 distinct prompts of at most 2,000 characters each.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from ...errors import InputError
from ...io.text import decode_text

MAX_BYTES = 1024 * 1024
MIN_PROMPTS, MAX_PROMPTS, MAX_CHARS = 5, 5000, 2000
PROMPT_COLUMNS = ("prompt", "question", "problem", "text", "query", "instruction")
ID_COLUMNS = ("id", "name", "key")
DIFFICULTY_COLUMNS = ("difficulty", "pass_rate", "accuracy")
LIMITS = (f"UTF-8 text, one prompt per line, or a CSV with a header and a prompt column ({', '.join(PROMPT_COLUMNS)}), "
          f"optional id and difficulty (pass rate in [0, 1]) columns; {MIN_PROMPTS}-{MAX_PROMPTS:,} distinct prompts of "
          f"at most {MAX_CHARS:,} characters; 1 MB")


@dataclass
class PromptList:
    """Distinct prompts in file order, their ids (line or row numbers when the file has none), optional pass rates,
    and notes on what was skipped."""

    prompts: list[str]
    ids: list[str]
    difficulty: list[float] | None = None
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.prompts)


def _pick(header: list[str], names: tuple[str, ...]) -> int | None:
    low = [h.strip().lower() for h in header]
    for n in names:
        if n in low:
            return low.index(n)
    return None


def _looks_csv(text: str, name: str) -> bool:
    if name.lower().endswith((".csv", ".tsv")):
        return True
    first = text.lstrip().split("\n", 1)[0]
    cells = [c.strip().lower() for c in first.replace("\t", ",").split(",")]
    return len(cells) > 1 and any(c in PROMPT_COLUMNS for c in cells)


def _rows_csv(text: str, name: str) -> tuple[list[str], list[str], list[float] | None]:
    delim = "\t" if "\t" in text.split("\n", 1)[0] else ","
    rows = list(csv.reader(io.StringIO(text), delimiter=delim))
    if not rows:
        raise InputError(f"{name} has no rows.")
    header = rows[0]
    col = _pick(header, PROMPT_COLUMNS)
    if col is None:
        raise InputError(f"{name}: no prompt column in the header {header[:8]}; name it one of "
                         f"{', '.join(PROMPT_COLUMNS)}.")
    idc, dc = _pick(header, ID_COLUMNS), _pick(header, DIFFICULTY_COLUMNS)
    prompts, ids, diff = [], [], []
    for r, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) <= col:
            raise InputError(f"{name}, row {r}: {len(row)} cells, but the prompt column is number {col + 1}.")
        prompts.append(row[col])
        ids.append(row[idc].strip() if idc is not None and idc < len(row) and row[idc].strip() else f"row {r}")
        if dc is not None:
            cell = row[dc].strip() if dc < len(row) else ""
            try:
                v = float(cell)
            except ValueError:
                raise InputError(f"{name}, row {r}: the difficulty {cell!r} is not a number; give a pass rate in "
                                 "[0, 1] or leave the column out.") from None
            if not 0.0 <= v <= 1.0:
                raise InputError(f"{name}, row {r}: the difficulty {v:g} is outside [0, 1] (a pass rate).")
            diff.append(v)
    return prompts, ids, (diff if dc is not None else None)


def decode_prompts(data: bytes, name: str = "the upload") -> PromptList:
    """Decode a prompt file (see the module docstring); :class:`InputError` says what to change."""
    text = decode_text(data, max_bytes=MAX_BYTES, name=name, min_chars=1)
    notes: list[str] = []
    if _looks_csv(text, name):
        raw, ids, diff = _rows_csv(text, name)
    else:
        lines = text.splitlines()
        raw, ids, diff = [], [], None
        blank = 0
        for i, line in enumerate(lines, start=1):
            if line.strip():
                raw.append(line)
                ids.append(f"line {i}")
            else:
                blank += 1
        if blank:
            notes.append(f"{blank} blank line(s) skipped.")
    prompts, keep_ids, keep_diff, seen = [], [], [] if diff is not None else None, set()
    dup = empty = 0
    for j, p in enumerate(raw):
        q = " ".join(p.split())
        if not q:
            empty += 1
            continue
        if len(q) > MAX_CHARS:
            raise InputError(f"{name}: prompt {ids[j]} has {len(q):,} characters; the limit is {MAX_CHARS:,}.")
        if q in seen:
            dup += 1
            continue
        seen.add(q)
        prompts.append(q)
        keep_ids.append(ids[j])
        if keep_diff is not None and diff is not None:
            keep_diff.append(diff[j])
    if empty:
        notes.append(f"{empty} empty prompt(s) skipped.")
    if dup:
        notes.append(f"{dup} duplicate prompt(s) removed.")
    if len(prompts) < MIN_PROMPTS:
        raise InputError(f"{name} holds {len(prompts)} distinct prompt(s); at least {MIN_PROMPTS} are needed "
                         "(one per line, or a CSV with a prompt column).")
    if len(prompts) > MAX_PROMPTS:
        raise InputError(f"{name} holds {len(prompts):,} distinct prompts; the limit is {MAX_PROMPTS:,}.")
    return PromptList(prompts, keep_ids, keep_diff, notes)
