"""The mixed element benchmark: six tasks built from the element records of ``mendeleev`` (its bundled SQLite data).

Each row is one prompt with a task tag, the record or sentence, and a text answer (numbers as text); the same row
carries the numeric target or class index that a decoupled head reads. Tasks:

| task | type | target | rows |
|------|------|--------|------|
| electronegativity | regression | Pauling electronegativity | elements with a value (85) |
| log_density | regression | log10 of the density in g/cm3 | 118 |
| covalent_radius | regression | single-bond covalent radius (Pyykko), pm | 118 |
| series | classification | the element series (10 classes) | 118 |
| goldschmidt | classification | the Goldschmidt class (5 classes) | 118 |
| melting_extract | extraction | the melting point in K, read from a generated sentence with distractor numbers | 2 per element with a melting point |

Splits are by element (a fixed seed, 30 % of the elements held out), so no test element is seen in any task during
training. The features of the gradient-boosting baseline are the numbers the record sentence states (atomic number,
period, group, block, atomic weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ...registry import choose

SPLIT_SEED = 0
TEST_FRACTION = 0.3


@dataclass(frozen=True)
class Task:
    """One benchmark task: ``kind`` is ``regression``, ``classification`` or ``extraction``."""

    name: str
    kind: str
    what: str
    classes: tuple[str, ...] = ()
    decimals: int = 2


TASKS: tuple[Task, ...] = (
    Task("electronegativity", "regression", "Pauling electronegativity", decimals=2),
    Task("log_density", "regression", "log10 of the density in g/cm3", decimals=2),
    Task("covalent_radius", "regression", "covalent radius in pm", decimals=0),
    Task("series", "classification", "element series"),
    Task("goldschmidt", "classification", "Goldschmidt class"),
    Task("melting_extract", "extraction", "melting point in K stated in the sentence", decimals=0),
)
TASK_INDEX = {t.name: i for i, t in enumerate(TASKS)}


def task(name: str) -> Task:
    return TASKS[TASK_INDEX[choose(str(name).strip().lower(), tuple(TASK_INDEX), "task")]]


@dataclass
class Row:
    """One example: ``prompt`` (task tag + input), ``answer`` (text), ``target`` (float) or ``label`` (class index)."""

    task: str
    element: str
    prompt: str
    answer: str
    target: float = math.nan
    label: int = -1
    split: str = "train"


@dataclass
class Bench:
    rows: list[Row]
    tasks: tuple[Task, ...]
    features: dict[str, list[float]] = field(default_factory=dict)  # element symbol -> GB feature vector

    def select(self, task_name: str | None = None, split: str | None = None) -> list[Row]:
        return [r for r in self.rows if (task_name is None or r.task == task_name) and (split is None or r.split == split)]


FEATURE_NAMES = ("atomic_number", "period", "group", "block_s", "block_p", "block_d", "block_f", "atomic_weight")


def record_text(rec: dict) -> str:
    """The record sentence an LM reads (the same facts the gradient-boosting features hold)."""
    group = f"group {int(rec['group'])}" if rec["group"] > 0 else "no group"
    return (f"{rec['name']} ({rec['symbol']}): atomic number {int(rec['z'])}, period {int(rec['period'])}, {group}, "
            f"{rec['block']}-block, atomic weight {rec['weight']:.3f}.")


def features(rec: dict) -> list[float]:
    b = rec["block"]
    return [float(rec["z"]), float(rec["period"]), float(rec["group"]), float(b == "s"), float(b == "p"),
            float(b == "d"), float(b == "f"), float(rec["weight"])]


_TEMPLATES = (
    "{name} melts at {mp} K and has a density of {d} g/cm3.",
    "With atomic number {z}, {name} has a melting point of {mp} K.",
    "At {mp} K solid {name} turns liquid; it boils at {bp} K.",
    "The density of {name} is {d} g/cm3 and its melting point is {mp} kelvin.",
    "{name} (boiling point {bp} K, melting point {mp} K) sits in period {p}.",
)


def extraction_sentences(rec: dict) -> list[str]:
    """Two generated sentences stating the melting point among distractor numbers (templates rotate by Z)."""
    z = int(rec["z"])
    vals = {"name": rec["name"], "mp": int(round(rec["mp"])), "d": f"{rec['density']:.3g}", "z": z,
            "bp": int(round(rec["bp"])) if not math.isnan(rec["bp"]) else int(round(rec["mp"] * 1.7)),
            "p": int(rec["period"])}
    return [_TEMPLATES[(z + k) % len(_TEMPLATES)].format(**vals) for k in range(2)]


def prompt_for(task_name: str, text: str) -> str:
    """Task-type token + input: the tag tells a shared backbone which task (and head) a row belongs to."""
    t = task(task_name)
    return f"[{t.kind}:{t.name}] {text}\n{t.what} ="


def format_answer(t: Task, value: float | str) -> str:
    if isinstance(value, str):
        return " " + value
    return " " + (f"{value:.{t.decimals}f}" if t.decimals > 0 else str(int(round(value))))


@lru_cache(maxsize=1)
def element_records() -> tuple[dict, ...]:
    """The 118 element records from mendeleev (one dict each)."""
    from mendeleev.fetch import fetch_table

    el = fetch_table("elements")
    series = dict(zip(fetch_table("series")["id"], fetch_table("series")["name"], strict=True))
    ph = fetch_table("phasetransitions")
    mp = ph.dropna(subset=["melting_point"]).groupby("atomic_number")["melting_point"].first()
    bp = ph.dropna(subset=["boiling_point"]).groupby("atomic_number")["boiling_point"].first()
    out = []
    for _, r in el.sort_values("atomic_number").iterrows():
        z = int(r["atomic_number"])
        g = r["group_id"]
        out.append({
            "z": z, "symbol": str(r["symbol"]), "name": str(r["name"]), "period": int(r["period"]),
            "group": int(g) if g == g and g is not None else 0, "block": str(r["block"]),
            "weight": float(r["atomic_weight"]), "density": float(r["density"]),
            "en": float(r["en_pauling"]) if r["en_pauling"] == r["en_pauling"] else math.nan,
            "radius": float(r["covalent_radius_pyykko"]),
            "series": str(series.get(r["series_id"], "")), "goldschmidt": str(r["goldschmidt_class"]),
            "mp": float(mp.get(z, math.nan)), "bp": float(bp.get(z, math.nan)),
        })
    return tuple(out)


def test_elements(records: tuple[dict, ...]) -> set[str]:
    rng = np.random.default_rng(SPLIT_SEED)
    symbols = [r["symbol"] for r in records]
    n_test = int(round(TEST_FRACTION * len(symbols)))
    return {symbols[i] for i in rng.permutation(len(symbols))[:n_test]}


def build_bench() -> Bench:
    """The fixed benchmark (rows in a fixed order; splits by element)."""
    recs = element_records()
    held = test_elements(recs)
    by = {t.name: t for t in TASKS}
    classes = {
        "series": tuple(sorted({r["series"] for r in recs})),
        "goldschmidt": tuple(sorted({r["goldschmidt"] for r in recs})),
    }
    tasks = tuple(Task(t.name, t.kind, t.what, classes.get(t.name, ()), t.decimals) for t in TASKS)
    by = {t.name: t for t in tasks}
    rows: list[Row] = []
    for rec in recs:
        split = "test" if rec["symbol"] in held else "train"
        text = record_text(rec)
        targets = {"electronegativity": rec["en"], "log_density": math.log10(rec["density"]),
                   "covalent_radius": rec["radius"]}
        for name, y in targets.items():
            if not math.isnan(y):
                rows.append(Row(name, rec["symbol"], prompt_for(name, text), format_answer(by[name], y),
                                target=float(y), split=split))
        for name in ("series", "goldschmidt"):
            lab = rec[name]
            rows.append(Row(name, rec["symbol"], prompt_for(name, text), format_answer(by[name], lab),
                            label=by[name].classes.index(lab), split=split))
        if not math.isnan(rec["mp"]):
            for s in extraction_sentences(rec):
                t = by["melting_extract"]
                rows.append(Row(t.name, rec["symbol"], prompt_for(t.name, s), format_answer(t, rec["mp"]),
                                target=float(int(round(rec["mp"]))), split=split))
    feats = {rec["symbol"]: features(rec) for rec in recs}
    return Bench(rows=rows, tasks=tasks, features=feats)
