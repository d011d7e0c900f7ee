"""The pure entry points of D2F: what the page, the CLI and the benchmark call.

- :func:`run_generate`: one question through the chosen decoders of ``DECODERS`` (``d2f generate``; the page's
  side-by-side decode): answer, tokens, forward passes, passes per token, tokens/s, and optionally the decode-pass x
  position state grid of each.
- :func:`run_bench`: accuracy, forward passes per token and tokens/s per decoder (the vanilla decoders once per step
  count) on generated problems of a split or on uploaded questions, and the verdict on D2F's claim (``d2f bench``;
  the page's comparison).
- :func:`run_invariance`: the student's block-causal invariance (``d2f invariance``).

The configs are frozen and check themselves (:class:`backend.errors.InputError`), so the page and the CLI refuse the
same settings with the same words; ``models`` is an already loaded :class:`.evaluate.D2FModels` (None: the shipped
models). The results are small JSON-able dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, report
from .decode import D2FConfig, _check
from .evaluate import COMPARED, DECODERS, VANILLA_STEPS, needs_reasoner

#: The shipped models' block size and generation length (their metadata); a config that leaves ``block`` or
#: ``max_new`` unset takes the loaded models' values.
TRAINED_BLOCK = 16
TRAINED_LENGTH = 160
MAX_PROBLEMS = 500


def check_decoders(names: Any) -> tuple[str, ...]:
    """Decoder names (``"all"``, a comma-separated string or a sequence) as registry keys, at least one."""
    return DECODERS.keys_of(names)


@dataclass(frozen=True)
class Thresholds:
    """D2F's thresholds and sizes; ``block`` / ``max_new`` None: the models' trained values."""

    tau_add: float = 0.1
    tau_act: float = 0.95
    tau_conf: float = 0.9
    block: int | None = None
    max_new: int | None = None

    def __post_init__(self) -> None:
        _check(self._cfg(TRAINED_BLOCK, TRAINED_LENGTH))

    def _cfg(self, block: int, length: int) -> D2FConfig:
        return D2FConfig(block=self.block or block, tau_add=self.tau_add, tau_act=self.tau_act,
                         tau_conf=self.tau_conf, max_new=self.max_new or length)

    def d2f(self, models: Any) -> D2FConfig:
        cfg = self._cfg(models.block, models.length)
        _check(cfg)
        return cfg


@dataclass(frozen=True)
class GenerateConfig(Thresholds):
    """One question: the decoders (names or ``"all"``), the vanilla decoders' pass count ``steps`` (None: one pass
    per position) and whether to include each decoder's state grid."""

    decoders: tuple[str, ...] = tuple(DECODERS.names("ours"))
    steps: int | None = None
    grid: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "decoders", check_decoders(self.decoders))
        if self.steps is not None and not 1 <= self.steps <= (self.max_new or TRAINED_LENGTH):
            raise InputError(f"--steps must lie in 1..{self.max_new or TRAINED_LENGTH} (the generation length).")


@dataclass(frozen=True)
class BenchConfig(Thresholds):
    """A comparison on ``n`` generated problems of ``split`` with ``ops`` = (min, max) operations, or on uploaded
    ``questions`` (one per line, optionally ``| answer``; then ``split``, ``n`` and ``ops`` are unused)."""

    n: int = 20
    split: str = "train"
    ops: tuple[int, int] = (1, 3)
    seed: int = 0
    decoders: tuple[str, ...] = COMPARED
    vanilla_steps: tuple[int, ...] = VANILLA_STEPS
    questions: str | None = None

    def __post_init__(self) -> None:
        from ..tasks import SPLITS

        super().__post_init__()
        if not 1 <= self.n <= MAX_PROBLEMS:
            raise InputError(f"--n must be between 1 and {MAX_PROBLEMS} problems.")
        object.__setattr__(self, "split", choose(self.split, SPLITS, "split"))
        ops = tuple(int(o) for o in self.ops)
        if len(ops) != 2 or not 1 <= ops[0] <= ops[1] <= 8:
            raise InputError("--ops must be min,max with 1 <= min <= max <= 8.")
        object.__setattr__(self, "ops", ops)
        object.__setattr__(self, "decoders", check_decoders(self.decoders))
        steps = tuple(sorted({int(s) for s in self.vanilla_steps}, reverse=True))
        length = self.max_new or TRAINED_LENGTH
        if not steps or any(not 1 <= s <= length for s in steps):
            raise InputError(f"--vanilla-steps must lie in 1..{length} (the generation length).")
        object.__setattr__(self, "vanilla_steps", steps)
        if self.questions is not None:
            problems(self)

    @property
    def source(self) -> str:
        return "upload" if self.questions is not None else f"{self.split}, operations {self.ops[0]}-{self.ops[1]}"


@dataclass(frozen=True)
class InvarianceConfig:
    seed: int = 0
    trials: int = 4

    def __post_init__(self) -> None:
        if not 1 <= self.trials <= 64:
            raise InputError("--trials must be between 1 and 64.")


def problems(config: BenchConfig) -> list[Any]:
    """The problems of a comparison: parsed uploaded questions (an answer on every line or on none; none: the answer
    is unknown, ``-10**9``) or generated ones."""
    from ..tasks import Problem, generate
    from .evaluate import parse_questions

    if config.questions is None:
        return generate(config.n, config.split, seed=config.seed, steps=config.ops)
    qs = parse_questions(config.questions)
    if len({a is None for _, a in qs}) > 1:
        raise InputError("Give an answer ('| number') on every line or on none.")
    return [Problem(q, (), a if a is not None else -10**9, "upload", (0, 0)) for q, a in qs]


def _models(models: Any, with_ar: bool) -> Any:
    if models is not None:
        return models
    from .evaluate import load_models

    return load_models(with_ar=with_ar)


def _parameters(models: Any, decoders: tuple[str, ...]) -> dict[str, int]:
    """The parameters of the models ``decoders`` run (the diffusion student and teacher are always loaded)."""
    from .evaluate import REASONER_KEY

    return {k: v for k, v in models.parameters.items() if k != REASONER_KEY or needs_reasoner(decoders)}


def _summary(r: dict[str, Any], models: Any, grid: bool) -> dict[str, Any]:
    from .evaluate import state_grid

    out = {k: v for k, v in r.items() if k != "result"}
    if grid:
        res = r["result"]
        n = len(res.grid_at or res.decoded_at)
        out["grid"] = state_grid(res, models.block if DECODERS[r["decoder"]].blocks else None, n)
        out["grid_tokens"] = [models.tokenizer.vocab[t] for t in (res.tokens + [models.eos_id])][:n]
    return out


def run_generate(question: str, config: GenerateConfig, models: Any = None, progress: Progress | None = None,
                 token: CancelToken | None = None) -> dict[str, Any]:
    """Each decoder of ``config`` on ``question``: ``{prompt, domain, config, parameters, runs}``; ``domain`` places
    the question against the tiny reasoner's grammar (:func:`backend.reasoning.domain.domain`)."""
    from ..domain import domain
    from .evaluate import prompt_ids, run_one

    progress = checked(progress, token)
    models = _models(models, with_ar=needs_reasoner(config.decoders))
    prompt_ids(models.tokenizer, question)
    cfg = config.d2f(models)
    runs = []
    for i, name in enumerate(config.decoders):
        report(progress, i / len(config.decoders), DECODERS.label(name))
        runs.append(_summary(run_one(models, question, name, cfg, config.steps), models, config.grid))
    report(progress, 1.0, "done")
    params = _parameters(models, config.decoders)
    return {"prompt": question, "domain": domain(question).to_dict(), "config": vars(cfg), "parameters": params,
            "runs": runs}


def run_bench(config: BenchConfig, models: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None) -> dict[str, Any]:
    """Accuracy and costs per decoder and the claim's verdict: ``{split, n, ops, source, with_answers, config,
    parameters, rows, claim}``."""
    from .evaluate import claim_verdict, evaluate, rows_dicts

    progress = checked(progress, token)
    probs = problems(config)
    models = _models(models, with_ar=needs_reasoner(config.decoders))
    cfg = config.d2f(models)
    if any(not 1 <= s <= cfg.max_new for s in config.vanilla_steps):
        raise InputError(f"--vanilla-steps must lie in 1..{cfg.max_new} (the generation length).")
    rows = evaluate(models, probs, cfg, config.decoders, config.vanilla_steps, progress=progress, cancel=token)
    params = _parameters(models, config.decoders)
    return {"split": config.split, "n": len(probs), "ops": config.ops, "source": config.source,
            "with_answers": any(p.answer != -10**9 for p in probs), "config": vars(cfg), "parameters": params,
            "rows": rows_dicts(rows), "claim": claim_verdict(rows)}


def run_invariance(config: InvarianceConfig, models: Any = None, progress: Progress | None = None,
                   token: CancelToken | None = None) -> dict[str, Any]:
    """The student's largest logit change at a block when later blocks are re-drawn, and the teacher's."""
    from .evaluate import block_invariance

    progress = checked(progress, token)
    out = block_invariance(_models(models, with_ar=False), seed=config.seed, trials=config.trials)
    report(progress, 1.0, "done")
    return out
