"""``python -m backend.train d2f``: train the D2F models on the reasoning-task generator.

Writes ``assets/d2f_teacher.safetensors`` (a bidirectional masked-diffusion LM) and ``assets/d2f_student.safetensors``
(the block-causal D2F student distilled from it), both :class:`backend.reasoning.d2f.diffusion_lm.DiffusionLM` with the
tiny reasoner's architecture and vocabulary (``<mask>`` included). The teacher starts from the autoregressive tiny
reasoner's weights (``assets/tinyreasoner.safetensors``, ``python -m backend.train tinyreasoner``; run that first) and
keeps its shifted prediction, as Dream (the teacher of D2F-Dream) starts from Qwen2.5; the tiny reasoner itself is
the same-size, same-data AR baseline.

Data: ``train`` split of :mod:`backend.reasoning.tasks`, 1-5 operations, fresh problems per step (data seed
``1000 + step``); each example is the prompt ``<bos>Question: ... <think>`` followed by the target
``step ; step </think> answer<eos>`` padded with ``<eos>`` to ``--length`` positions (the fixed generation length of
diffusion decoding). ``--length 160`` holds every target of this mix: over the 48,000 problems the teacher draws
(seeds 1,000-3,999, 16 each) the target is 68.8 tokens on average, 154 at the 99th percentile and 155 at most (21 %
exceed 96).

1. Teacher (masked diffusion, the LLaDA objective): each target position is masked with a probability r; loss =
   mean cross-entropy over the masked positions (position j predicted from the output at j - 1); ``--weighting
   elbo`` weights each by 1 / r as in LLaDA's bound instead (its higher gradient variance erodes the arithmetic the
   AR initialisation brings at this scale); the prompt is never masked; bidirectional attention. Two choices keep
   the AR model's arithmetic through the adaptation (40 unseen problems of the training distribution, after 3,000
   steps: with uniform ratios and an immediate switch, ``--mono-frac 0 --anneal 0``, the teacher decoded strictly
   left to right solves 0.125 and with vanilla decoding at 96 steps 0.15; with ``--mono-frac 0.8 --anneal 750``
   0.65 and 0.35; the AR model itself about 0.9):
   - the ratios: per example, with probability ``--mono-frac`` block-wise monotone ratios (per block of ``--block``
     tokens, sorted draws from U(0, 1), the noise pattern of D2F's training and of any left-to-right decoding),
     otherwise one ratio r ~ U(0.05, 1) for every position (LLaDA). With uniform ratios alone a masked result is
     mostly predictable from the clean tokens after it, and the model learns to copy it back instead of computing it;
   - attention-mask annealing (DiffuLLaMA, the AR-to-diffusion adaptation): for the first ``--anneal`` steps the
     attention is causal plus each other query-key pair with probability step / anneal, then bidirectional.
2. Student (D2F's asymmetric distillation): initialised from the teacher; the target is cut into blocks of
   ``--block`` tokens with mask ratios increasing monotonically across blocks (per example, sorted draws from
   U(``--ratio-lo``, ``--ratio-hi``), default [0.2, 0.7]); the teacher sees the whole noisy sequence with
   bidirectional attention, the student the same with block-causal attention; loss (``--loss official``, the
   released ``D2F-train/utils/loss.py`` with self-alignment) = mean over masked positions of the cross-entropy of the
   student against the teacher's probabilities, each weighted by 1 / its mask probability, with no ground-truth
   term; ``--loss kl``: KL(p_student || p_teacher) (the direction the paper writes) plus the masked cross-entropy
   against the true tokens, unweighted.

AdamW (lr 2e-4 teacher, 1e-4 student, warm-up 200 steps, cosine), batch 16; 3,000 teacher and 600 student steps
(about 56 minutes on a shared core at length 160). A longer teacher is not a better start: after 5,000 steps its own semi-autoregressive
decoding improved (0.475 against 0.425 on 40 validation problems, split ``train`` seed 777) while the D2F accuracy of
its student fell to 0.25 with 600 and 0.35 with 1,800 distillation steps (0.425 from the 3,000-step teacher). The
student phase reseeds (``--seed`` + 1), so ``--teacher FILE`` (distil from a teacher written before, write only the
student) gives the student the full run would. ``--out-dir`` writes elsewhere (a smoke test: ``--teacher-steps 2 --student-steps 2 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path

from .tinyreasoner import cosine_lr


def _lr(step: int, total: int, peak: float) -> float:
    return cosine_lr(step, total, peak, warmup=200, floor=1e-5)


def make_batch(tok, problems, length: int):
    """(ids [B, P + L], prompt_len) with prompts left-padded with ``<pad>`` to one length; targets padded with
    ``<eos>`` to ``length``."""
    import torch

    from ..models.tinyreasoner import prompt_text
    from ..reasoning.tasks import format_solution

    prompts, targets = [], []
    for p in problems:
        prompts.append(tok.encode(prompt_text(p.question) + " <think>", bos=True))
        sol = format_solution(p)
        body = sol[len("<think>"):] if sol.startswith("<think>") else sol
        targets.append((tok.encode(body) + [tok.eos_token_id] * length)[:length])
    plen = max(len(x) for x in prompts)
    rows = [[tok.pad_token_id] * (plen - len(x)) + x + y for x, y in zip(prompts, targets, strict=True)]
    return torch.tensor(rows), plen


def main(argv: list[str] | None = None) -> int:
    import torch
    import torch.nn.functional as F

    from .. import weights
    from ..models.tinyreasoner import TinyTokenizer, base_vocab, load_tinyreasoner
    from ..reasoning.d2f.diffusion_lm import (
        DiffusionLM,
        aligned,
        bidirectional_mask,
        block_causal_mask,
        from_autoregressive,
        load_diffusion_lm,
    )
    from ..reasoning.tasks import generate
    from ..runtime import ASSETS

    ap = argparse.ArgumentParser(prog="python -m backend.train d2f")
    ap.add_argument("--teacher-steps", type=int, default=3000)
    ap.add_argument("--student-steps", type=int, default=600)
    ap.add_argument("--teacher-lr", type=float, default=2e-4)
    ap.add_argument("--student-lr", type=float, default=1e-4)
    ap.add_argument("--weighting", choices=("mean", "elbo"), default="mean")
    ap.add_argument("--mono-frac", type=float, default=0.8,
                    help="share of teacher examples with block-wise monotone mask ratios (the rest: one ratio)")
    ap.add_argument("--anneal", type=int, default=750,
                    help="teacher steps over which the attention anneals from causal to bidirectional")
    ap.add_argument("--ar", type=Path, default=None, help="the tiny reasoner to start from (default: the shipped one)")
    ap.add_argument("--teacher", type=Path, default=None,
                    help="distil the student from this teacher file instead of training one (only the student is written)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--length", type=int, default=160, help="generation length (target positions)")
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--loss", choices=("official", "kl"), default="official",
                    help="official: cross-entropy of the student against the teacher's probabilities over the masked "
                         "positions, each weighted by 1 / its mask probability (the released loss); kl: "
                         "KL(student || teacher) plus the ground-truth cross-entropy, unweighted")
    ap.add_argument("--ratio-lo", type=float, default=0.2)
    ap.add_argument("--ratio-hi", type=float, default=0.7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", type=Path, default=ASSETS)
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    vocab = base_vocab()
    tok = TinyTokenizer(vocab)
    mask_id = tok.index["<mask>"]
    if args.teacher is None:
        ar = load_tinyreasoner(args.ar)
        if ar.tokenizer.vocab != vocab:
            raise SystemExit("the tiny reasoner's vocabulary differs from this script's: retrain it first")
        teacher = from_autoregressive(ar.model, len(tok))
        del ar
    else:
        teacher, extra = load_diffusion_lm(args.teacher)
        if extra.get("vocab") != vocab or (extra.get("length"), extra.get("block")) != (args.length, args.block):
            raise SystemExit(f"{args.teacher} was trained with another vocabulary, --length or --block")
    cfg = teacher.cfg

    def noisy(ids, plen, ratios):
        """Mask target positions with per-position probabilities ``ratios`` [B, L]."""
        tgt = ids[:, plen:]
        m = torch.rand(tgt.shape) < ratios
        x = ids.clone()
        x[:, plen:] = torch.where(m, torch.full_like(tgt, mask_id), tgt)
        full = torch.zeros_like(ids, dtype=torch.bool)
        full[:, plen:] = m
        return x, full

    n_blocks = -(-args.length // args.block)
    if args.teacher is None:
        t0 = time.perf_counter()
        opt = torch.optim.AdamW(teacher.parameters(), lr=args.teacher_lr, betas=(0.9, 0.95), weight_decay=0.1)
        teacher.train()
        last = 0.0
        for step in range(args.teacher_steps):
            for g in opt.param_groups:
                g["lr"] = _lr(step, args.teacher_steps, args.teacher_lr)
            ids, plen = make_batch(tok, generate(args.batch, "train", seed=1000 + step, steps=(1, 5)), args.length)
            b = ids.shape[0]
            r = (torch.rand(b, 1) * 0.95 + 0.05).expand(-1, args.length)
            mono = torch.rand(b, n_blocks).sort(dim=1).values.repeat_interleave(args.block, dim=1)[:, : args.length]
            r = torch.where(torch.rand(b, 1) < args.mono_frac, mono, r)
            x, m = noisy(ids, plen, r)
            t_len = x.shape[1]
            attn = bidirectional_mask(t_len)
            if step < args.anneal:  # causal, plus each other pair with probability step / anneal
                attn = torch.tril(attn) | (torch.rand(t_len, t_len) < step / args.anneal)
            logits = aligned(teacher(x, _key_mask(attn, x == tok.pad_token_id)), cfg.shift)
            if not m.any():
                continue
            ce = F.cross_entropy(logits[m], ids[m], reduction="none")
            if args.weighting == "elbo":
                ratio = torch.zeros(ids.shape)
                ratio[:, plen:] = r
                loss = (ce / ratio[m]).sum() / (b * args.length)
            else:
                loss = ce.mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(teacher.parameters(), 1.0)
            opt.step()
            last = 0.98 * last + 0.02 * float(loss.detach()) if step else float(loss.detach())
            if step % 100 == 0:
                print(f"teacher {step} loss {last:.4f} {time.perf_counter() - t0:.0f}s", flush=True)
        teacher_s = time.perf_counter() - t0
    else:
        teacher_s = None
    teacher.eval()
    torch.manual_seed(args.seed + 1)  # the student's draws do not depend on how the teacher was made

    student = DiffusionLM(cfg)
    student.load_state_dict(teacher.state_dict())
    student.train()
    opt = torch.optim.AdamW(student.parameters(), lr=args.student_lr, betas=(0.9, 0.95), weight_decay=0.1)
    t1 = time.perf_counter()
    for step in range(args.student_steps):
        for g in opt.param_groups:
            g["lr"] = _lr(step, args.student_steps, args.student_lr)
        ids, plen = make_batch(tok, generate(args.batch, "train", seed=500_000 + step, steps=(1, 5)), args.length)
        r = torch.rand(ids.shape[0], n_blocks) * (args.ratio_hi - args.ratio_lo) + args.ratio_lo
        r = r.sort(dim=1).values.repeat_interleave(args.block, dim=1)[:, : args.length]
        x, m = noisy(ids, plen, r)
        pad = x == tok.pad_token_id  # left padding of prompts: never attended to
        with torch.no_grad():
            pt = torch.log_softmax(aligned(teacher(x, _key_mask(bidirectional_mask(x.shape[1]), pad)), cfg.shift), -1)
        ls = torch.log_softmax(aligned(student(x, _key_mask(block_causal_mask(x.shape[1], plen, args.block), pad)),
                                       cfg.shift), -1)
        if args.loss == "official":  # cross-entropy against the teacher's probabilities, weighted by 1 / p_mask
            ratio = torch.ones(ids.shape, dtype=r.dtype)
            ratio[:, plen:] = r
            xent = -(pt.exp() * ls).sum(-1)[m] / ratio[m]
            kl, ce = xent, torch.zeros(())
            loss = xent.mean()
        else:
            kl = (ls.exp() * (ls - pt)).sum(-1)[m]
            ce = F.nll_loss(ls[m], ids[m])
            loss = kl.mean() + ce
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            print(f"student {step} {args.loss} {float(kl.mean().detach()):.4f} ce {float(ce.detach()):.4f} "
                  f"{time.perf_counter() - t1:.0f}s",
                  flush=True)
    student_s = time.perf_counter() - t1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    common = {"config": asdict(cfg), "extra": {"vocab": vocab, "length": args.length, "block": args.block}}
    if teacher_s is not None:
        weights.save(args.out_dir / "d2f_teacher.safetensors", teacher.state_dict(),
                     command="python -m backend.train d2f", data_seeds={"train": [1000, 1000 + args.teacher_steps]},
                     quality={"train_seconds": round(teacher_s, 1), "steps": args.teacher_steps,
                              "initialised_from": "tinyreasoner.safetensors",
                              "mono_frac": args.mono_frac, "anneal_steps": args.anneal}, **common)
    weights.save(args.out_dir / "d2f_student.safetensors", student.state_dict(),
                 command="python -m backend.train d2f", data_seeds={"train": [500_000, 500_000 + args.student_steps]},
                 quality={"train_seconds": round(student_s, 1), "steps": args.student_steps,
                          "mask_ratios": [args.ratio_lo, args.ratio_hi], "loss": args.loss}, **common)
    print(f"wrote {args.out_dir}")
    return 0


def _key_mask(mask, pad):
    """[B, 1, T, T] boolean attention mask: ``mask`` [T, T] without the padded keys ``pad`` [B, T] (a padded query
    still sees itself, so no row is empty)."""
    import torch

    m = mask[None] & ~pad[:, None, :]
    m = m | torch.eye(mask.shape[0], dtype=torch.bool)[None]
    return m[:, None]
