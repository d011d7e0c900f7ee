"""GRPO on the tiny reasoner over a pool of generated prompts, with one training-data strategy per run.

:func:`train` ``(reasoner, pool, embeddings, TrainConfig)`` -> :class:`TrainLog`: the strategy (:data:`STRATEGIES`)
plans the training subset from the pool (DEPO's plan rolls out G samples of each greedy-DPP candidate for its pass
rate, and those tokens count), then ``steps`` GRPO steps of ``batch`` prompts x ``group`` rollouts each
(:func:`backend.reasoning.sampling.sample`, :func:`backend.reasoning.grpo.grpo_step`), walking the subset in shuffled
epochs. With pruning (:class:`backend.reasoning.depo.explore.Pruner`) the low-explorability part of each batch is not
rolled out at all. Held-out accuracy (mean reward of ``eval_samples`` samples per problem at the training temperature,
the quantity GRPO optimises, on ``heldout`` fixed problems of another generator seed) is logged against the rollout
tokens spent so far, every ``eval_every`` steps.

Every rollout token counts: the offline pass-rate rollouts, then every training rollout (prompt tokens are not
counted; evaluation rollouts are not training cost and are not counted). Deterministic for a config and seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import Registry
from ...runtime import CancelToken, Progress, checked, report
from ..tasks import HARD_OPS
from .explore import Pruner, explorability
from .select import SUBSETS, Context, difficulty_sample, greedy_logdet, subset_size

MAX_STEPS, MAX_POOL, MAX_GROUP, MAX_BATCH = 400, 2000, 16, 64


@dataclass(frozen=True)
class Plan:
    """What a strategy trains on: pool indices, whether rollouts are pruned online, and the offline rollout tokens
    it spent (with the pass rates it measured, for the difficulty histograms)."""

    subset: np.ndarray
    prune: bool
    offline_tokens: int = 0
    rated: np.ndarray | None = None
    rates: np.ndarray | None = None


RateFn = Callable[[np.ndarray], tuple[np.ndarray, int]]


def _depo_subset(ctx: Context, k: int, seed: int, rate: RateFn) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    m = min(ctx.x.shape[0], max(k, int(round(ctx.candidates * k))))
    cands, _ = greedy_logdet(ctx.x, ctx.weights, m, ctx.h)
    acc, tokens = rate(cands)
    full = np.zeros(ctx.x.shape[0])
    full[cands] = acc
    return difficulty_sample(cands, full, k, ctx.mu, ctx.sigma, seed), tokens, cands, acc


def plan_full(ctx: Context, k: int, seed: int, rate: RateFn) -> Plan:
    """Every prompt of the pool, no pruning."""
    return Plan(np.arange(ctx.x.shape[0]), False)


def plan_depo(ctx: Context, k: int, seed: int, rate: RateFn) -> Plan:
    """DEPO's offline subset (pass rates from G rollouts of the DPP candidates) and online pruning with replay."""
    s, tok, cands, acc = _depo_subset(ctx, k, seed, rate)
    return Plan(s, True, tok, cands, acc)


def plan_depo_noprune(ctx: Context, k: int, seed: int, rate: RateFn) -> Plan:
    """DEPO's offline subset, every sample rolled out every time."""
    s, tok, cands, acc = _depo_subset(ctx, k, seed, rate)
    return Plan(s, False, tok, cands, acc)


def plan_random(ctx: Context, k: int, seed: int, rate: RateFn) -> Plan:
    """A uniform random share of the pool."""
    return Plan(SUBSETS["random"](ctx, k, seed), False)


def plan_pagerank(ctx: Context, k: int, seed: int, rate: RateFn) -> Plan:
    """The top-PageRank share of the pool."""
    return Plan(SUBSETS["pagerank"](ctx, k, seed), False)


def plan_kcenter(ctx: Context, k: int, seed: int, rate: RateFn) -> Plan:
    """A k-center coreset of the pool."""
    return Plan(SUBSETS["kcenter"](ctx, k, seed), False)


#: Training-data strategies: ``plan(ctx, k, seed, rate) -> Plan``.
STRATEGIES: Registry[Callable[..., Plan]] = Registry("training strategy")
STRATEGIES.add("depo", plan_depo, label="DEPO (ours)", kind="ours",
               about="offline subset + online explorability pruning and replay")
STRATEGIES.add("full", plan_full, label="Full-data GRPO", kind="reference", color="#000000",
               about="every prompt, every rollout")
STRATEGIES.add("random", plan_random, label="Random 20 %", kind="baseline")
STRATEGIES.add("pagerank", plan_pagerank, label="Top-PageRank 20 %", kind="baseline")
STRATEGIES.add("kcenter", plan_kcenter, label="k-center 20 %", kind="baseline")
STRATEGIES.add("depo_noprune", plan_depo_noprune, label="DEPO without pruning", kind="ablation")


@dataclass(frozen=True)
class TrainConfig:
    """One GRPO run. Pool: ``pool`` problems of ``split`` (generator seed ``pool_seed``, ``ops`` operations);
    held-out: ``heldout`` problems of the same split with seed ``heldout_seed``. ``share`` of the pool for the
    subset strategies; ``steps`` GRPO steps of ``batch`` prompts x ``group`` rollouts at ``temperature`` (at most
    ``max_new_tokens`` each), Adam at ``lr``. Pruning: keep share decaying to ``floor`` over ``decay_epochs``,
    explorability averaged over the last ``history`` epochs, ``replay`` samples replayed per step, incorrect
    rollouts above ``entropy_ratio`` x the correct ones' mean entropy dropped. Difficulty sampling: ``candidates`` x k
    greedy candidates, phi((Acc - ``mu``) / ``sigma``).

    ``ops``: the grammar's hard half (:data:`~backend.reasoning.tasks.HARD_OPS`; at 1-4 operations GRPO would have
    little to learn). ``max_new_tokens`` 256 holds every reference
    solution of five to eight operations (``<think>`` through ``<eos>`` with the steps' numbers zero-padded to four
    digits: 142 tokens on average, 245 at most over 2,000 problems)."""

    strategy: str = "depo"
    seed: int = 0
    split: str = "grammar"
    ops: tuple[int, int] = HARD_OPS
    pool: int = 240
    pool_seed: int = 11
    heldout: int = 150
    heldout_seed: int = 777
    share: float = 0.2
    steps: int = 24
    batch: int = 8
    group: int = 4
    lr: float = 5e-5
    temperature: float = 1.0
    max_new_tokens: int = 256
    eval_every: int = 6
    eval_samples: int = 1
    floor: float = 0.4
    decay_epochs: int = 4
    history: int = 2
    replay: int = 1
    entropy_ratio: float = 1.5
    candidates: float = 2.0
    mu: float = 0.5
    sigma: float = 0.25

    def __post_init__(self) -> None:
        from ...registry import choose
        from ..tasks import SPLITS

        object.__setattr__(self, "strategy", STRATEGIES.key(self.strategy))
        object.__setattr__(self, "split", choose(self.split, SPLITS, "split"))
        lo, hi = self.ops
        if not 1 <= lo <= hi <= 8:
            raise InputError(f"Operations must satisfy 1 <= low <= high <= 8; got {self.ops}.")
        object.__setattr__(self, "ops", (int(lo), int(hi)))
        checks = ((self.pool, 8, MAX_POOL, "pool size"), (self.steps, 1, MAX_STEPS, "number of steps"),
                  (self.batch, 1, MAX_BATCH, "batch (prompts per step)"), (self.group, 2, MAX_GROUP, "group size G"),
                  (self.heldout, 1, 1000, "held-out problems"), (self.eval_every, 1, MAX_STEPS, "eval_every"),
                  (self.eval_samples, 1, 16, "eval_samples"), (self.max_new_tokens, 8, 400, "max_new_tokens"),
                  (self.history, 1, 20, "history (epochs)"), (self.replay, 0, MAX_BATCH, "replay per step"),
                  (self.decay_epochs, 0, 100, "decay_epochs"))
        for v, a, b, name in checks:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not a <= v <= b:
                raise InputError(f"The {name} must be a whole number from {a} to {b}; got {v!r}.")
        if not 0.0 < self.share <= 1.0:
            raise InputError(f"The share must be in (0, 1]; got {self.share!r}.")
        if not 0.0 < self.floor <= 1.0:
            raise InputError(f"The keep floor must be in (0, 1]; got {self.floor!r}.")
        if not 0.0 < self.lr <= 1e-2 or not 0.0 < self.temperature <= 2.0:
            raise InputError("The learning rate must be in (0, 0.01] and the temperature in (0, 2].")
        if not 1.0 <= self.candidates <= 10.0 or not 0.0 < self.sigma <= 5.0 or not 1.0 <= self.entropy_ratio:
            raise InputError("candidates must be in [1, 10], sigma in (0, 5] and entropy_ratio >= 1.")


@dataclass
class TrainLog:
    """A run's record: its config, the plan, the held-out curve (``curve`` rows: step, epoch, tokens, accuracy),
    the explorability heatmap (``heat[j][e]`` of subset sample j at epoch e, None where it was pruned or not reached;
    ``pruned[j][e]`` True where pruned), token and time totals, and the final per-problem held-out accuracy."""

    config: dict
    subset: list[int]
    offline_tokens: int
    curve: list[dict]
    heat: list[list[float | None]]
    pruned: list[list[bool]]
    rollouts: int
    pruned_rollouts: int
    tokens: int
    seconds: float
    final_per_problem: list[float]
    rated: list[int] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _rewards(samples: Any, answers: list[int]) -> np.ndarray:
    from ..tasks import MARKERS, extract_answer

    m = MARKERS["tinyreasoner"]
    return np.array([[float(extract_answer(t, m) == a) for t in row] for row, a in zip(samples.text, answers,
                                                                                         strict=True)])


def rollout_entropies(samples: Any) -> np.ndarray:
    """[B, N] mean token entropy of each rollout (nats)."""
    ent = samples.entropies.double().numpy()
    mask = samples.mask.double().numpy()
    return (ent * mask).sum(-1) / np.maximum(mask.sum(-1), 1.0)


def evaluate(reasoner: Any, problems: list, cfg: TrainConfig, chunk: int = 75) -> np.ndarray:
    """[P] per-problem held-out accuracy: the mean reward of ``eval_samples`` samples at the training temperature
    (sampling seed fixed, so two policies are compared on the same uniforms)."""
    from ..sampling import SamplingConfig, sample

    sc = SamplingConfig(n=cfg.eval_samples, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature)
    out = []
    for i in range(0, len(problems), chunk):
        part = problems[i:i + chunk]
        s = sample(reasoner, [p.question for p in part], sc, seed=9_000_011)
        out.append(_rewards(s, [p.answer for p in part]).mean(1))
    return np.concatenate(out)


def train(reasoner: Any, pool: list, ctx: Context, cfg: TrainConfig, heldout: list,
          start: np.ndarray | None = None, rates: tuple[np.ndarray, np.ndarray] | None = None,
          progress: Progress | None = None, token: CancelToken | None = None) -> TrainLog:
    """One GRPO run of ``cfg.strategy`` (``reasoner`` is updated in place). ``ctx`` the selector context of the
    pool's embeddings; ``heldout`` the fixed evaluation problems; ``start`` their per-problem accuracy under the
    starting policy (computed when None); ``rates`` the pool's offline pass rates [N] and the rollout tokens [N]
    they cost, measured once with the starting policy (None: a strategy that needs pass rates samples them here);
    either way a strategy is charged the tokens of the prompts it rates."""
    import torch

    from ..grpo import GRPOConfig, batch_from_samples, grpo_step
    from ..sampling import SamplingConfig, sample

    t0 = time.perf_counter()
    progress = checked(progress, token)
    torch.manual_seed(cfg.seed)
    sc = SamplingConfig(n=cfg.group, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature)
    gcfg = GRPOConfig(temperature=cfg.temperature)

    def rate(idx: np.ndarray) -> tuple[np.ndarray, int]:
        if rates is not None:
            return np.asarray(rates[0])[idx], int(np.asarray(rates[1])[idx].sum())
        accs, tok = [], 0
        for a in range(0, len(idx), 64):
            part = [pool[int(i)] for i in idx[a:a + 64]]
            s = sample(reasoner, [p.question for p in part], sc, seed=7_000_003 + cfg.seed)
            accs.append(_rewards(s, [p.answer for p in part]).mean(1))
            tok += int(s.lengths.sum())
        return np.concatenate(accs), tok

    k = subset_size(len(pool), cfg.share)
    plan = STRATEGIES[cfg.strategy](ctx, k, cfg.seed, rate)
    subset = [int(i) for i in plan.subset]
    pos = {i: j for j, i in enumerate(subset)}
    opt = torch.optim.Adam(reasoner.model.parameters(), lr=cfg.lr)
    pruner = Pruner(cfg.floor, cfg.decay_epochs, cfg.history, cfg.replay)
    rng = np.random.default_rng(cfg.seed)
    acc0 = evaluate(reasoner, heldout, cfg) if start is None else np.asarray(start)
    tokens = plan.offline_tokens
    curve = [{"step": 0, "epoch": 0, "tokens": tokens, "accuracy": float(acc0.mean())}]
    heat: dict[tuple[int, int], float] = {}
    pruned_cells: set[tuple[int, int]] = set()
    order: list[int] = []
    epoch, rolled, skipped = -1, 0, 0
    acc = acc0
    for step in range(1, cfg.steps + 1):
        if not order:
            epoch += 1
            order = [subset[int(i)] for i in rng.permutation(len(subset))]
        batch, order = order[:cfg.batch], order[cfg.batch:]
        if plan.prune:
            kept, pr, replayed = pruner.choose(batch, epoch, step)
            for i in pr:
                pruned_cells.add((pos[i], epoch))
            skipped += len(pr) * cfg.group
            roll = kept + replayed
        else:
            roll = batch
        probs = [pool[i] for i in roll]
        s = sample(reasoner, [p.question for p in probs], sc, seed=cfg.seed * 1_000_003 + step)
        r = _rewards(s, [p.answer for p in probs])
        ent = rollout_entropies(s)
        for j, i in enumerate(roll):
            e = explorability(r[j], ent[j], cfg.entropy_ratio)
            pruner.record(i, epoch, e)
            heat[(pos[i], epoch)] = e
            pruned_cells.discard((pos[i], epoch))
        tokens += int(s.lengths.sum())
        rolled += len(roll) * cfg.group
        grpo_step(reasoner.model, opt, batch_from_samples(s, torch.as_tensor(r, dtype=torch.float32)), gcfg)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            acc = evaluate(reasoner, heldout, cfg)
            curve.append({"step": step, "epoch": epoch, "tokens": tokens, "accuracy": float(acc.mean())})
        report(progress, step / cfg.steps, f"{STRATEGIES.label(cfg.strategy)}: step {step}/{cfg.steps}, "
               f"{tokens:,} rollout tokens")
    n_ep = epoch + 1
    grid = [[heat.get((j, e)) for e in range(n_ep)] for j in range(len(subset))]
    pgrid = [[(j, e) in pruned_cells for e in range(n_ep)] for j in range(len(subset))]
    return TrainLog(asdict(cfg), subset, plan.offline_tokens, curve, grid, pgrid, rolled, skipped, tokens,
                    round(time.perf_counter() - t0, 2), [float(a) for a in acc],
                    [] if plan.rated is None else [int(i) for i in plan.rated],
                    [] if plan.rates is None else [float(a) for a in plan.rates])
