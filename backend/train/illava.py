"""``python -m backend.train illava``: train the projector of the tiny VLM (DINOv2 ViT-S/14 -> MLP -> SmolLM2-135M).

Writes ``assets/illava_projector.safetensors`` (two-layer GELU MLP 384 -> 576 -> 576, 0.55 M parameters, float32,
2.2 MB); the settings and the final training accuracy are in the file's metadata.

Recipe (our CPU miniature of LLaVA's stage-1 projector training; both backbones stay frozen, no LoRA):

1. ``--n-train`` procedural training scenes (:mod:`backend.tokens.scenes`, seeds 0..n-1, 224 px) are encoded once by
   DINOv2 into 256 patch tokens each, cached as float16 in the user cache (``runtime.cache_dir()``, not the repo).
2. Each training sequence is one scene with all its questions as a multi-turn prompt (LLaVA packs several turns per
   image the same way): ``"Image:" <image tokens> ["\\nQ: q\\nA:" " a"] x 4-6``, turns in random order.
3. Loss: cross-entropy of the answer token restricted to the question's closed answer set (the scorer used at test
   time), at every answer position. AdamW, lr ``--lr`` with 10 warm-up steps and cosine decay, batch ``--batch``.
   The language model runs under bfloat16 autocast for speed (evaluation is float32).

Default size: 600 scenes, 150 steps of 4 scenes. Under an hour on 2 CPU cores (about 25 minutes unloaded with 2
threads). Nothing here runs in the tests; the tests load the shipped projector and check the accuracy recorded in the
manifest. ``--quick`` is a smoke run (16 scenes, 3 steps) that writes into ``--out`` only.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def cached_scene_tokens(vision, split: str, n: int, size: int, chunk: int = 50):  # noqa: ANN001, ANN201
    """DINOv2 patch tokens ``[n, N, 384]`` (float16) of ``n`` scenes of ``split``, cached in chunks of ``chunk``
    scenes under ``cache_dir()/illava_tokens``. Returns ``(tokens, scenes)``."""
    import torch
    from safetensors.torch import load_file, save_file

    from backend.runtime import cache_dir
    from backend.tokens import scenes as sc

    folder = cache_dir() / "illava_tokens"
    folder.mkdir(parents=True, exist_ok=True)
    all_scenes = sc.scenes(n, split=split, size=size)
    parts = []
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        path = folder / f"{split}_{size}_{start}_{stop}.safetensors"
        if path.is_file():
            parts.append(load_file(str(path))["tokens"])
            continue
        t0 = time.perf_counter()
        feats = []
        for i in range(start, stop, 10):
            imgs = [s.pil() for s in all_scenes[i : min(stop, i + 10)]]
            feats.append(vision.patch_features(imgs, size=size).to(torch.float16))
        tok = torch.cat(feats)
        tmp = path.with_suffix(".tmp")
        save_file({"tokens": tok.contiguous()}, str(tmp))
        os.replace(tmp, path)
        parts.append(tok)
        _log(f"encoded {split} scenes {start}-{stop} in {time.perf_counter() - t0:.1f} s")
    return torch.cat(parts), all_scenes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.train illava", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="output folder (default: assets/)")
    parser.add_argument("--n-train", type=int, default=600)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=224, help="image size (multiple of 14)")
    parser.add_argument("--no-bf16", action="store_true", help="train the LM pass in float32 (slower)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 16 scenes, 3 steps")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: 1)")
    args = parser.parse_args(argv)

    import torch
    import torch.nn.functional as F

    from backend.models import load
    from backend.runtime import ASSETS, package_versions
    from backend.tokens import scenes as sc
    from backend.tokens.tiny_vlm import PROJECTOR_FILE, Projector, PromptIds, question_ids, save_projector

    torch.set_num_threads(args.threads or 1)
    if args.quick:
        args.n_train, args.steps = 16, 3
        if args.out is None:
            raise SystemExit("--quick needs --out (it must not overwrite the shipped projector)")
    out_dir = Path(args.out) if args.out else ASSETS
    out_dir.mkdir(parents=True, exist_ok=True)
    out_path = out_dir / PROJECTOR_FILE.name

    t_start = time.perf_counter()
    vision = load("dinov2")
    lm = load("smollm2")
    for p in lm.model.parameters():
        p.requires_grad_(False)
    tokens, train_scenes = cached_scene_tokens(vision, "train", args.n_train, args.size)
    _log(f"tokens {tuple(tokens.shape)} ready after {time.perf_counter() - t_start:.0f} s")

    ids = PromptIds.build(lm.tokenizer)
    answer_words = list(sc.ALL_ANSWERS)
    answer_ids = torch.tensor([ids.answers[w] for w in answer_words])
    embed = lm.model.get_input_embeddings()
    prefix_emb = embed(torch.tensor(ids.prefix)).detach()
    w_answers = lm.model.get_output_embeddings().weight[answer_ids].detach()  # [A, 576]
    q_cache: dict[str, torch.Tensor] = {}

    def q_emb(text: str) -> torch.Tensor:
        if text not in q_cache:
            q_cache[text] = embed(torch.tensor(question_ids(lm.tokenizer, text))).detach()
        return q_cache[text]

    gen = torch.Generator().manual_seed(args.seed)
    torch.manual_seed(args.seed)
    proj = Projector(d_vision=tokens.shape[-1], d_lm=prefix_emb.shape[-1])
    opt = torch.optim.AdamW(proj.parameters(), lr=args.lr, weight_decay=0.0)
    warm = min(10, args.steps)

    def lr_at(step: int) -> float:
        if step < warm:
            return args.lr * (step + 1) / warm
        frac = (step - warm) / max(1, args.steps - warm)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    order = torch.randperm(args.n_train, generator=gen)
    cursor, hist = 0, []
    for step in range(args.steps):
        t0 = time.perf_counter()
        idx = []
        for _ in range(args.batch):
            if cursor >= len(order):
                order, cursor = torch.randperm(args.n_train, generator=gen), 0
            idx.append(int(order[cursor]))
            cursor += 1
        img = proj(tokens[idx].float())  # [B, N, 576]
        seqs, targets = [], []
        for b, i in enumerate(idx):
            qs = train_scenes[i].questions
            perm = torch.randperm(len(qs), generator=gen).tolist()
            parts = [prefix_emb, img[b]]
            pos = prefix_emb.shape[0] + img.shape[1]
            for j in perm:
                q = qs[j]
                e = q_emb(q.text)
                parts.append(e)
                pos += e.shape[0]
                mask = torch.tensor([w in q.candidates for w in answer_words])
                targets.append((b, pos - 1, answer_words.index(q.answer), mask))
                parts.append(embed.weight[ids.answers[q.answer]].detach()[None])
                pos += 1
            seqs.append(torch.cat(parts))
        length = max(s.shape[0] for s in seqs)
        batch = torch.zeros(len(seqs), length, seqs[0].shape[-1])
        batch = torch.stack([torch.cat([s, batch[0, : length - s.shape[0]]]) for s in seqs])
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not args.no_bf16):
            hidden = lm.model.model(inputs_embeds=batch).last_hidden_state
        bi = torch.tensor([t[0] for t in targets])
        pi = torch.tensor([t[1] for t in targets])
        h = hidden[bi, pi].float()
        logits = h @ w_answers.T
        logits = logits.masked_fill(~torch.stack([t[3] for t in targets]), -1e9)
        y = torch.tensor([t[2] for t in targets])
        loss = F.cross_entropy(logits, y)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = float((logits.argmax(-1) == y).float().mean())
        hist.append((loss.item(), acc))
        if step % 5 == 0 or step == args.steps - 1:
            recent = hist[-20:]
            _log(f"step {step + 1}/{args.steps} loss {sum(h[0] for h in recent) / len(recent):.3f} "
                 f"acc {sum(h[1] for h in recent) / len(recent):.3f} ({time.perf_counter() - t0:.1f} s/step)")
    recent = hist[-20:]
    train_acc = sum(h[1] for h in recent) / len(recent)
    meta = {
        "what": "projector of the illava tiny VLM (DINOv2 ViT-S/14 -> MLP -> SmolLM2-135M)",
        "command": "python -m backend.train illava " + " ".join(argv or []),
        "n_train_scenes": str(args.n_train), "steps": str(args.steps), "batch": str(args.batch),
        "lr": str(args.lr), "seed": str(args.seed), "image_size": str(args.size),
        "bf16": str(not args.no_bf16), "train_acc_last20": f"{train_acc:.4f}",
        "train_seconds": f"{time.perf_counter() - t_start:.0f}",
        "packages": str(package_versions(("torch", "transformers"))),
    }
    save_projector(proj, out_path, meta)
    _log(f"saved {out_path} ({out_path.stat().st_size / 1e6:.2f} MB); train accuracy (last 20 steps) {train_acc:.3f}; "
         f"total {time.perf_counter() - t_start:.0f} s")
    return 0
