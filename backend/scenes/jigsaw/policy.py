"""Policy (a): a Plackett-Luce policy over tile features, trained with GRPO on the jigsaw reward.

The model (:class:`TilePolicy`, about 0.16 M parameters): each shown tile's DINOv2 summary ``[5, 384]`` goes through a
layer norm and a linear map to 48 dimensions, then two transformer encoder layers over the tiles (no position
encoding: the shown order carries no information, so the model is equivariant to it); the score of tile ``j`` for
original position ``k`` is the dot product of its state with a learned query of position ``k`` (scaled by
1 / sqrt(48)). Scores ``[B, n, n]`` (tile x position).

The Plackett-Luce policy fills the positions in raster order: position ``k`` takes one of the tiles not yet placed
with probability softmax over those tiles of score[:, k] / temperature. So every sample is a valid permutation, and
``log pi(sigma) = sum_k log p_k`` (one "token" per position). :func:`sample` draws with Gumbel noise, :func:`greedy`
takes the argmax at each step (the answer of record), :func:`log_prob` gives the per-position log-probabilities
``[R, n]`` of given permutations.

Training (:func:`train`): each step draws ``batch`` training images and a fresh shuffle of each, samples ``group``
answers per puzzle (the paper's 16), scores their text with the reward (:mod:`.reward`), and takes one Adam step on
:func:`backend.reasoning.grpo.grpo_loss` (group-normalised advantages, clipped ratio against the detached sampling
policy, sequence aggregation, no KL: ``beta = 0``, as the paper trains pure jigsaw). Every ``eval_every`` steps the
greedy exact-solve rate and per-tile accuracy on fixed held-out puzzles are recorded (the learning curves).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from ...errors import InputError
from .features import DIM, PARTS
from .reward import FORMAT_REWARD, GAMMA, REWARDS, score_perm


@dataclass(frozen=True)
class PolicyConfig:
    """The model's size: ``width`` of the tile states, ``layers`` and ``heads`` of the tile transformer."""

    width: int = 48
    layers: int = 2
    heads: int = 4


class TilePolicy(nn.Module):
    """Tile features ``[B, n, 5, 384]`` -> scores ``[B, n (tile), n (position)]``. See the module docstring."""

    def __init__(self, n: int, config: PolicyConfig = PolicyConfig()) -> None:
        super().__init__()
        d = config.width
        self.n = int(n)
        self.inp = nn.Sequential(nn.LayerNorm(PARTS * DIM), nn.Linear(PARTS * DIM, d))
        layer = nn.TransformerEncoderLayer(d, config.heads, 2 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
        self.pos = nn.Parameter(torch.randn(self.n, d) * 0.1)
        self.scale = 1.0 / math.sqrt(d)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        h = self.enc(self.inp(feats.float().flatten(2)))
        return torch.einsum("bjd,kd->bjk", h, self.pos) * self.scale


def _step_logits(scores: torch.Tensor, k: int, used: torch.Tensor, temperature: float) -> torch.Tensor:
    return (scores[:, :, k] / temperature).masked_fill(used, float("-inf"))


def sample(scores: torch.Tensor, group: int, generator: torch.Generator, temperature: float = 1.0) -> torch.Tensor:
    """``group`` Plackett-Luce permutations per puzzle: ``[B, group, n]`` (the shown tile for each position)."""
    b, n, _ = scores.shape
    s = scores.detach().repeat_interleave(group, 0)
    used = torch.zeros(b * group, n, dtype=torch.bool)
    out = torch.empty(b * group, n, dtype=torch.long)
    for k in range(n):
        logits = _step_logits(s, k, used, temperature)
        u = torch.rand(logits.shape, generator=generator).clamp_(1e-12, 1 - 1e-12)
        pick = (logits - torch.log(-torch.log(u))).argmax(1)
        out[:, k] = pick
        used[torch.arange(b * group), pick] = True
    return out.view(b, group, n)


def greedy(scores: torch.Tensor) -> torch.Tensor:
    """The most likely choice at each position in turn: ``[B, n]``."""
    b, n, _ = scores.shape
    used = torch.zeros(b, n, dtype=torch.bool)
    out = torch.empty(b, n, dtype=torch.long)
    for k in range(n):
        pick = _step_logits(scores.detach(), k, used, 1.0).argmax(1)
        out[:, k] = pick
        used[torch.arange(b), pick] = True
    return out


def log_prob(scores: torch.Tensor, perms: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Per-position log-probabilities ``[R, n]`` of permutations ``perms [R, n]`` under ``scores [R, n, n]``."""
    r, n, _ = scores.shape
    used = torch.zeros(r, n, dtype=torch.bool)
    out = []
    rows = torch.arange(r)
    for k in range(n):
        lp = torch.log_softmax(_step_logits(scores, k, used, temperature), 1)
        out.append(lp[rows, perms[:, k]])
        used = used.clone()
        used[rows, perms[:, k]] = True
    return torch.stack(out, 1)


def position_probs(scores: torch.Tensor) -> torch.Tensor:
    """Each tile's marginal preference over positions (softmax over tiles per position): ``[B, n, n]``, for display."""
    return torch.softmax(scores.detach(), 1)


@dataclass(frozen=True)
class TrainConfig:
    """``grid`` 2 or 3; ``frames`` 0 for the image jigsaw, else the clip-ordering task with that many frames (3 to 8,
    :mod:`.ordering`; ``grid`` is then unused); ``reward`` graded or binary; ``steps`` Adam steps of ``batch`` puzzles x
    ``group`` samples (the paper's 16 per prompt, temperature 1); ``lr``; ``gamma``; ``eval_every`` steps between
    curve points."""

    grid: int = 3
    frames: int = 0
    reward: str = "graded"
    steps: int = 300
    batch: int = 16
    group: int = 16
    lr: float = 3e-3
    temperature: float = 1.0
    gamma: float = GAMMA
    format_reward: float = FORMAT_REWARD
    eval_every: int = 25
    seed: int = 0
    policy: PolicyConfig = field(default_factory=PolicyConfig)

    @property
    def n(self) -> int:
        """Pieces per puzzle: tiles (``grid ** 2``) or frames."""
        return int(self.frames) or self.grid * self.grid

    def __post_init__(self) -> None:
        if self.frames == 0 and self.grid not in (2, 3):
            raise InputError(f"grid must be 2 or 3; got {self.grid}.")
        if self.frames != 0 and not 3 <= self.frames <= 8:
            raise InputError(f"A clip has 3 to 8 frames; got {self.frames}.")
        object.__setattr__(self, "reward", REWARDS.key(self.reward))
        if not 1 <= self.steps <= 100_000 or self.batch < 1 or self.group < 2:
            raise InputError("steps must be 1 to 100000, batch >= 1 and group >= 2.")


@dataclass
class TrainResult:
    model: TilePolicy
    curves: dict[str, list]
    rewards: list[float]
    seconds: float
    config: dict


def shuffled(feats: torch.Tensor, orders: torch.Tensor) -> torch.Tensor:
    """Features in raster order ``[B, n, 5, D]`` shown in ``orders [B, n]`` (shown j = original orders[j])."""
    return torch.gather(feats, 1, orders[:, :, None, None].expand(-1, -1, feats.shape[2], feats.shape[3]))


def truths(orders: torch.Tensor) -> torch.Tensor:
    """The raster-order answers ``[B, n]`` of shuffles ``orders [B, n]``."""
    t = torch.empty_like(orders)
    t.scatter_(1, orders, torch.arange(orders.shape[1]).expand_as(orders).contiguous())
    return t


def fixed_orders(count: int, n: int, seed: int) -> torch.Tensor:
    """Reproducible shuffles ``[count, n]`` (none the identity) for evaluation sets."""
    rng = np.random.default_rng(int(seed))
    out = []
    for _ in range(int(count)):
        o = rng.permutation(n)
        while (o == np.arange(n)).all():
            o = rng.permutation(n)
        out.append(o)
    return torch.from_numpy(np.stack(out)).long()


def evaluate(model: TilePolicy, feats: torch.Tensor, orders: torch.Tensor) -> dict[str, Any]:
    """Greedy answers on fixed puzzles: exact-solve rate, per-tile accuracy, and the per-puzzle exact flags."""
    with torch.no_grad():
        pred = greedy(model(shuffled(feats, orders)))
    t = truths(orders)
    exact = (pred == t).all(1)
    return {"solve": float(exact.float().mean()), "tile_acc": float((pred == t).float().mean()),
            "exact": exact.int().tolist()}


def train(config: TrainConfig, feats: torch.Tensor, evals: dict[str, tuple[torch.Tensor, torch.Tensor]],
          log: Callable[[str], None] | None = None, should_stop: Callable[[], bool] | None = None) -> TrainResult:
    """GRPO on the training features ``[N, n, 5, 384]``; ``evals`` name -> (features, fixed orders) for the curves."""
    from ...reasoning.grpo import GRPOConfig, group_advantages, grpo_loss

    n = config.n
    torch.manual_seed(int(config.seed))
    model = TilePolicy(n, config.policy)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    gcfg = GRPOConfig(beta=0.0, temperature=config.temperature)
    gen = torch.Generator().manual_seed(10_000 + int(config.seed))
    data_rng = np.random.default_rng(20_000 + int(config.seed))
    curves: dict[str, list] = {"step": []}
    for name in evals:
        curves[f"{name}_solve"], curves[f"{name}_tile_acc"] = [], []
    mean_rewards: list[float] = []
    t0 = time.perf_counter()

    def point(step: int) -> None:
        model.eval()
        curves["step"].append(step)
        for name, (f, o) in evals.items():
            r = evaluate(model, f, o)
            curves[f"{name}_solve"].append(round(r["solve"], 4))
            curves[f"{name}_tile_acc"].append(round(r["tile_acc"], 4))
        model.train()

    point(0)
    for step in range(1, config.steps + 1):
        idx = torch.from_numpy(data_rng.integers(0, len(feats), config.batch))
        orders = torch.from_numpy(np.stack([data_rng.permutation(n) for _ in range(config.batch)])).long()
        x = shuffled(feats[idx], orders)
        scores = model(x)
        perms = sample(scores, config.group, gen, config.temperature)
        rewards = score_perm(perms.numpy(), truths(orders)[:, None].numpy(), config.reward, config.gamma,
                             config.format_reward)
        adv = group_advantages(torch.from_numpy(rewards), scale=gcfg.scale_rewards, eps=gcfg.std_eps).flatten()
        flat = perms.flatten(0, 1)
        lp = log_prob(scores.repeat_interleave(config.group, 0), flat, config.temperature)
        loss, _ = grpo_loss(lp, lp.detach(), adv, torch.ones_like(lp), gcfg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        mean_rewards.append(float(rewards.mean()))
        if step % config.eval_every == 0 or step == config.steps:
            point(step)
            if log:
                log(f"{f'{config.frames} frames' if config.frames else f'grid {config.grid}'} {config.reward} seed {config.seed} step {step}: reward "
                    f"{np.mean(mean_rewards[-config.eval_every:]):.3f} "
                    + " ".join(f"{k} {v[-1]:.3f}" for k, v in curves.items() if k != "step"))
        if should_stop and should_stop():
            break
    model.eval()
    return TrainResult(model, curves, mean_rewards, time.perf_counter() - t0, asdict(config))
