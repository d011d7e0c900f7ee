"""The pure entry points of SwiReasoning: what the page and the CLI call.

- :func:`run_decode`: one question decoded by each chosen decoder of ``DECODERS`` (``swireasoning run``; the page's
  side-by-side decode): text, answer, tokens, forward passes, why it stopped and the per-step trace of each.
- :func:`run_eval`: accuracy, mean tokens, answered share, forward passes and seconds per decoder x budget on
  generated problems of a split, with the Pareto flag of each row (``swireasoning eval``; the page's evaluation).
- :func:`run_controller`: the controller alone on a scripted entropy trace (no model; ``swireasoning controller``).

The configs are frozen and check themselves (:class:`backend.errors.InputError`), so the page and the CLI refuse the
same settings with the same words; ``lm`` is an already loaded :class:`backend.reasoning.lm.ReasoningLM` (None: loaded
from ``config.model`` and ``config.path``). The results are small JSON-able dicts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, report
from ..lm import check_question as _check_question
from .decoder import DECODERS, PROTOCOLS, SwiRConfig, greedy_decoders, protocol_config


def check_question(q: Any) -> str:
    """The stripped question, else :class:`InputError` (:func:`backend.reasoning.lm.check_question`)."""
    return _check_question(q, "type a question, choose a preset, or upload a file with one question per line")


def check_budget(b: Any) -> int:
    if isinstance(b, bool) or not isinstance(b, int) or not 8 <= b <= 4096:
        raise InputError(f"The token budget must be between 8 and 4096, got {b}.")
    return int(b)


def check_decoders(names: Any) -> tuple[str, ...]:
    """Decoder names (``"all"``, a comma-separated string or a sequence) as registry keys, at least one."""
    return DECODERS.keys_of(names)


def _check_switching(max_switch: Any, window: Any, alpha0: Any = None) -> None:
    if (max_switch is not None and max_switch < 0) or window < 1:
        raise InputError("--max-switch must be >= 0 (0 = no cap) and --window >= 1.")
    if alpha0 is not None and not 0.0 <= alpha0 <= 1.0:
        raise InputError(f"--alpha must lie in [0, 1], got {alpha0}.")


def _swir(protocol: str, budget: int, window: int, max_switch: int | None, alpha0: float | None) -> SwiRConfig:
    """The protocol's settings (:data:`decoder.PROTOCOLS`) with the explicit overrides: ``max_switch`` 0 = no cap,
    None = the protocol's; ``alpha0`` None = the protocol's."""
    over: dict[str, Any] = {"budget": budget, "window": window}
    if max_switch is not None:
        over["max_switch"] = max_switch or None
    if alpha0 is not None:
        over["alpha0"] = alpha0
    return protocol_config(protocol, **over)


@dataclass(frozen=True)
class DecodeConfig:
    """One decode per decoder: model, decoders, budget, the released evaluation ``protocol`` (``accuracy``: no
    switch cap, alpha 0.6; ``efficiency``: C_max 2, alpha 0.5) with optional overrides of its switch cap
    ``max_switch`` (0 = no cap) and ``alpha0``, window W, seed."""

    model: str = "tinyreasoner"
    path: str | None = None
    decoders: tuple[str, ...] = tuple(DECODERS)
    budget: int = 128
    protocol: str = "accuracy"
    max_switch: int | None = None
    alpha0: float | None = None
    window: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "decoders", check_decoders(self.decoders))
        object.__setattr__(self, "protocol", choose(self.protocol, PROTOCOLS, "protocol"))
        check_budget(self.budget)
        _check_switching(self.max_switch, self.window, self.alpha0)

    def swir(self) -> SwiRConfig:
        return _swir(self.protocol, self.budget, self.window, self.max_switch, self.alpha0)


@dataclass(frozen=True)
class EvalConfig:
    """An evaluation: model, split, problems ``n`` (1..500), budgets, decoders, problem seed and decoder settings."""

    model: str = "tinyreasoner"
    path: str | None = None
    split: str = "train"
    n: int = 20
    budgets: tuple[int, ...] = (64, 128)
    decoders: tuple[str, ...] = greedy_decoders()
    problem_seed: int = 0
    protocol: str = "accuracy"
    max_switch: int | None = None
    alpha0: float | None = None
    window: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        from ..tasks import SPLITS

        object.__setattr__(self, "split", choose(self.split, SPLITS, "split"))
        if not 1 <= self.n <= 500:
            raise InputError(f"--n must be between 1 and 500, got {self.n}.")
        if not self.budgets:
            raise InputError("Give at least one budget.")
        object.__setattr__(self, "budgets", tuple(check_budget(b) for b in self.budgets))
        object.__setattr__(self, "decoders", check_decoders(self.decoders))
        object.__setattr__(self, "protocol", choose(self.protocol, PROTOCOLS, "protocol"))
        _check_switching(self.max_switch, self.window, self.alpha0)

    def swir(self) -> SwiRConfig:
        return _swir(self.protocol, max(self.budgets), self.window, self.max_switch, self.alpha0)


@dataclass(frozen=True)
class ControllerConfig:
    """A scripted entropy trace (1..4096 non-negative numbers), the window W, C_max (None: no cap) and the step at
    which the end-of-thinking marker is sampled."""

    entropies: tuple[float, ...]
    window: int = 2
    max_switch: int | None = None
    end_at: int | None = None

    def __post_init__(self) -> None:
        h = tuple(float(x) for x in self.entropies)
        if not 1 <= len(h) <= 4096 or any(not 0 <= x < 1e6 or math.isnan(x) for x in h):
            raise InputError("--entropies needs 1 to 4096 non-negative numbers.")
        object.__setattr__(self, "entropies", h)
        if self.window < 1 or (self.max_switch is not None and self.max_switch < 1):
            raise InputError("--window and --max-switch must be at least 1.")


def _lm(model: str, path: str | None, lm: Any) -> Any:
    if lm is not None:
        return lm
    from ..lm import load_reasoning_lm

    return load_reasoning_lm(model, path)


def run_decode(question: str, config: DecodeConfig, lm: Any = None, progress: Progress | None = None,
               token: CancelToken | None = None) -> dict[str, Any]:
    """Each decoder of ``config`` on ``question``: ``{model, source, question, domain, budget, runs}``; ``domain``
    places the question against the tiny reasoner's grammar (:func:`backend.reasoning.domain.domain`)."""
    from ..domain import domain
    from .decoder import decode, summarize

    q = check_question(question)
    cfg = config.swir()
    lm = _lm(config.model, config.path, lm)
    runs = []
    for k, n in enumerate(config.decoders):
        report(progress, k / len(config.decoders), DECODERS.label(n))
        runs.append(summarize(decode(lm, q, n, cfg, seed=config.seed, cancel=token), lm))
    report(progress, 1.0, "done")
    return {"model": lm.name, "source": lm.source, "question": q, "domain": domain(q).to_dict(), "budget": cfg.budget,
            "runs": runs}


def run_eval(config: EvalConfig, lm: Any = None, progress: Progress | None = None,
             token: CancelToken | None = None) -> dict[str, Any]:
    """Accuracy and tokens per decoder x budget on ``config.n`` generated problems of ``config.split``:
    ``{model, source, split, n, budgets, rows}``."""
    from ..tasks import generate
    from .decoder import evaluate, rows_table

    lm = _lm(config.model, config.path, lm)
    problems = generate(config.n, config.split, seed=config.problem_seed)
    rows = rows_table(evaluate(lm, problems, list(config.decoders), list(config.budgets), config.swir(),
                               seed=config.seed, progress=progress, cancel=token))
    return {"model": lm.name, "source": lm.source, "split": config.split, "n": config.n,
            "budgets": list(config.budgets), "rows": rows}


def run_controller(config: ControllerConfig, progress: Progress | None = None,
                   token: CancelToken | None = None) -> dict[str, Any]:
    """The controller on the scripted trace: modes (``L``/``E`` per step), switch steps, injected steps, the steps."""
    from .decoder import scripted_run

    h = list(config.entropies)
    ds = scripted_run(h, config.window, config.max_switch, config.end_at, budget=max(len(h), 8))
    return {"modes": "".join("L" if d.mode == "latent" else "E" for d in ds),
            "switch_steps": [[d.step, d.switch] for d in ds if d.switch],
            "injected_steps": [d.step for d in ds if d.injected],
            "steps": [asdict(d) for d in ds]}
