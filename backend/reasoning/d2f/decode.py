"""D2F decoding: pipelined parallel decoding of several blocks over a block-causal masked-diffusion LM with an exact
KV cache, and the baselines it is measured against.

Paper: "Diffusion LLMs Can Do Faster-Than-AR Inference via Discrete Diffusion Forcing" (D2F), ICLR 2026
(arXiv 2508.09192). Model: :mod:`backend.reasoning.d2f.diffusion_lm`.

Pipelined decoder (:func:`d2f_decode`), blocks of ``block`` tokens after the prompt:

- the window starts with one masked block; a new masked block is appended when the last block is more than
  ``tau_add`` decoded (and no end-of-sequence token has been decoded yet);
- a new block is *semi-active* until its predecessor is more than ``tau_act`` decoded, then *fully active*;
- at every step one forward pass covers every block not yet cached (block-causal attention over the cached prefix);
  in every active block the masked positions whose confidence (top probability) exceeds ``tau_conf`` are filled with
  their top token; a fully active block in which none passes fills its single most confident position;
- a block that is complete and whose predecessors are all cached is included once more in the next forward pass, and
  its keys/values from that pass are cached (exact, because of the block-causal mask); decoding stops when the blocks
  up to the one holding ``<eos>`` are complete, or at ``max_new``.

Baselines: :func:`vanilla_decode` (the bidirectional teacher, a fixed generation length, ``steps`` full-recompute
forward passes each filling the ``length / steps`` most confident positions: over the whole length as Dream decodes,
or with ``block`` LLaDA's semi-autoregressive remasking, blocks left to right with the steps shared among them),
:func:`threshold_decode` (cache-free bidirectional decoding filling every position above ``tau_conf`` each pass, at
least one).

Every decoder returns a :class:`DecodeResult`: the tokens, the forward passes, tokens decoded per pass, the seconds,
and (for the grid view) the step at which each position was decoded and its block state per step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ...errors import InputError
from .diffusion_lm import DiffusionLM, aligned, bidirectional_mask, block_causal_mask


@dataclass
class D2FConfig:
    """The paper's thresholds and block size."""

    block: int = 16
    tau_add: float = 0.1
    tau_act: float = 0.95
    tau_conf: float = 0.9
    max_new: int = 128


@dataclass
class DecodeResult:
    decoder: str
    tokens: list[int]
    forward_passes: int
    seconds: float
    decoded_at: list[int]                       # per generated position: the pass that filled it (-1: never)
    states: list[list[str]] = field(default_factory=list)  # per pass, per block: "semi", "full", "done", "cached"
    grid_at: list[int] = field(default_factory=list)  # decoded_at of every generated position, past <eos> too

    @property
    def passes_per_token(self) -> float:
        return self.forward_passes / max(1, len(self.tokens))


def _check(cfg: D2FConfig) -> None:
    for name in ("tau_add", "tau_act", "tau_conf"):
        v = getattr(cfg, name)
        if not 0.0 <= v <= 1.0:
            raise InputError(f"{name} must lie in [0, 1], got {v}.")
    if not 1 <= cfg.block <= 64 or not 1 <= cfg.max_new <= 1024:
        raise InputError("block must be 1-64 tokens and max_new 1-1024.")


def _probs(logits: torch.Tensor, mask_id: int) -> torch.Tensor:
    """Softmax over the vocabulary without ``<mask>`` (a decoded position never becomes the mask token)."""
    return torch.softmax(logits.float().index_fill(-1, torch.tensor([mask_id]), float("-inf")), dim=-1)


def _trim(tokens: list[int], eos: int) -> list[int]:
    return tokens[: tokens.index(eos)] if eos in tokens else tokens


def d2f_decode(model: DiffusionLM, prompt: list[int], mask_id: int, eos_id: int, cfg: D2FConfig | None = None,
               use_cache: bool = True) -> DecodeResult:
    """Pipelined block decoding (see the module docstring). ``prompt`` token ids; returns the generated ids up to
    (without) ``<eos>``. ``use_cache=False`` recomputes every position at every pass (same schedule; a check that
    the cache is exact)."""
    cfg = cfg or D2FConfig()
    _check(cfg)
    p, k = len(prompt), cfg.block
    n_blocks_max = -(-cfg.max_new // k)
    if p + n_blocks_max * k > model.cfg.max_positions:
        raise InputError(f"prompt ({p}) + {n_blocks_max * k} generated positions exceed {model.cfg.max_positions}.")
    seq = list(prompt)
    decoded_at: list[int] = []
    blocks: list[str] = []  # per block: "semi" | "full" | "done" (complete, not cached) | "cached"
    states: list[list[str]] = []
    t0, passes = time.perf_counter(), 0
    with torch.inference_mode():
        # the prompt is block 0: cache it with one pass
        full_mask = block_causal_mask(p + n_blocks_max * k, p, k)
        logits0, kv = model(torch.tensor([prompt]), full_mask[:p, :p], return_kv=True)
        passes += 1
        cached = p
        shift = model.cfg.shift
        prev = logits0[:, -1:]  # with the shift: the prediction of the first position after the cached prefix

        def frac(b: int) -> float:
            seg = seq[p + b * k : p + (b + 1) * k]
            return sum(t != mask_id for t in seg) / k

        def over(f: float, tau: float) -> bool:  # a complete block passes every threshold, 1 included
            return f > tau or f >= 1.0

        def add_block() -> None:
            seq.extend([mask_id] * k)
            decoded_at.extend([-1] * k)
            blocks.append("full" if not blocks or over(frac(len(blocks) - 1), cfg.tau_act) else "semi")

        add_block()
        while True:
            upto = len(seq)
            ids = torch.tensor([seq[cached:upto]])
            if use_cache:
                out, kv_new = model(ids, full_mask[cached:upto, :upto], start=cached, past=kv, return_kv=True)
                logits = torch.cat([prev, out[:, :-1]], dim=1) if shift else out
            else:
                out, kv_new = model(torch.tensor([seq[:upto]]), full_mask[:upto, :upto], return_kv=True)
                logits = aligned(out, shift)[:, cached:]
                out = out[:, cached:]
            passes += 1
            states.append(list(blocks))
            # cache the blocks that were complete before this pass (their inputs were final)
            n_cache = 0
            for b, st in enumerate(blocks):
                if st == "done" and all(s == "cached" for s in blocks[:b]):
                    blocks[b], n_cache = "cached", n_cache + 1
            if n_cache:
                new_cached = p + sum(1 for s in blocks if s == "cached") * k
                kv = [(kk[:, :, :new_cached], vv[:, :, :new_cached]) for kk, vv in kv_new]
                prev = out[:, new_cached - 1 - cached : new_cached - cached]
            probs = _probs(logits[0], mask_id)
            conf, top = probs.max(-1)
            for b, st in enumerate(blocks):
                if st not in ("semi", "full"):
                    continue
                lo = p + b * k
                masked = [i for i in range(lo, lo + k) if seq[i] == mask_id]
                rel = [i - cached for i in masked]
                accept = [i for i, r in zip(masked, rel, strict=True) if conf[r] > cfg.tau_conf]
                if not accept and st == "full" and masked:
                    accept = [max(masked, key=lambda i: float(conf[i - cached]))]
                for i in accept:
                    seq[i] = int(top[i - cached])
                    decoded_at[i - p] = passes - 1
            for b, st in enumerate(blocks):
                if st in ("semi", "full") and frac(b) == 1.0:
                    blocks[b] = "done"
                if st == "semi" and b > 0 and over(frac(b - 1), cfg.tau_act):
                    blocks[b] = "full" if blocks[b] == "semi" else blocks[b]
            cached = p + sum(1 for s in blocks if s == "cached") * k
            gen = seq[p:]
            ended = eos_id in gen
            if ended:
                last = gen.index(eos_id) // k
                if all(s in ("done", "cached") for s in blocks[: last + 1]):
                    break
            elif all(s in ("done", "cached") for s in blocks) and len(blocks) >= n_blocks_max:
                break
            if not ended and len(blocks) < n_blocks_max and over(frac(len(blocks) - 1), cfg.tau_add):
                add_block()
            if passes > 4 * cfg.max_new + 8:  # every pass fills at least one token of a fully active block
                raise RuntimeError("D2F decoding did not converge")
    out = _trim(seq[p:], eos_id)
    return DecodeResult("d2f", out, passes, time.perf_counter() - t0, decoded_at[: len(out)], states, decoded_at)


def _share(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` near-equal integers, the larger first."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def vanilla_decode(model: DiffusionLM, prompt: list[int], mask_id: int, eos_id: int, length: int = 64,
                   steps: int = 64, block: int | None = None) -> DecodeResult:
    """Bidirectional full-recompute decoding: ``steps`` passes, each filling the most confident masked positions
    (low-confidence remasking without revisiting filled tokens). ``block=None``: ``length / steps`` positions per pass
    over the whole length. ``block=k`` (LLaDA's semi-autoregressive remasking): the length is cut into blocks of k
    decoded left to right, the steps shared among the blocks and each block's positions among its steps; positions
    after the current block stay masked but are seen (bidirectional attention)."""
    if not 1 <= steps <= length:
        raise InputError(f"steps must be between 1 and the length ({length}), got {steps}.")
    spans = [(0, length)] if block is None else [(b, min(b + block, length)) for b in range(0, length, block)]
    if steps < len(spans):
        raise InputError(f"steps ({steps}) must be at least the number of blocks ({len(spans)}).")
    plan = [(lo, hi, n) for (lo, hi), s in zip(spans, _share(steps, len(spans)), strict=True)
            for n in _share(hi - lo, s)]
    p = len(prompt)
    seq = torch.tensor([list(prompt) + [mask_id] * length])
    decoded_at = [-1] * length
    t0 = time.perf_counter()
    mask = bidirectional_mask(p + length)
    with torch.inference_mode():
        for s, (lo, hi, n) in enumerate(plan):
            probs = _probs(aligned(model(seq, mask), model.cfg.shift)[0, p:], mask_id)
            conf, top = probs.max(-1)
            conf = conf.masked_fill(seq[0, p:] != mask_id, -1.0)
            for i in conf[lo:hi].topk(n).indices.tolist():
                seq[0, p + lo + i] = top[lo + i]
                decoded_at[lo + i] = s
    out = _trim(seq[0, p:].tolist(), eos_id)
    name = f"vanilla_{steps}" if block is None else f"vanilla_blocks{block}_{steps}"
    return DecodeResult(name, out, steps, time.perf_counter() - t0, decoded_at[: len(out)], grid_at=decoded_at)


def threshold_decode(model: DiffusionLM, prompt: list[int], mask_id: int, eos_id: int, length: int = 64,
                     tau_conf: float = 0.9) -> DecodeResult:
    """Cache-free parallel decoding: each bidirectional pass fills every masked position above ``tau_conf``
    (at least the most confident one)."""
    p = len(prompt)
    seq = torch.tensor([list(prompt) + [mask_id] * length])
    decoded_at = [-1] * length
    mask = bidirectional_mask(p + length)
    t0, passes = time.perf_counter(), 0
    with torch.inference_mode():
        while bool((seq[0, p:] == mask_id).any()):
            probs = _probs(aligned(model(seq, mask), model.cfg.shift)[0, p:], mask_id)
            passes += 1
            conf, top = probs.max(-1)
            open_ = seq[0, p:] == mask_id
            conf = conf.masked_fill(~open_, -1.0)
            pick = ((conf > tau_conf) & open_).nonzero().flatten().tolist() or [int(conf.argmax())]
            for i in pick:
                seq[0, p + i] = top[i]
                decoded_at[i] = passes - 1
    out = _trim(seq[0, p:].tolist(), eos_id)
    return DecodeResult("threshold", out, passes, time.perf_counter() - t0, decoded_at[: len(out)],
                        grid_at=decoded_at)
