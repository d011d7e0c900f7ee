"""``python -m backend.train tinyreasoner``: train the shared tiny reasoning LM (``assets/tinyreasoner.safetensors``).

Data: the ``grammar`` split of :mod:`backend.reasoning.tasks` (plain expressions and the five word-problem templates
in their training phrasings, operands of one or two digits, every value below
:data:`~backend.reasoning.tasks.MAX_VALUE`), drawn fresh every step from data seed ``1000 + step`` (no example is
reused; the evaluation splits use other seed offsets, and ``grammar_paraphrase`` phrasings never appear in
training). Step ``s`` holds problems of ``1 + s % 8`` operations, as many as fit in ``--tokens`` padded tokens, so
every difficulty gets the same share of tokens and short problems more examples. Each example is
``<bos>Question: ... <think> step ; step </think> answer<eos>`` with the numbers of the question and of the steps
zero-padded to four digits; the loss is next-token cross-entropy on the part after the question (the prompt is not a
target). Half of the questions (``--noise``) have their wording perturbed (:func:`word_noise`: words swapped for other
training words or random letter strings, or dropped; numbers and operators kept). AdamW (betas 0.9/0.95, weight decay 0.1), linear warm-up of 200
steps then cosine decay to 1e-4, gradient clipping at 1.

``--size`` picks the architecture (:data:`SIZES`); the shipped file is ``--size tiny`` (see its manifest row for
the command, the measured time on one core and the quality). Quality is measured at the end with greedy decoding
on ``--eval-n`` unseen problems per split and difficulty (1-4 and 5-8 operations) and stored in the file's
metadata; the sampled metrics (pass@1, pass@16, majority@16) are measured by ``python -m
backend.reasoning.reasoner_eval``. ``--minutes`` stops training at a time limit (the schedule is laid out for
``--steps``); ``--out`` writes elsewhere (a smoke test: ``--steps 20 --eval-n 0 --out F``; ``--eval-n 0`` skips the measurement);
``--device cuda`` trains on a GPU (the command in the file's metadata says so; the measurement runs on the CPU).
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from dataclasses import asdict
from pathlib import Path

#: Architectures: (layers, hidden, heads, SwiGLU width, steps of the default schedule, peak learning rate).
SIZES = {
    "tiny": (4, 192, 3, 512, 5000, 2e-3),
    "small": (4, 256, 4, 768, 3000, 1.5e-3),
}


def cosine_lr(step: int, total: int, peak: float, warmup: int = 200, floor: float = 1e-4) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay from ``peak`` to ``floor`` at ``total``."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, total - warmup)
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * frac))


def encode_example(tok, p) -> tuple[list[int], list[int]]:
    """Token ids of one training example and its loss mask (1 on the target: reasoning, answer and ``<eos>``)."""
    from ..models.tinyreasoner import prompt_text
    from ..reasoning.tasks import format_solution

    prompt = tok.encode(prompt_text(p.question), bos=True)
    target = tok.encode(" " + format_solution(p)) + [tok.eos_token_id]
    return prompt + target, [0] * len(prompt) + [1] * len(target)


@functools.cache
def training_words() -> tuple[str, ...]:
    """The words of the training phrasings (every row of :data:`~backend.reasoning.tasks.PHRASINGS` but the held-out
    last one), the names and the items: what word noise draws from, so no held-out word is ever trained on."""
    import re

    from ..reasoning.tasks import ITEMS, NAMES, PHRASINGS

    words = set(NAMES) | set(ITEMS)
    for rows in PHRASINGS.values():
        for row in rows[:-1]:
            for piece in row.values():
                words.update(re.findall(r"[A-Za-z]{2,}", re.sub(r"\{\w+\}", " ", piece)))
    return tuple(sorted(words))


def word_noise(question: str, rng, words: tuple[str, ...], p_replace: float = 0.10, p_spell: float = 0.08,
               p_drop: float = 0.05) -> str:
    """``question`` with each word of two or more letters replaced by a random training word (``p_replace``), by a
    random string of 2-9 letters (``p_spell``: the tokenizer spells it letter by letter, as it spells every word it
    was not built with) or dropped (``p_drop``); numbers, operators and punctuation are kept. Trains the model to
    read a question by its numbers and structure rather than by one fixed wording (the held-out phrasings use words
    it never saw)."""
    import re
    import string

    def swap(m):
        u = rng.random()
        if u < p_drop:
            return ""
        if u < p_drop + p_replace:
            return rng.choice(words)
        if u < p_drop + p_replace + p_spell:
            return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
        return m.group()

    return re.sub(r"  +", " ", re.sub(r"[A-Za-z]{2,}", swap, question)).strip()


def make_batch(tok, step: int, tokens: int, max_len: int, noise: float = 0.5):
    """The batch of training step ``step``: problems of ``1 + step % 8`` operations (data seed ``1000 + step``),
    padded to the longest, as many as fit in ``tokens`` padded positions (at least 4). A share ``noise`` of the word
    problems and expressions has its wording perturbed by :func:`word_noise` (the target is unchanged)."""
    import dataclasses
    import random

    import torch

    from ..reasoning.tasks import generate

    k = 1 + step % 8
    pool = generate(128, "grammar", seed=1000 + step, steps=(k, k))
    rng, words = random.Random(7_000_000 + step), training_words()
    rows: list[tuple[list[int], list[int]]] = []
    longest = 0
    for p in pool:
        if rng.random() < noise:
            p = dataclasses.replace(p, question=word_noise(p.question, rng, words))
        ids, mask = encode_example(tok, p)
        ids, mask = ids[:max_len], mask[:max_len]
        if len(rows) >= 4 and max(longest, len(ids)) * (len(rows) + 1) > tokens:
            break
        rows.append((ids, mask))
        longest = max(longest, len(ids))
    x = torch.full((len(rows), longest), tok.pad_token_id, dtype=torch.long)
    m = torch.zeros((len(rows), longest), dtype=torch.bool)
    for i, (r, k_) in enumerate(rows):
        x[i, : len(r)] = torch.tensor(r)
        m[i, : len(k_)] = torch.tensor(k_, dtype=torch.bool)
    return x, m


def greedy_accuracy(reasoner, split: str, n: int, seed: int, steps: tuple[int, int], chunk: int = 50) -> float:
    """Exact-answer accuracy of greedy decoding on ``n`` problems of ``split`` (batched, KV cache)."""
    from ..reasoning.sampling import SamplingConfig, sample
    from ..reasoning.tasks import MARKERS, extract_answer, generate

    probs = generate(n, split, seed=seed, steps=steps)
    cfg = SamplingConfig(n=1, max_new_tokens=reasoner.config.max_positions, temperature=0.0)
    ok = 0
    for i in range(0, n, chunk):
        part = probs[i : i + chunk]
        out = sample(reasoner, [p.question for p in part], cfg, seed=0)
        ok += sum(extract_answer(out.text[j][0], MARKERS["tinyreasoner"]) == p.answer for j, p in enumerate(part))
    return ok / max(1, n)


def main(argv: list[str] | None = None) -> int:
    import torch
    import torch.nn.functional as F

    from .. import weights
    from ..models.tinyreasoner import WEIGHTS, TinyReasoner, TinyReasonerConfig, base_vocab, build

    ap = argparse.ArgumentParser(prog="python -m backend.train tinyreasoner")
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny")
    ap.add_argument("--steps", type=int, default=0, help="training steps (0: the size's default)")
    ap.add_argument("--tokens", type=int, default=4096, help="padded tokens per step")
    ap.add_argument("--lr", type=float, default=0.0, help="peak learning rate (0: the size's default)")
    ap.add_argument("--minutes", type=float, default=0.0, help="stop after this many minutes (0: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-n", type=int, default=200)
    ap.add_argument("--watch", type=int, default=0, help="every this many steps, print greedy accuracy on 40 "
                    "unseen problems of 1-4 operations per split (0: never; not part of the measured quality)")
    ap.add_argument("--bf16", action="store_true", help="bfloat16 autocast for the forward pass (weights, optimiser "
                    "and loss stay float32; about 1.5x faster on a CPU with AVX512-BF16)")
    ap.add_argument("--noise", type=float, default=0.5, help="share of word problems trained with perturbed wording")
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--device", default="cpu", help="where to train (cpu, cuda); evaluation runs on the CPU")
    args = ap.parse_args(argv)

    layers, hidden, heads, inter, default_steps, default_lr = SIZES[args.size]
    total = args.steps or default_steps
    peak = args.lr or default_lr
    torch.manual_seed(args.seed)
    cfg = TinyReasonerConfig(n_layer=layers, hidden=hidden, n_head=heads, intermediate=inter)
    vocab = base_vocab()
    model, tok = build(cfg, vocab)
    model.to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=peak, betas=(0.9, 0.95), weight_decay=0.1)
    t0, done, last = time.perf_counter(), 0, 0.0
    model.train()
    for step in range(total):
        lr = cosine_lr(step, total, peak, 200, 1e-4)
        for g in opt.param_groups:
            g["lr"] = lr
        x, m = make_batch(tok, step, args.tokens, cfg.max_positions, args.noise)
        x, m = x.to(args.device), m.to(args.device)
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=args.bf16):
            logits = model(input_ids=x).logits[:, :-1].float()
        tgt = x[:, 1:].masked_fill(~m[:, 1:], -100)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        done = step + 1
        last = 0.98 * last + 0.02 * float(loss.detach()) if step else float(loss.detach())
        if step % 50 == 0:
            print(f"step {step} loss {last:.4f} lr {lr:.2e} {time.perf_counter() - t0:.0f}s", flush=True)
        if args.watch and done % args.watch == 0:
            model.eval()
            with torch.no_grad():
                probe = TinyReasoner(model, tok, cfg, {})
                accs = [greedy_accuracy(probe, split, 40, seed=555, steps=(1, 4))
                        for split in ("grammar", "grammar_paraphrase")]
            model.train()
            print(f"step {done} greedy 1-4 ops on 40 problems: grammar {accs[0]:.3f} paraphrase {accs[1]:.3f}",
                  flush=True)
        if args.minutes and time.perf_counter() - t0 > 60 * args.minutes:
            break
    train_s = time.perf_counter() - t0
    model.cpu().eval()
    reasoner = TinyReasoner(model, tok, cfg, {})
    quality: dict = {}
    with torch.no_grad():
        for split in ("grammar", "grammar_paraphrase", "train", "heldout_templates") if args.eval_n else ():
            for lo, hi in ((1, 4), (5, 8)):
                quality[f"greedy_{split}_{lo}-{hi}"] = round(
                    greedy_accuracy(reasoner, split, args.eval_n, seed=777, steps=(lo, hi)), 4)
                print(split, lo, hi, quality[f"greedy_{split}_{lo}-{hi}"], flush=True)
    quality.update({"eval_n": args.eval_n, "eval_seed": 777, "steps": done, "train_seconds": round(train_s, 1),
                    "final_loss": round(last, 4), "size": args.size,
                    "command": "python -m backend.train tinyreasoner (greedy accuracy measured at the end of training)"})
    print(quality, flush=True)
    command = "python -m backend.train tinyreasoner" + (f" --size {args.size}" if args.size != "tiny" else "")
    if args.steps:
        command += f" --steps {args.steps}"
    if args.bf16:
        command += " --bf16"
    if args.device != "cpu":
        command += f" --device {args.device}"
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    weights.save(args.out, state, config=asdict(cfg), command=command,
                 data_seeds={"train": [1000, 1000 + done], "split": "grammar", "ops": [1, 8]},
                 quality=quality, extra={"vocab": vocab, "parameters": sum(p.numel() for p in model.parameters())})
    print(f"wrote {args.out}")
    return 0
