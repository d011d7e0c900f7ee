"""MATHMO's jobs: the entry points the page, the CLI and the benchmark call.

``run_search(instance, SearchConfig)``: the strategies on one instance (the uploaded one, or generated per seed), the
JSON summary of :func:`.bilevel.to_json`, plus ``paired`` final hypervolumes over ``seeds`` generated instances when
asked. ``run_grid(instance, GridConfig)``: every model of the grid, its objectives and the grid's Pareto front.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...runtime import CancelToken, Progress, sub_progress
from . import facility as F
from .bilevel import (
    LM_TOKENS,
    OBJECTIVES,
    OPERATORS,
    STRATEGIES,
    MathmoConfig,
    Space,
    compare,
    lm_operator,
    logged_space,
    paired,
    to_json,
)
from .pareto import nondominated


@dataclass(frozen=True)
class SearchConfig:
    """One search: ``rounds`` models run per strategy, ``proposals`` (l) per round, the proposal ``operator``
    (``lm`` loads the causal LM ``lm``: None = the embedded SmolLM2), the ``strategies`` (None or empty = every one),
    the search ``seed``; ``seeds`` > 1 adds paired seeds over generated instances of ``facilities`` x ``customers``
    (grid operator only)."""

    rounds: int = 20
    proposals: int = 3
    operator: str = "grid"
    strategies: tuple[str, ...] | None = None
    seed: int = 0
    seeds: int = 1
    facilities: int = 10
    customers: int = 30
    lm: str | None = None
    max_calls: int | None = None  # LM operator: at most this many calls per search (then rounds fall back)

    def __post_init__(self) -> None:
        object.__setattr__(self, "operator", OPERATORS.key(self.operator))
        names = tuple(STRATEGIES.key(s) for s in (self.strategies or ())) or tuple(STRATEGIES)
        object.__setattr__(self, "strategies", names)
        size = len(F.all_models())
        if not 1 <= int(self.rounds) <= size:
            raise InputError(f"Rounds must be 1 to {size} (the size of the model grid); got {self.rounds}.")
        if not 1 <= int(self.proposals) <= 10:
            raise InputError(f"The proposals per round l must be 1 to 10 (got {self.proposals}).")
        if int(self.seeds) < 1:
            raise InputError(f"The paired seeds must be at least 1 (got {self.seeds}).")

    @property
    def uses_lm(self) -> bool:
        return OPERATORS[self.operator] is lm_operator

    def search_config(self) -> MathmoConfig:
        return MathmoConfig(rounds=int(self.rounds), proposals=int(self.proposals), operator=self.operator)


@dataclass(frozen=True)
class GridConfig:
    """The whole model grid on one instance (uploaded, or generated from ``facilities``, ``customers``, ``seed``)."""

    seed: int = 0
    facilities: int = 10
    customers: int = 30


def make_space(config: SearchConfig | GridConfig, seed: int) -> Space:
    """The generated instance of ``config``'s size and ``seed``: served from the recorded log when it holds that
    instance (the default size, seeds 0-19), else its models run on demand."""
    inst = F.generate(config.facilities, config.customers, seed)
    return logged_space(seed, inst)


def _generator(name: str | None, lm: Any = None, max_calls: int | None = None):  # noqa: ANN202 - prompt -> text
    """Prompt -> reply of the causal LM ``lm`` (already loaded, e.g. the page's cached model), else loaded by
    ``name``; after ``max_calls`` calls the reply is empty (a failed proposal: the round falls back)."""
    if lm is None:
        from ...models.lm import load_causal_lm

        lm = load_causal_lm(name)
    calls = [0]

    def generate(prompt: str) -> str:
        if max_calls is not None and calls[0] >= max_calls:
            return ""
        calls[0] += 1
        return lm.generate(prompt, max_new_tokens=LM_TOKENS)

    return generate


def run_search(instance: F.Instance | None, config: SearchConfig, lm: Any = None, progress: Progress | None = None,
               token: CancelToken | None = None) -> dict[str, object]:
    """The strategies of ``config`` on ``instance`` (None = generated from the config's size and seed). ``lm``: the
    loaded causal LM of the language-model operator (None: loaded from ``config.lm`` when the operator needs it)."""
    seed = int(config.seed)
    space = make_space(config, seed) if instance is None else Space(instance, seed)
    cfg = config.search_config()
    generate = _generator(config.lm, lm, config.max_calls) if config.uses_lm else None
    many = int(config.seeds) > 1 and instance is None and not config.uses_lm
    space.grid(progress=sub_progress(progress, 0.0, 0.4))
    out = to_json(space, compare(space, list(config.strategies), cfg, seed=seed, generate=generate,
                                 progress=sub_progress(progress, 0.4, 0.6 if many else 1.0), cancel=token), cfg)
    if many:
        def make(s: int) -> Space:
            return make_space(config, s)

        out["paired"] = paired(make, int(config.seeds), list(config.strategies), cfg,
                               progress=sub_progress(progress, 0.6, 1.0), cancel=token)
    return out


def run_grid(instance: F.Instance | None, config: GridConfig, progress: Progress | None = None,
             token: CancelToken | None = None) -> dict[str, object]:
    """Every model of the grid on ``instance`` (None = generated): objectives, the front, ideal and nadir."""
    import numpy as np

    space = make_space(config, int(config.seed)) if instance is None else Space(instance, config.seed)
    lo, hi, hv = space.grid(progress=progress)
    if token is not None:
        token.check()
    rows = [space.evaluate(i) for i in range(len(space.models))]
    front = nondominated(Space.normalise(np.asarray([[r[o] for o in OBJECTIVES] for r in rows]), lo, hi)).tolist()
    return {"instance": space.inst.summary(), "models": rows, "front": front, "ideal": lo.tolist(),
            "nadir": hi.tolist(), "front_hv": hv}
