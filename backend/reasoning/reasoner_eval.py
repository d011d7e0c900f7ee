"""How well a reasoning LM solves the task generator's problems, per split and difficulty:
``python -m backend.reasoning.reasoner_eval [--out FILE]`` (prints the table; ``--out`` writes the JSON).

For each split and difficulty (a range of operations) it draws ``n`` unseen problems (seed 777) and reports

- ``greedy``: exact-answer accuracy of greedy decoding;
- ``pass@1``: the mean fraction of ``k`` samples (temperature ``T``, no top-k / top-p) with the right answer, the
  unbiased estimate of a single sample's accuracy; ``pass@k``: the fraction of problems with at least one right
  sample; ``maj@k``: the fraction whose most frequent sampled answer (ties: the one reached first) is right;
- ``tokens``: mean generated tokens per sample, and the wall time.

:func:`evaluate` ``(lm, EvalSpec)`` -> dict is the pure job; the samples come from :mod:`backend.reasoning.sampling`
(one batch of ``n k`` rows per chunk of problems, deterministic for the seed).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..runtime import ASSETS

EVAL_FILE = ASSETS / "tinyreasoner_eval.json"
DIFFICULTIES = ((1, 4), (5, 8))
SPLITS = ("grammar", "grammar_paraphrase", "train", "heldout_templates")


@dataclass(frozen=True)
class EvalSpec:
    """What to measure: ``n`` problems per split and difficulty, ``k`` samples each at ``temperature``."""

    splits: tuple[str, ...] = SPLITS
    difficulties: tuple[tuple[int, int], ...] = DIFFICULTIES
    n: int = 200
    k: int = 16
    temperature: float = 0.8
    seed: int = 777
    max_new_tokens: int = 400
    chunk: int = 25
    greedy_only: bool = False
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        from .tasks import SPLITS as ALL

        for s in self.splits:
            if s not in ALL:
                raise InputError(f"Unknown split {s!r}; choose from {', '.join(ALL)}.")
        if not 1 <= self.n <= 5000 or not 1 <= self.k <= 64:
            raise InputError("n must be 1-5000 and k 1-64.")
        if not 0.0 < self.temperature <= 2.0:
            raise InputError("The sampling temperature must be in (0, 2].")


def majority(answers: list[int | None]) -> int | None:
    """The most frequent non-missing answer (ties: the one reached first); None when all are missing."""
    got = [a for a in answers if a is not None]
    if not got:
        return None
    counts = Counter(got)
    best = max(counts.values())
    return next(a for a in got if counts[a] == best)


def score(answers: list[list[int | None]], truth: list[int]) -> dict[str, float]:
    """pass@1, pass@k and maj@k of per-problem sampled answers (``answers[i]``: the k answers to problem i)."""
    n = len(truth)
    p1 = sum(sum(a == t for a in row) / len(row) for row, t in zip(answers, truth, strict=True)) / n
    pk = sum(any(a == t for a in row) for row, t in zip(answers, truth, strict=True)) / n
    mk = sum(majority(row) == t for row, t in zip(answers, truth, strict=True)) / n
    return {"pass@1": round(p1, 4), f"pass@{len(answers[0])}": round(pk, 4), f"maj@{len(answers[0])}": round(mk, 4)}


def _answers(lm: Any, problems: list, cfg: Any, seed: int, chunk: int) -> tuple[list[list[int | None]], int]:
    from .sampling import sample
    from .tasks import MARKERS, extract_answer

    rows, tokens = [], 0
    for i in range(0, len(problems), chunk):
        part = problems[i : i + chunk]
        out = sample(lm, [p.question for p in part], cfg, seed=seed)
        rows += [[extract_answer(t, MARKERS["tinyreasoner"]) for t in texts] for texts in out.text]
        tokens += int(out.lengths.sum())
    return rows, tokens


def evaluate(lm: Any, spec: EvalSpec = EvalSpec(), progress: Any = None) -> dict:
    """``{"rows": [{split, ops, n, greedy, pass@1, pass@k, maj@k, tokens_per_sample, seconds}], "spec": ...}``."""
    from ..runtime import report
    from .sampling import SamplingConfig
    from .tasks import generate

    rows = []
    cells = [(s, d) for s in spec.splits for d in spec.difficulties]
    for j, (split, (lo, hi)) in enumerate(cells):
        report(progress, j / len(cells), f"{split}, {lo}-{hi} operations")
        probs = generate(spec.n, split, seed=spec.seed, steps=(lo, hi))
        truth = [p.answer for p in probs]
        t0 = time.perf_counter()
        g, gtok = _answers(lm, probs, SamplingConfig(n=1, max_new_tokens=spec.max_new_tokens, temperature=0.0),
                           0, spec.chunk * 4)
        row: dict[str, Any] = {"split": split, "ops": f"{lo}-{hi}", "n": spec.n,
                               "greedy": round(sum(a[0] == t for a, t in zip(g, truth, strict=True)) / spec.n, 4)}
        if not spec.greedy_only:
            cfg = SamplingConfig(n=spec.k, max_new_tokens=spec.max_new_tokens, temperature=spec.temperature)
            s, stok = _answers(lm, probs, cfg, spec.seed, max(1, spec.chunk * 16 // spec.k))
            row.update(score(s, truth))
            row["tokens_per_sample"] = round(stok / (spec.n * spec.k), 1)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
    report(progress, 1.0, "done")
    spec_d = asdict(spec)
    spec_d["difficulties"] = [list(d) for d in spec.difficulties]
    return {"rows": rows, "spec": spec_d}


def main(argv: list[str] | None = None) -> int:
    import torch

    from ..models.tinyreasoner import load_tinyreasoner

    ap = argparse.ArgumentParser(prog="python -m backend.reasoning.reasoner_eval")
    ap.add_argument("--weights", default=None, help="a tiny reasoner file (default: the shipped one)")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--out", type=Path, default=None, help=f"write the JSON here (the pages read {EVAL_FILE.name} "
                    "in assets/ when it is shipped with a manifest row)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    r = load_tinyreasoner(args.weights)
    t0 = time.perf_counter()
    with torch.no_grad():
        res = evaluate(r, EvalSpec(n=args.n, k=args.k, temperature=args.temperature))
    res["model"] = {"file": Path(args.weights).name if args.weights else "tinyreasoner.safetensors",
                    "parameters": r.parameters, "command": r.meta.get("command")}
    res["seconds"] = round(time.perf_counter() - t0, 1)
    res["command"] = "python -m backend.reasoning.reasoner_eval" + (f" --n {args.n}" if args.n != 200 else "")
    if args.out is not None:
        args.out.write_text(json.dumps(res, indent=1) + "\n")
    for row in res["rows"]:
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
