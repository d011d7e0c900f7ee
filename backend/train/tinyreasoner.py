"""``python -m backend.train tinyreasoner``: train the shared tiny reasoning LM (``assets/tinyreasoner.safetensors``).

Data: problems of :mod:`backend.reasoning.tasks`, split ``train`` (training templates, operands 1-20), 1 to 5
operations, drawn fresh every step from data seed ``1000 + step`` (no example is reused; the held-out splits use other
templates / number ranges and other seed offsets). Each example is
``<bos>Question: ... <think> step ; step </think> answer<eos>``; the loss is next-token cross-entropy on the part after
the question (the prompt is not a target). AdamW (lr 1e-3, betas 0.9/0.95, weight decay 0.1), linear warm-up of 200
steps then cosine decay to 1e-4, 6,000 steps of batch 16 (about 45 minutes on one quiet core), gradient clipping at 1.

Quality (greedy decoding, exact final answer) is measured at the end on 200 problems of each split (``train`` with a
fresh seed, ``heldout_numbers``, ``heldout_templates``, ``heldout``) and stored in the file's metadata and in its
manifest row. ``--minutes`` stops training at a time limit (the schedule is laid out for ``--steps``); the default
settings finish on one CPU core in under an hour. ``--out`` writes elsewhere (a smoke test: ``--steps 20 --out F``).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import asdict
from pathlib import Path


def cosine_lr(step: int, total: int, peak: float, warmup: int = 200, floor: float = 1e-4) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay from ``peak`` to ``floor`` at ``total``."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, total - warmup)
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * frac))


def _batch(tok, problems, max_len: int):
    import torch

    from ..models.tinyreasoner import prompt_text
    from ..reasoning.tasks import format_solution

    rows, masks = [], []
    for p in problems:
        prompt = tok.encode(prompt_text(p.question), bos=True)
        target = tok.encode(" " + format_solution(p)) + [tok.eos_token_id]
        ids = (prompt + target)[:max_len]
        rows.append(ids)
        masks.append(([0] * len(prompt) + [1] * len(target))[:max_len])
    T = max(len(r) for r in rows)
    x = torch.full((len(rows), T), tok.pad_token_id, dtype=torch.long)
    m = torch.zeros((len(rows), T), dtype=torch.bool)
    for i, (r, k) in enumerate(zip(rows, masks, strict=True)):
        x[i, : len(r)] = torch.tensor(r)
        m[i, : len(k)] = torch.tensor(k, dtype=torch.bool)
    return x, m


def evaluate(reasoner, split: str, n: int = 200, seed: int = 0, steps=(1, 5)) -> float:
    """Exact-answer accuracy of greedy decoding on ``n`` problems of ``split``."""
    from ..reasoning.tasks import MARKERS, extract_answer, generate

    probs = generate(n, split, seed=seed, steps=steps)
    ok = sum(extract_answer(reasoner.generate(p.question), MARKERS["tinyreasoner"]) == p.answer for p in probs)
    return ok / max(1, n)


def main(argv: list[str] | None = None) -> int:
    import torch
    import torch.nn.functional as F

    from .. import weights
    from ..models.tinyreasoner import WEIGHTS, TinyReasoner, TinyReasonerConfig, base_vocab, build
    from ..reasoning.tasks import generate

    ap = argparse.ArgumentParser(prog="python -m backend.train tinyreasoner")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--minutes", type=float, default=0.0, help="stop after this many minutes (0: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-n", type=int, default=200)
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    cfg = TinyReasonerConfig()
    vocab = base_vocab()
    model, tok = build(cfg, vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    warm, floor = 200, 1e-4
    t0, done, last = time.perf_counter(), 0, 0.0
    model.train()
    for step in range(args.steps):
        lr = cosine_lr(step, args.steps, args.lr, warm, floor)
        for g in opt.param_groups:
            g["lr"] = lr
        x, m = _batch(tok, generate(args.batch, "train", seed=1000 + step, steps=(1, 5)), cfg.max_positions)
        logits = model(input_ids=x).logits[:, :-1]
        tgt = x[:, 1:].masked_fill(~m[:, 1:], -100)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        done = step + 1
        last = 0.98 * last + 0.02 * float(loss.detach()) if step else float(loss.detach())
        if step % 100 == 0:
            print(f"step {step} loss {last:.4f} lr {lr:.2e} {time.perf_counter() - t0:.0f}s", flush=True)
        if args.minutes and time.perf_counter() - t0 > 60 * args.minutes:
            break
    train_s = time.perf_counter() - t0
    model.eval()
    reasoner = TinyReasoner(model, tok, cfg, {})
    quality = {f"accuracy_{s}": round(evaluate(reasoner, s, args.eval_n, seed=777), 4)
               for s in ("train", "heldout_numbers", "heldout_templates", "heldout")}
    quality.update({"eval_n": args.eval_n, "eval_seed": 777, "eval_ops": [1, 5], "steps": done,
                    "train_seconds": round(train_s, 1), "final_loss": round(last, 4),
                    "command": "python -m backend.train tinyreasoner (quality measured at the end of training)"})
    print(quality, flush=True)
    command = "python -m backend.train tinyreasoner" + (f" --steps {args.steps}" if args.steps != 6000 else "")
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    weights.save(args.out, state, config=asdict(cfg), command=command,
                 data_seeds={"train": [1000, 1000 + done], "split": "train", "ops": [1, 5]},
                 quality=quality, extra={"vocab": vocab, "parameters": sum(p.numel() for p in model.parameters())})
    print(f"wrote {args.out}")
    return 0
