"""GRPO (backend/reasoning/grpo.py): one step on a two-prompt batch equals the step computed by hand (loss, gradient
and the SGD update of a bigram model, sequence- and token-level, with clipping active and the k3 KL term); the loss
and its gradient equal trl's GRPO loss on the same tensors; the sampler's batches plug in; bad settings are
InputErrors."""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from backend.errors import InputError
from backend.reasoning import grpo as G

V = 4
PROMPTS = [[0, 1], [2]]
#: per row (group-major: rows 0, 1 answer prompt 0; rows 2, 3 prompt 1) the completion tokens
COMPLETIONS = [[1, 2, 3], [3], [0, 1], [2, 2, 1]]
REWARDS = [[1.0, 0.0], [0.2, 0.9]]
#: old log-probability offsets per row (log pi - log pi_old): ratios outside [0.8, 1.2] on some tokens
OFFSETS = [[0.3, -0.1, 0.05], [-0.4], [0.25, 0.0], [-0.3, 0.1, 0.5]]


class Bigram(torch.nn.Module):
    """logits at position t = W[token t]: a causal LM whose log-probabilities are easy to write by hand."""

    def __init__(self, w):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(w, dtype=torch.float32))

    def forward(self, input_ids, attention_mask=None, position_ids=None):
        return SimpleNamespace(logits=self.w[input_ids])


W0 = [[0.1, -0.3, 0.5, 0.2], [0.0, 0.4, -0.2, 0.3], [-0.5, 0.1, 0.2, 0.6], [0.3, 0.3, -0.1, 0.0]]
WREF = [[0.0, 0.0, 0.3, 0.1], [0.2, 0.1, 0.0, 0.0], [0.0, -0.2, 0.4, 0.2], [0.1, 0.0, 0.0, 0.2]]


def lse(row):
    m = max(row)
    return m + math.log(sum(math.exp(x - m) for x in row))


def softmax(row):
    z = lse(row)
    return [math.exp(x - z) for x in row]


def by_hand(aggregation: str, beta: float, eps: float = 0.2, lr: float = 0.5):
    """The loss and the SGD-updated W of one GRPO step, with plain Python floats."""
    adv = []
    for g in REWARDS:
        mu = sum(g) / len(g)
        sd = math.sqrt(sum((x - mu) ** 2 for x in g) / (len(g) - 1))
        adv += [(x - mu) / (sd + 1e-4) for x in g]
    rows = []  # per row: list of (context token, token, coefficient of d loss / d log p)
    loss = 0.0
    n_tokens = sum(len(c) for c in COMPLETIONS)
    for r, comp in enumerate(COMPLETIONS):
        prev = PROMPTS[r // 2][-1]
        terms = []
        for t, y in enumerate(comp):
            p = W0[prev][y] - lse(W0[prev])
            q = WREF[prev][y] - lse(WREF[prev])
            rho = math.exp(OFFSETS[r][t])  # exp(p - p_old)
            a = adv[r]
            clipped = min(max(rho, 1 - eps), 1 + eps)
            surrogate = -min(rho * a, clipped * a)
            d_surrogate = -rho * a if rho * a <= clipped * a else 0.0  # only the unclipped branch depends on p
            kl = math.exp(q - p) - (q - p) - 1
            d_kl = -math.exp(q - p) + 1
            weight = 1 / (len(COMPLETIONS) * len(comp)) if aggregation == "sequence" else 1 / n_tokens
            loss += weight * (surrogate + beta * kl)
            terms.append((prev, y, weight * (d_surrogate + beta * d_kl)))
            prev = y
        rows.append(terms)
    grad = [[0.0] * V for _ in range(V)]
    for terms in rows:
        for x, y, c in terms:
            sm = softmax(W0[x])
            for j in range(V):
                grad[x][j] += c * ((j == y) - sm[j])
    w_new = [[W0[i][j] - lr * grad[i][j] for j in range(V)] for i in range(V)]
    return loss, w_new, adv


def batch(model):
    T = max(len(c) for c in COMPLETIONS)
    comp = torch.tensor([c + [0] * (T - len(c)) for c in COMPLETIONS])
    mask = torch.tensor([[True] * len(c) + [False] * (T - len(c)) for c in COMPLETIONS])
    prompts = [PROMPTS[r // 2] for r in range(len(COMPLETIONS))]
    with torch.no_grad():
        logp = G.completion_logprobs(model, prompts, comp, mask)
    offsets = torch.tensor([o + [0.0] * (T - len(o)) for o in OFFSETS])
    return G.GRPOBatch(prompts, comp, mask, REWARDS, old_logprobs=(logp - offsets) * mask)


@pytest.mark.parametrize("aggregation", ["sequence", "token"])
@pytest.mark.parametrize("beta", [0.0, 0.1])
def test_one_step_equals_the_hand_computed_step(aggregation, beta):
    model, ref = Bigram(W0), Bigram(WREF)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    res = G.grpo_step(model, opt, batch(model), G.GRPOConfig(beta=beta, aggregation=aggregation), ref)
    loss, w_new, adv = by_hand(aggregation, beta)
    assert res.loss == pytest.approx(loss, abs=1e-6)
    assert [a for g in res.advantages for a in g] == pytest.approx(adv, abs=1e-6)
    assert torch.allclose(model.w.detach(), torch.tensor(w_new), atol=1e-6)
    assert 0 < res.clipped_share < 1 and res.tokens == 9
    assert (res.kl is None) == (beta == 0)


def _trl_loss(loss_type: str, beta: float, logp, old, ref, adv, comp, mask, prompt_ids):
    """trl's own GRPO loss (GRPOTrainer._compute_loss) on the given per-token log-probabilities."""
    from trl import GRPOTrainer

    ident = SimpleNamespace(gather=lambda x: x, reduce=lambda x, reduction="sum": x, gather_for_metrics=lambda x: x,
                            num_processes=1, sync_gradients=True)
    owner = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *a, **k: (logp, torch.zeros_like(logp), None),
        aux_loss_enabled=False, top_entropy_quantile=1.0, off_policy_mask_threshold=None,
        importance_sampling_level="token", beta=beta, loss_type=loss_type, epsilon_low=0.2, epsilon_high=0.2,
        args=SimpleNamespace(use_bias_correction_kl=False, delta=None), use_vllm=False,
        model=SimpleNamespace(training=False), current_gradient_accumulation_steps=1, _entropy_bonus_enabled=False,
        accelerator=ident, _metrics={"train": defaultdict(list), "eval": defaultdict(list)})
    inputs = {"prompt_ids": prompt_ids, "prompt_mask": torch.ones_like(prompt_ids), "completion_ids": comp,
              "completion_mask": mask.long(), "advantages": adv, "old_per_token_logps": old,
              "ref_per_token_logps": ref}
    return GRPOTrainer._compute_loss(owner, None, inputs)


@pytest.mark.parametrize("aggregation, loss_type", [("sequence", "grpo"), ("token", "bnpo")])
def test_loss_and_gradient_equal_trls(aggregation, loss_type):
    pytest.importorskip("trl")
    from trl.trainer.utils import nanstd

    model, ref_model = Bigram(W0), Bigram(WREF)
    b = batch(model)
    rewards = b.rewards
    trl_adv = ((rewards - rewards.mean(1, keepdim=True)) / (nanstd(rewards, dim=1, keepdim=True) + 1e-4)).reshape(-1)
    adv = G.group_advantages(rewards).reshape(-1)
    assert torch.allclose(adv, trl_adv, atol=1e-6)
    with torch.no_grad():
        base = G.completion_logprobs(model, b.prompts, b.completions, b.mask)
        ref = G.completion_logprobs(ref_model, b.prompts, b.completions, b.mask)
    ours_lp = base.clone().requires_grad_(True)
    theirs_lp = base.clone().requires_grad_(True)
    cfg = G.GRPOConfig(beta=0.1, aggregation=aggregation)
    ours, _ = G.grpo_loss(ours_lp, b.old_logprobs, adv, b.mask, cfg, ref)
    theirs = _trl_loss(loss_type, 0.1, theirs_lp, b.old_logprobs, ref, trl_adv, b.completions, b.mask,
                       torch.zeros((4, 1), dtype=torch.long))
    ours.backward()
    theirs.backward()
    assert float(ours.detach()) == pytest.approx(float(theirs.detach()), abs=1e-6)
    assert torch.allclose(ours_lp.grad * b.mask, theirs_lp.grad * b.mask, atol=1e-6)


def test_a_step_on_the_samplers_batch():
    from backend.models.tinyreasoner import load_tinyreasoner
    from backend.reasoning import sampling as S

    r = load_tinyreasoner()
    # questions the model is unsure of (outside its grammar), so a group's samples differ and the step moves them
    s = S.sample(r, ["Compute 345 + 678.", "What is 12 * 13?"], S.SamplingConfig(n=3, max_new_tokens=8), seed=0)
    b = G.batch_from_samples(s, [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    with torch.no_grad():
        lp = G.completion_logprobs(r.model, b.prompts, b.completions, b.mask)
    assert torch.allclose(lp, b.old_logprobs * b.mask, atol=1e-5)  # the sampler's log-probs = teacher forcing
    model = copy.deepcopy(r.model)
    res = G.grpo_step(model, torch.optim.SGD(model.parameters(), lr=0.1), b, G.GRPOConfig(beta=0.05), r.model)
    assert res.ratio_mean == pytest.approx(1.0, abs=1e-4) and res.clipped_share == 0.0
    assert res.kl == pytest.approx(0.0, abs=1e-6) and res.tokens == int(s.lengths.sum())
    after = G.completion_logprobs(model, b.prompts, b.completions, b.mask).detach()
    assert not torch.equal(after, lp)


@pytest.mark.parametrize("kwargs, words", [({"epsilon": 0}, "epsilon"), ({"epsilon": 1.5}, "epsilon"),
                                           ({"beta": -1}, "beta"), ({"aggregation": "mean"}, "aggregation"),
                                           ({"temperature": 0}, "temperature")])
def test_bad_settings_are_input_errors(kwargs, words):
    with pytest.raises(InputError, match=words):
        G.GRPOConfig(**kwargs)


def test_bad_batches_are_input_errors():
    with pytest.raises(InputError, match="G >= 2"):
        G.group_advantages([[1.0], [2.0]])
    with pytest.raises(InputError, match="finite"):
        G.group_advantages([[1.0, float("nan")]])
    comp, mask = torch.zeros((4, 2), dtype=torch.long), torch.ones((4, 2), dtype=torch.bool)
    with pytest.raises(InputError, match="rewards of shape"):
        G.GRPOBatch([[1]] * 4, comp, mask, [[1.0, 0.0, 1.0]])
    with pytest.raises(InputError, match="reference"):
        G.grpo_step(Bigram(W0), None, G.GRPOBatch([[1]] * 4, comp, mask, [[1.0, 0.0], [0.0, 1.0]]),
                    G.GRPOConfig(beta=0.1))
