"""Invariants of the Bridge block and the bridged tiny reasoner (true by construction, so tests, not claims).

- zero-initialised blocks: the model equals the base model at every width (logits to 1e-6, and the same samples);
- width 1 with non-zero blocks: equal to the base model (a sample's own value cancels);
- permutation equivariance along the sample axis (block and whole model);
- nothing crosses prompts, masked (finished) samples send nothing;
- the sampler's log-probabilities equal a teacher-forced pass of the same grouped completions (what GRPO relies on);
- the parameters Bridge adds are within the paper's 2.8-5.1 %.
"""

from __future__ import annotations

import pytest
import torch

from backend.reasoning.bridge.model import BridgeBlock, BridgeConfig, bridged_from_reasoner


@pytest.fixture(scope="module")
def reasoner():
    from backend.models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


def _randomise(model, std: float = 0.05, seed: int = 0) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for blk in model.blocks:
            blk.o.weight.copy_(torch.randn(blk.o.weight.shape, generator=g) * std)


def _ids(reasoner, rows: int, length: int = 14, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(10, len(reasoner.tokenizer), (rows, length), generator=g)


def test_zero_init_equals_the_base_model_at_every_width(reasoner) -> None:
    m = bridged_from_reasoner(reasoner)
    ids = _ids(reasoner, 8)
    with torch.no_grad():
        base = reasoner.model(input_ids=ids).logits
        for n in (2, 4, 8):
            with m.grouped(n, 8):
                assert (m(input_ids=ids).logits - base).abs().max() <= 1e-6


def test_zero_init_samples_are_the_base_models(reasoner) -> None:
    from backend.reasoning.bridge.rl import sample_width
    from backend.reasoning.sampling import SamplingConfig, sample

    q = ["Compute (12 + 5) * 3 - 4.", "Calculate ((158 - 10) * 6) + 22."]
    ours = sample_width(reasoner, bridged_from_reasoner(reasoner), q, 4, 1.0, seed=3, max_new_tokens=40)
    base = sample(reasoner, q, SamplingConfig(n=4, max_new_tokens=40, temperature=1.0), seed=3)
    assert torch.equal(ours.token_ids, base.token_ids)
    assert (ours.logprobs - base.logprobs).abs().max() <= 1e-5


def test_width_one_equals_the_base_model_with_trained_blocks(reasoner) -> None:
    m = bridged_from_reasoner(reasoner)
    _randomise(m, 0.3)
    ids = _ids(reasoner, 6)
    with torch.no_grad():
        base = reasoner.model(input_ids=ids).logits
        with m.grouped(1, 6):
            assert (m(input_ids=ids).logits - base).abs().max() <= 1e-6
        with m.grouped(2, 6):  # and the blocks do act at width 2
            assert (m(input_ids=ids).logits - base).abs().max() > 1e-2


def test_block_at_width_one_is_exactly_zero() -> None:
    blk = BridgeBlock(16, BridgeConfig(heads=2, head_dim=4))
    torch.nn.init.normal_(blk.o.weight)
    h = torch.randn(3, 1, 5, 16)
    assert torch.count_nonzero(blk(h)) == 0


def test_permutation_equivariance_along_samples(reasoner) -> None:
    blk = BridgeBlock(16, BridgeConfig(heads=2, head_dim=4))
    torch.nn.init.normal_(blk.o.weight)
    h = torch.randn(2, 5, 7, 16)
    valid = torch.rand(2, 5, 7) > 0.3
    perm = torch.tensor([3, 0, 4, 1, 2])
    with torch.no_grad():
        a, b = blk(h, valid)[:, perm], blk(h[:, perm], valid[:, perm])
    assert (a - b).abs().max() <= 1e-5
    m = bridged_from_reasoner(reasoner)
    _randomise(m, 0.05)
    ids = _ids(reasoner, 8, seed=1)
    rows = torch.tensor([2, 0, 3, 1, 6, 7, 4, 5])  # a permutation within each prompt's group of 4
    with torch.no_grad(), m.grouped(4, 8):
        x, y = m(input_ids=ids).logits[rows], m(input_ids=ids[rows]).logits
    assert (x - y).abs().max() <= 1e-4


def test_prompts_do_not_mix_and_masked_samples_send_nothing() -> None:
    blk = BridgeBlock(16, BridgeConfig())
    torch.nn.init.normal_(blk.o.weight)
    h = torch.randn(2, 4, 6, 16)
    valid = torch.ones(2, 4, 6, dtype=torch.bool)
    valid[0, 2, 3:] = False                      # sample 2 of prompt 0 finished after position 2
    h2 = h.clone()
    h2[1] += torch.randn(4, 6, 16)               # another prompt changes
    h2[0, 2, 3:] += torch.randn(3, 16)           # the finished sample's states change
    with torch.no_grad():
        a, b = blk(h, valid), blk(h2, valid)
    keep = torch.ones(4, dtype=torch.bool)
    keep[2] = False
    assert (a[0, keep] - b[0, keep]).abs().max() <= 1e-6
    assert torch.count_nonzero(a[0, 2, 3:]) == 0  # a finished sample receives nothing either


def test_sampler_logprobs_equal_the_teacher_forced_pass(reasoner) -> None:
    from backend.reasoning.bridge.rl import sample_width
    from backend.reasoning.grpo import batch_from_samples, completion_logprobs

    m = bridged_from_reasoner(reasoner)
    _randomise(m, 0.05, seed=2)
    q = ["Compute (12 + 5) * 3 - 4.", "Calculate ((158 - 10) * 6) + 22."]
    s = sample_width(reasoner, m, q, 4, 1.0, seed=5, max_new_tokens=60)
    batch = batch_from_samples(s, torch.zeros(2, 4))
    with torch.no_grad(), m.grouped(4, 8):
        lp = completion_logprobs(m, batch.prompts, batch.completions, batch.mask, m.pad_id)
    assert (lp - batch.old_logprobs).abs().max() <= 1e-4


def test_parameters_added_are_within_the_papers_range(reasoner) -> None:
    m = bridged_from_reasoner(reasoner)
    share = m.bridge_parameters() / m.base_parameters()
    assert 0.028 <= share <= 0.051, share
