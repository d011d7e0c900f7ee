"""The D2F model's attention patterns: block-causal logits of block i do not change when later blocks change (the
property that makes caching finished blocks exact), and the cached forward equals the full forward."""

from __future__ import annotations

import torch

from backend.reasoning.d2f.diffusion_lm import (
    DiffusionLM,
    DiffusionLMConfig,
    bidirectional_mask,
    block_causal_mask,
    block_ids,
)


def _model():
    torch.manual_seed(0)
    return DiffusionLM(DiffusionLMConfig(vocab_size=50, n_layer=2, hidden=48, n_head=3, intermediate=96,
                                         max_positions=96)).eval()


def test_block_ids_and_mask_shape():
    b = block_ids(12, 4, 3)
    assert b.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
    m = block_causal_mask(12, 4, 3)
    assert m[4, :7].all() and not m[4, 7:].any()  # block 1 sees the prompt and itself
    assert m[0, :4].all() and not m[0, 4:].any()  # the prompt sees only itself


def test_block_i_logits_ignore_later_blocks():
    model = _model()
    g = torch.Generator().manual_seed(1)
    prompt, block, t = 8, 16, 8 + 4 * 16
    ids = torch.randint(0, 50, (1, t), generator=g)
    mask = block_causal_mask(t, prompt, block)
    with torch.inference_mode():
        base = model(ids, mask)
        for i in range(1, 4):  # change every token after block i
            cut = prompt + i * block
            other = ids.clone()
            other[:, cut:] = torch.randint(0, 50, (1, t - cut), generator=g)
            out = model(other, mask)
            assert (out[:, :cut] - base[:, :cut]).abs().max() <= 1e-6
            assert (out[:, cut:] - base[:, cut:]).abs().max() > 1e-3
        bi = model(ids, bidirectional_mask(t))
        other = ids.clone()
        other[:, -1] = (ids[:, -1] + 1) % 50
        assert (model(other, bidirectional_mask(t))[:, :prompt] - bi[:, :prompt]).abs().max() > 1e-6


def test_cached_blocks_give_the_same_logits_as_the_full_forward():
    model = _model()
    prompt, block, t = 8, 16, 8 + 3 * 16
    ids = torch.randint(0, 50, (1, t), generator=torch.Generator().manual_seed(2))
    full_mask = block_causal_mask(t, prompt, block)
    with torch.inference_mode():
        full = model(ids, full_mask)
        cut = prompt + 2 * block
        _, kv = model(ids[:, :cut], full_mask[:cut, :cut], return_kv=True)
        tail = model(ids[:, cut:], full_mask[cut:, :], start=cut, past=kv)
    assert (tail - full[:, cut:]).abs().max() <= 1e-5
