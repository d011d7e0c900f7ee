"""GRPO: group-relative policy optimisation (Shao et al., "DeepSeekMath", arXiv 2402.03300), as pure loss functions
and one optimiser step.

For a prompt with G sampled completions o_1..o_G and rewards r_1..r_G:

- advantages (:func:`group_advantages`): A_i = (r_i - mean(r)) / (std(r) + eps), the std unbiased (n - 1), per
  group; ``scale=False`` keeps only the centring. Every token of completion i gets A_i.
- the clipped ratio (:func:`clipped_objective`): with rho_t = exp(log pi(o_t) - log pi_old(o_t)), the per-token
  loss is -min(rho_t A, clip(rho_t, 1 - epsilon, 1 + epsilon_high) A).
- KL to a reference (:func:`k3_kl`), optional (``beta`` > 0): the k3 estimator exp(q - p) - (q - p) - 1 with p, q
  the policy's and the reference's log-probabilities of the sampled token (unbiased for KL(pi || pi_ref), >= 0).
- aggregation (:func:`grpo_loss`): ``sequence`` averages the per-token losses within each completion, then over
  completions (the paper's 1/G sum_i 1/|o_i| sum_t); ``token`` averages over all tokens of the batch (each token
  weighs the same, whatever its completion's length).

:func:`grpo_step` runs one step on a causal LM (transformers interface: ``input_ids``, ``attention_mask`` ->
``logits``): the policy's log-probabilities of the completions by one teacher-forced pass
(:func:`completion_logprobs`), the reference's under ``no_grad`` when ``beta`` > 0, the loss, backward, the
optimiser's step. Without ``old_logprobs`` the ratio is taken against the detached current log-probabilities (one
update per batch of samples: rho = 1, the gradient is the policy gradient). Nothing here samples:
:func:`batch_from_samples` builds a batch from :class:`backend.reasoning.sampling.Samples`.

Shapes: rewards [B, G]; completions [R, T] with R = B G (group-major: rows g * G .. g * G + G - 1 are prompt g's);
log-probabilities and masks [R, T].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError

AGGREGATIONS = ("sequence", "token")


@dataclass(frozen=True)
class GRPOConfig:
    """``epsilon`` the clip range (``epsilon_high`` its upper side, None = the same); ``beta`` the KL weight (0 = no
    reference); ``aggregation`` ``sequence`` or ``token``; ``scale_rewards`` divide by the group's std;
    ``std_eps`` added to the std; ``temperature`` divides the logits before the log-softmax (match the sampler's)."""

    epsilon: float = 0.2
    epsilon_high: float | None = None
    beta: float = 0.0
    aggregation: str = "sequence"
    scale_rewards: bool = True
    std_eps: float = 1e-4
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.epsilon < 1.0:
            raise InputError(f"The clip range epsilon must be in (0, 1); got {self.epsilon!r}.")
        if self.epsilon_high is not None and not 0.0 < self.epsilon_high <= 10.0:
            raise InputError(f"epsilon_high must be in (0, 10]; got {self.epsilon_high!r}.")
        if not 0.0 <= self.beta <= 10.0:
            raise InputError(f"The KL weight beta must be in [0, 10]; got {self.beta!r}.")
        if self.aggregation not in AGGREGATIONS:
            raise InputError(f"aggregation must be one of {', '.join(AGGREGATIONS)}; got {self.aggregation!r}.")
        if not 0.0 <= self.std_eps <= 1.0:
            raise InputError(f"std_eps must be in [0, 1]; got {self.std_eps!r}.")
        if not 0.0 < self.temperature <= 5.0:
            raise InputError(f"The temperature must be in (0, 5]; got {self.temperature!r}.")

    @property
    def clip_high(self) -> float:
        return self.epsilon if self.epsilon_high is None else self.epsilon_high


def group_advantages(rewards: Any, scale: bool = True, eps: float = 1e-4) -> Any:
    """[B, G] advantages from [B, G] rewards: centred per group, divided by the group's unbiased std + ``eps``."""
    import torch

    r = torch.as_tensor(rewards, dtype=torch.float32)
    if r.ndim != 2 or r.shape[1] < 2:
        raise InputError(f"Rewards must be [prompts, G] with G >= 2 completions per prompt; got shape {tuple(r.shape)}.")
    if not torch.isfinite(r).all():
        raise InputError("Rewards must be finite numbers.")
    adv = r - r.mean(1, keepdim=True)
    return adv / (r.std(1, keepdim=True) + eps) if scale else adv


def k3_kl(logprobs: Any, ref_logprobs: Any) -> Any:
    """Per-token k3 estimate of KL(pi || pi_ref): exp(q - p) - (q - p) - 1, p = ``logprobs``, q = ``ref_logprobs``."""
    import torch

    d = ref_logprobs - logprobs
    return torch.exp(d) - d - 1


def clipped_objective(logprobs: Any, old_logprobs: Any, advantages: Any, epsilon: float,
                      epsilon_high: float | None = None) -> tuple[Any, Any]:
    """Per-token clipped surrogate loss [R, T] = -min(rho A, clip(rho) A) and the ratio rho [R, T];
    ``advantages`` [R] or [R, T]."""
    import torch

    adv = advantages.unsqueeze(-1) if advantages.ndim == 1 else advantages
    ratio = torch.exp(logprobs - old_logprobs)
    hi = epsilon if epsilon_high is None else epsilon_high
    clipped = torch.clamp(ratio, 1 - epsilon, 1 + hi)
    return -torch.min(ratio * adv, clipped * adv), ratio


def aggregate(per_token: Any, mask: Any, how: str = "sequence") -> Any:
    """The batch loss from per-token losses [R, T] over the completion tokens ``mask`` [R, T]."""
    m = mask.to(per_token.dtype)
    if how == "sequence":
        return ((per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)).mean()
    if how == "token":
        return (per_token * m).sum() / m.sum().clamp(min=1.0)
    raise InputError(f"aggregation must be one of {', '.join(AGGREGATIONS)}; got {how!r}.")


def grpo_loss(logprobs: Any, old_logprobs: Any, advantages: Any, mask: Any, config: GRPOConfig,
              ref_logprobs: Any = None) -> tuple[Any, dict[str, float]]:
    """The GRPO loss (a scalar tensor) and its statistics: mean ratio, clipped share, mean KL (k3) over the tokens.
    ``advantages`` [R] (one per completion); the other tensors [R, T]."""

    per_token, ratio = clipped_objective(logprobs, old_logprobs, advantages, config.epsilon, config.epsilon_high)
    m = mask.to(per_token.dtype)
    n = m.sum().clamp(min=1.0)
    stats = {"ratio_mean": float((ratio.detach() * m).sum() / n)}
    adv = advantages.unsqueeze(-1) if advantages.ndim == 1 else advantages
    clipped = ((ratio < 1 - config.epsilon) & (adv < 0)) | ((ratio > 1 + config.clip_high) & (adv > 0))
    stats["clipped_share"] = float((clipped.to(m.dtype) * m).sum() / n)
    if config.beta > 0:
        if ref_logprobs is None:
            raise InputError("beta > 0 needs the reference model's log-probabilities.")
        kl = k3_kl(logprobs, ref_logprobs)
        per_token = per_token + config.beta * kl
        stats["kl"] = float((kl.detach() * m).sum() / n)
    loss = aggregate(per_token, mask, config.aggregation)
    stats["loss"] = float(loss.detach())
    return loss, stats


def completion_logprobs(model: Any, prompts: list[list[int]], completions: Any, mask: Any, pad_id: int = 0,
                        temperature: float = 1.0) -> Any:
    """[R, T] log-probabilities of each completion token given its prompt and the tokens before it (one
    teacher-forced pass; prompts left-padded, completions right-padded; 0 where ``mask`` is False). ``prompts``
    holds R prompts, one per completion row."""
    import torch

    R, T = completions.shape
    if len(prompts) != R:
        raise InputError(f"Give one prompt per completion: {len(prompts)} prompts for {R} completions.")
    L = max(len(p) for p in prompts)
    ids = torch.full((R, L + T), pad_id, dtype=torch.long)
    att = torch.zeros((R, L + T), dtype=torch.long)
    for r, p in enumerate(prompts):
        ids[r, L - len(p): L] = torch.tensor(p)
        att[r, L - len(p): L] = 1
    ids[:, L:] = torch.where(mask, completions, torch.full_like(completions, pad_id))
    att[:, L:] = mask.long()
    positions = (att.cumsum(-1) - 1).clamp_min(0)
    logits = model(input_ids=ids, attention_mask=att, position_ids=positions).logits[:, L - 1: L + T - 1].float()
    logp = torch.log_softmax(logits / temperature, dim=-1).gather(-1, ids[:, L:].unsqueeze(-1)).squeeze(-1)
    return logp * mask


@dataclass
class GRPOBatch:
    """What one GRPO step needs: per completion row its prompt, the completion tokens [R, T] and mask [R, T]; the
    rewards [B, G] (R = B G, group-major); optionally the sampler's log-probabilities ``old_logprobs`` [R, T]."""

    prompts: list[list[int]]
    completions: Any
    mask: Any
    rewards: Any
    old_logprobs: Any = None
    pad_id: int = 0

    def __post_init__(self) -> None:
        import torch

        self.rewards = torch.as_tensor(self.rewards, dtype=torch.float32)
        R = self.completions.shape[0]
        if self.rewards.ndim != 2 or self.rewards.numel() != R:
            raise InputError(f"{R} completions need rewards of shape [prompts, G] with prompts x G = {R}; got "
                             f"{tuple(self.rewards.shape)}.")
        if tuple(self.mask.shape) != tuple(self.completions.shape):
            raise InputError("The mask must have the completions' shape.")
        if not bool(self.mask.any(-1).all()):
            raise InputError("Every completion needs at least one token.")


def batch_from_samples(samples: Any, rewards: Any) -> GRPOBatch:
    """A batch from :class:`backend.reasoning.sampling.Samples` (its N samples per prompt are the group) and
    rewards [B, N]. The sampler's model log-probabilities (temperature 1) become ``old_logprobs``."""
    B, N, T = samples.token_ids.shape
    prompts = [samples.prompt_ids[b] for b in range(B) for _ in range(N)]
    return GRPOBatch(prompts, samples.token_ids.reshape(B * N, T), samples.mask.reshape(B * N, T), rewards,
                     samples.logprobs.reshape(B * N, T), pad_id=0)


@dataclass
class GRPOStepResult:
    """One step's loss and statistics (``advantages`` [B, G] as a list)."""

    loss: float
    ratio_mean: float
    clipped_share: float
    kl: float | None
    advantages: list[list[float]]
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grpo_step(model: Any, optimizer: Any, batch: GRPOBatch, config: GRPOConfig | None = None,
              reference: Any = None) -> GRPOStepResult:
    """One GRPO update of ``model`` with ``optimizer`` on ``batch`` (``reference``: the frozen reference model,
    needed when ``config.beta`` > 0)."""
    import torch

    config = config or GRPOConfig()
    if config.beta > 0 and reference is None:
        raise InputError("beta > 0 needs a reference model.")
    B, G = batch.rewards.shape
    adv = group_advantages(batch.rewards, config.scale_rewards, config.std_eps)
    model.train()
    logp = completion_logprobs(model, batch.prompts, batch.completions, batch.mask, batch.pad_id, config.temperature)
    old = logp.detach() if batch.old_logprobs is None else batch.old_logprobs.to(logp.dtype)
    ref = None
    if config.beta > 0:
        with torch.no_grad():
            ref = completion_logprobs(reference, batch.prompts, batch.completions, batch.mask, batch.pad_id,
                                      config.temperature)
    loss, stats = grpo_loss(logp, old, adv.reshape(B * G), batch.mask, config, ref)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval()
    return GRPOStepResult(stats["loss"], stats["ratio_mean"], stats["clipped_share"], stats.get("kl"),
                          adv.tolist(), int(batch.mask.sum()))
