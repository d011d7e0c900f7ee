"""``python -m backend.train illava``: train the tiny VLM's projector (DINOv2 ViT-S/14 -> MLP -> SmolLM2-135M) and
LoRA adapters on the language model.

Writes ``assets/illava_projector.safetensors``: the projector (two-layer GELU MLP 384 -> 576 -> 576, 0.55 M
parameters) and, in the same file, LoRA adapters (rank ``--lora-rank``) on the q/v projections of SmolLM2's 30
decoder layers (0.46 M parameters at rank 8), float32; settings and final training accuracy in the file's metadata.

Recipe (our CPU miniature of LLaVA's two stages; DINOv2 and SmolLM2's own weights stay frozen):

1. ``--n-train`` procedural training scenes (:mod:`backend.tokens.illava.scenes`, seeds 0..n-1, 224 px) are encoded
   once by DINOv2 into 256 patch tokens each, cached as float16 in the user cache (``runtime.cache_dir()``, not the
   repo).
2. Grounding (``--align-steps``, projector only, no LM pass; a conditioning step of our miniature, not in LLaVA): each
   patch token is regressed (MSE) onto the LM input embeddings of what the patch shows: half the sum of its object's
   four attribute words (``" red" + " circle" + " left" + " top"``), or ``" background"``, mixed by the share of the
   patch the object covers. This puts the projector's output at the scale and in the space of word embeddings before
   the LM sees it (the untrained MLP's outputs are about 4x larger than any word embedding).
3. Answers (``--steps``): each LM pass holds ``--batch`` scenes; each scene carries up to ``--questions`` of the
   questions the templates can ask about it (:func:`scenes.training_questions`: colour of every unique shape, shape
   of every unique colour, the count, left/right and top/bottom of every object, "is there" for present and absent
   pairs; every type that applies at least once). They share the image tokens but not each other: a tree attention
   mask (:func:`branch_batch`) lets each question see ``"Image:" <image tokens>`` and its own tokens only, at the
   positions it has when asked alone, so each answer is computed exactly as at test time (one question after the
   image) and no answer leaks into another question (packed as a plain multi-turn prompt instead, later turns sit at
   other positions and see earlier answers; that packing reached 0.66 teacher-forced training accuracy, 0.50
   held-out). Loss: cross-entropy of each answer restricted to its question's closed answer set (the scorer used at
   test time), plus ``--align-weight`` x the grounding loss. Trained: the projector and the LoRA adapters (a frozen
   135 M LM alone could not learn to read the image tokens: the projector-only recipe plateaued at 0.59 training
   accuracy, 0.51 held-out with chance 0.39). AdamW, 10 warm-up steps and cosine decay to 0.1 x. The LM pass runs
   under bfloat16 autocast for speed (evaluation is float32).

Default size: 1,200 scenes (DINOv2 encoding about 0.3 s per scene on one core, 0.2 MB of float16 cache per
scene), 250 grounding steps of 16 scenes, 280 answer steps of 4 scenes with up to 12 questions each (about 12,000
supervised answers). Measured on the shared 2-core
machine at nice 10 under a load of about 5: encoding 1,200 scenes 9 minutes, grounding under 2 minutes, about 10 s
per answer step (see the manifest for the shipped run's wall time). Nothing here runs in the tests; the
tests load the shipped file and measure its accuracy. A checkpoint ``illava_projector.partial.safetensors`` is
written next to the output every ``--ckpt-every`` steps and removed at the end. ``--quick`` is a smoke run (16 scenes,
5 + 3 steps) that writes into ``--out`` only.

``--init FILE`` continues from an earlier run's output; the new file's ``command`` (its :mod:`backend.weights`
metadata) is then the earlier file's command followed by this one (``... && ...``), so the chain that made the shipped
file (four runs, its row in ``assets/manifest.json``) reproduces it.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def cached_scene_tokens(vision, split: str, n: int, size: int, chunk: int = 50,  # noqa: ANN001, ANN201
                        radius_range: tuple[float, float] | None = None,
                        area_range: tuple[float, float] | None = None):
    """DINOv2 patch tokens ``[n, N, 384]`` (float16) of ``n`` scenes of ``split``, cached in chunks of ``chunk``
    scenes under ``cache_dir()/illava_tokens`` (the file name carries a non-default ``radius_range`` or an
    ``area_range``).
    Returns ``(tokens, scenes)``."""
    import torch
    from safetensors.torch import load_file, save_file

    from backend.runtime import cache_dir
    from backend.tokens.illava import scenes as sc

    folder = cache_dir() / "illava_tokens"
    folder.mkdir(parents=True, exist_ok=True)
    radius_range = tuple(radius_range or sc.RADIUS_RANGE)
    all_scenes = sc.scenes(n, split=split, size=size, radius_range=radius_range, area_range=area_range)
    tag = "" if radius_range == tuple(sc.RADIUS_RANGE) else f"_r{radius_range[0]:g}-{radius_range[1]:g}"
    if area_range is not None:
        tag = f"_a{area_range[0]:g}-{area_range[1]:g}"
    parts = []
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        path = folder / f"{split}_{size}{tag}_{start}_{stop}.safetensors"
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


GROUNDING_BACKGROUND = "background"


def grounding_targets(scene_list, embed, tokenizer, size: int, patch: int = 14):  # noqa: ANN001, ANN201
    """Per-patch targets of the grounding stage (our miniature's conditioning step, not LLaVA's recipe).

    Each object's target is half the sum of the LM's input embeddings of its four attribute words (colour, shape,
    left/right, top/bottom: ``" red" + " circle" + " left" + " top"``); the background's is the embedding of
    ``" background"``. A patch's target mixes its object's target and the background's by the share of its pixels the
    object covers. Returns ``(patch_obj [n, N] long, patch_frac [n, N], obj_targets [n, 4, d], bg [d])``."""
    import numpy as np
    import torch

    from backend.tokens.illava import scenes as sc

    def word(w: str) -> torch.Tensor:
        ids = tokenizer(" " + w, add_special_tokens=False)["input_ids"]
        return embed.weight[ids].detach().float().sum(0)

    grid = size // patch
    n = len(scene_list)
    obj = torch.zeros(n, grid * grid, dtype=torch.long)
    frac = torch.zeros(n, grid * grid)
    targets = torch.zeros(n, 4, embed.weight.shape[1])
    for i, s in enumerate(scene_list):
        for j, o in enumerate(s.objects):
            m = sc.object_pixels(o, size, size)[: grid * patch, : grid * patch]
            f = torch.from_numpy(m.reshape(grid, patch, grid, patch).mean((1, 3)).reshape(-1).astype(np.float32))
            obj[i, f > frac[i]] = j
            frac[i] = torch.maximum(frac[i], f)
            targets[i, j] = 0.5 * (word(o.color) + word(o.shape) + word(o.horizontal) + word(o.vertical))
    return obj, frac, targets, word(GROUNDING_BACKGROUND)


def grounding_batch(idx, patch_obj, patch_frac, obj_targets, bg):  # noqa: ANN001, ANN201
    """Targets ``[B, N, d]`` of scenes ``idx``."""
    import torch

    o = torch.gather(obj_targets[idx], 1, patch_obj[idx][..., None].expand(-1, -1, obj_targets.shape[-1]))
    f = patch_frac[idx][..., None]
    return f * o + (1 - f) * bg


def drop_tokens(img, k_min: float, gen):  # noqa: ANN001, ANN201
    """Token-count augmentation (``--token-drop``): every row of ``img [B, N, d]`` keeps the same number ``k`` of its
    tokens, ``k`` uniform in ``ceil(k_min N)..N``, a random subset per row kept in patch order. Returns
    ``(tokens [B, k, d], kept indices [B, k])``."""
    import torch

    b, n, _ = img.shape
    k = _keep_count(n, k_min, gen)
    keep = torch.stack([torch.randperm(n, generator=gen)[:k].sort().values for _ in range(b)])
    return _gather_rows(img, keep), keep


def _keep_count(n: int, k_min: float, gen) -> int:  # noqa: ANN001
    """The number of tokens every row of a step keeps: uniform in ``ceil(k_min n)..n``."""
    import torch

    return int(torch.randint(int(math.ceil(k_min * n)), n + 1, (), generator=gen))


def _gather_rows(img, keep):  # noqa: ANN001, ANN202
    """``img [B, N, d]`` at the indices ``keep [B, k]`` -> ``[B, k, d]``."""
    return img.gather(1, keep[..., None].expand(-1, -1, img.shape[-1]))


def share_drop_tokens(img, patch_obj, patch_frac, k_min: float, max_ratio: float, gen,  # noqa: ANN001, ANN201
                      tilt: float = 0.0):
    """Object-share augmentation (``--share-drop``): like :func:`drop_tokens` every row of ``img [B, N, d]`` keeps
    the same number ``k`` of its tokens (``k`` uniform in ``ceil(k_min N)..N``, kept in patch order), but the
    object patches (``patch_frac [B, N] >= scenes.OBJECT_COVERAGE``, as in the diagnosis; the object of each in
    ``patch_obj [B, N]``) and the
    background patches are kept at different rates: the objects' share of the kept tokens is their share of the
    image times a factor drawn log-uniformly in ``[1 / max_ratio, max_ratio]`` per row (clipped to what the row
    has), and every object keeps at least one patch when ``k`` allows. So the share of object tokens varies both
    ways while the count, colours, shapes and positions the questions ask about stay the same. Method-agnostic: it
    uses the scene's ground-truth masks, not any reduction's ranking, and merges nothing.
    ``tilt`` T > 0 also varies WHICH patches of the objects survive: per row an exponent ``g`` uniform in
    ``[-T, T]`` makes the object patches drawn with weights ``coverage ** g`` (weighted sampling without
    replacement): ``g < 0`` favours the objects' edge patches, ``g > 0`` their interiors, ``g = 0`` is uniform (the
    default ``tilt=0`` draws exactly as before). Also symmetric and mask-based.
    Returns ``(tokens [B, k, d], kept indices [B, k], object share of the kept tokens [B])``."""
    import torch

    from backend.tokens.illava.scenes import OBJECT_COVERAGE

    b, n, _ = img.shape
    k = _keep_count(n, k_min, gen)
    rows, shares = [], []
    for r in range(b):
        is_obj = patch_frac[r] >= OBJECT_COVERAGE
        obj_idx = is_obj.nonzero().flatten()
        bg_idx = (~is_obj).nonzero().flatten()
        n_o, n_b = len(obj_idx), len(bg_idx)
        factor = math.exp((2 * float(torch.rand((), generator=gen)) - 1) * math.log(max_ratio))
        k_o = round(n_o / n * factor * k)
        k_o = min(max(k_o, k - n_b, 0), n_o, k)
        if tilt > 0:  # weighted order without replacement: key u ** (1 / w), largest first (Efraimidis-Spirakis)
            g = (2 * float(torch.rand((), generator=gen)) - 1) * tilt
            w = patch_frac[r][obj_idx].float().clamp_min(OBJECT_COVERAGE) ** g
            keys = torch.rand(n_o, generator=gen).log() / w
            obj_idx = obj_idx[keys.argsort(descending=True)]
        else:
            obj_idx = obj_idx[torch.randperm(n_o, generator=gen)]
        # one patch of every object first (so no object vanishes when k_o allows), then the others, in drawn order
        objects = patch_obj[r][obj_idx]
        first = torch.zeros(n_o, dtype=torch.bool)
        for j in objects.unique():
            first[int((objects == j).nonzero()[0])] = True
        obj_idx = torch.cat([obj_idx[first], obj_idx[~first]])[:k_o]
        bg_idx = bg_idx[torch.randperm(n_b, generator=gen)[: k - k_o]]
        rows.append(torch.cat([obj_idx, bg_idx]).sort().values)
        shares.append(k_o / k)
    keep = torch.stack(rows)
    return _gather_rows(img, keep), keep, torch.tensor(shares)


def branch_batch(seqs, spans, n_fixed: int):  # noqa: ANN001, ANN201
    """Pack scenes with several questions each into one LM pass where every question sees exactly what it sees at
    test time: the shared ``n_fixed`` tokens ("Image:" + image tokens) and its own tokens, at the positions it has
    when asked alone (a tree mask: questions do not see each other, so no answer leaks into another question).

    ``seqs``: per scene ``[L_b, d]`` (fixed part, then the questions back to back); ``spans``: per scene the
    ``(start, stop)`` of each question. Returns ``(embeds [B, L, d], allow [B, 1, L, L] bool, position_ids [B, L])``;
    padding rows attend to the first token only (no empty rows)."""
    import torch

    length = max(s.shape[0] for s in seqs)
    b_n, d = len(seqs), seqs[0].shape[-1]
    allow = torch.zeros(b_n, 1, length, length, dtype=torch.bool)
    pos = torch.zeros(b_n, length, dtype=torch.long)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    allow[:, 0, :, 0] = True
    for b, (_seq, span) in enumerate(zip(seqs, spans, strict=True)):
        allow[b, 0, :n_fixed, :n_fixed] = causal[:n_fixed, :n_fixed]
        pos[b, :n_fixed] = torch.arange(n_fixed)
        for start, stop in span:
            allow[b, 0, start:stop, :n_fixed] = True
            allow[b, 0, start:stop, start:stop] = causal[: stop - start, : stop - start]
            pos[b, start:stop] = n_fixed + torch.arange(stop - start)
    embeds = torch.stack([torch.cat([s, s.new_zeros(length - s.shape[0], d)]) for s in seqs])
    return embeds, allow, pos


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.train illava", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="output folder (default: assets/)")
    parser.add_argument("--n-train", type=int, default=1200)
    parser.add_argument("--steps", type=int, default=280)
    parser.add_argument("--questions", type=int, default=12,
                        help="questions per scene and LM pass (drawn from all the templates can ask, tree-masked)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=224, help="image size (multiple of 14)")
    parser.add_argument("--no-bf16", action="store_true", help="train the LM pass in float32 (slower)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 16 scenes, 3 steps")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: 1)")
    parser.add_argument("--lora-rank", type=int, default=8, help="LoRA rank on the LM's q/v projections (0: none)")
    parser.add_argument("--lora-alpha", type=float, default=16.0)
    parser.add_argument("--lora-lr", type=float, default=1e-3)
    parser.add_argument("--ckpt-every", type=int, default=25, help="write a checkpoint next to --out every N steps")
    parser.add_argument("--align-steps", type=int, default=250,
                        help="stage 1: steps of the per-patch grounding loss (projector only, no LM pass)")
    parser.add_argument("--align-batch", type=int, default=16)
    parser.add_argument("--align-lr", type=float, default=1e-3)
    parser.add_argument("--radius-range", default=None,
                        help="object radii of the TRAINING scenes as LOW,HIGH fractions of the side (default 0.09,0.13, "
                             "as the held-out scenes); wider ranges decouple object area from object count")
    parser.add_argument("--equal-area", default=None,
                        help="TRAINING scenes with a total object area independent of the count: the radius of one "
                             "object of the same total area is drawn in LOW,HIGH (fractions of the side) and split over "
                             "the objects (scenes.equal_area_radii; e.g. 0.1,0.2). Overrides --radius-range. Held-out "
                             "scenes keep 0.09-0.13")
    parser.add_argument("--mix-default", action="store_true",
                        help="with --equal-area: train on BOTH sets of --n-train scenes, the equal-area ones and the "
                             "default-size ones (radii 0.09-0.13, as held out): the area is a usable count cue on "
                             "half the scenes only, so fitting both needs a count read from the objects themselves")
    parser.add_argument("--token-drop", default=None,
                        help="token-count augmentation P,KMIN: in a share P of the answer steps every scene of the "
                             "step keeps only a random subset of its image tokens (the same number k, drawn uniformly "
                             "in KMIN*N..N, in patch order, fed at consecutive positions as at test time), so the LM "
                             "learns to read images from a varying number of tokens, as LLaVA-family models do "
                             "(AnyRes, pooled video frames); e.g. 0.5,0.25. Method-agnostic: no merging is simulated")
    parser.add_argument("--share-drop", default=None,
                        help="object-share augmentation P,KMIN,R[,T]: in a share P of the answer steps every scene "
                             "keeps the same random number k of its image tokens (uniform in KMIN*N..N, in patch "
                             "order, at consecutive positions) with the object patches' share of the kept tokens "
                             "scaled by a factor log-uniform in [1/R, R] (ground-truth masks; every object keeps a "
                             "patch), so the LM cannot read the count from how many tokens look like objects; "
                             "e.g. 0.5,0.25,2.5. "
                             "T > 0 also tilts which object patches survive: weights coverage**g, g uniform in "
                             "[-T, T] per scene (edges or interiors favoured, both ways). "
                             "Method-agnostic: it uses no reduction's ranking and merges nothing. "
                             "Excludes --token-drop")
    parser.add_argument("--init", default=None,
                        help="start from these weights (projector and LoRA) instead of from scratch, e.g. to "
                             "fine-tune the shipped file with --align-steps 0")
    parser.add_argument("--align-weight", type=float, default=1.0,
                        help="weight of the grounding loss during stage 2 (answer loss through the LM)")
    args = parser.parse_args(argv)

    import numpy as np
    import torch
    import torch.nn.functional as F

    from backend.models import load
    from backend.runtime import ASSETS, package_versions
    from backend.tokens.illava import scenes as sc
    from backend.tokens.illava.projector import PROJECTOR_FILE, LoRA, Projector, load_projector, save_projector
    from backend.tokens.illava.scenes import OBJECT_COVERAGE
    from backend.tokens.illava.tiny_vlm import PromptIds, question_ids

    torch.set_num_threads(args.threads or 1)
    if args.quick:
        args.n_train, args.steps, args.align_steps = 16, 3, 5
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
    radius_range = tuple(float(v) for v in args.radius_range.split(",")) if args.radius_range else sc.RADIUS_RANGE
    area_range = tuple(float(v) for v in args.equal_area.split(",")) if args.equal_area else None
    tokens, train_scenes = cached_scene_tokens(vision, "train", args.n_train, args.size, radius_range=radius_range,
                                               area_range=area_range)
    if area_range is not None:
        cov = np.array([(sc.patch_coverage(s) >= OBJECT_COVERAGE).sum() for s in train_scenes])
        cnt = np.array([len(s.objects) for s in train_scenes])
        _log("equal-area training scenes: object patches (>= 25% covered) by count "
             + ", ".join(f"{k}: {cov[cnt == k].mean():.1f}" for k in range(1, 5) if (cnt == k).any())
             + f" (correlation with the count {np.corrcoef(cnt, cov)[0, 1]:.2f})")
    if args.mix_default:
        if area_range is None:
            raise SystemExit("--mix-default needs --equal-area")
        tokens_d, scenes_d = cached_scene_tokens(vision, "train", args.n_train, args.size)
        tokens, train_scenes = torch.cat([tokens, tokens_d]), train_scenes + scenes_d
    n_scenes = len(train_scenes)
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
    init_lora, init_command = None, ""
    if args.init:
        start_from = load_projector(args.init)
        init_command = start_from.meta.command
        proj.load_state_dict(start_from.state_dict())
        proj.train()
        init_lora = start_from.lora
    command = ("python -m backend.train illava " + " ".join(argv or [])).strip()
    if init_command:  # the file trained from was made by its own command(s): the chain reproduces this file
        command = f"{init_command} && {command}"

    # Stage 1: grounding. Each patch token is regressed onto the word embeddings of what it shows.
    patch_obj, patch_frac, obj_targets, bg_target = grounding_targets(train_scenes, embed, lm.tokenizer, args.size)
    t1 = time.perf_counter()
    opt = torch.optim.AdamW(proj.parameters(), lr=args.align_lr, weight_decay=0.0)
    align_hist = []
    for step in range(args.align_steps):
        idx = torch.randint(0, n_scenes, (args.align_batch,), generator=gen)
        target = grounding_batch(idx, patch_obj, patch_frac, obj_targets, bg_target)
        loss = F.mse_loss(proj(tokens[idx].float()), target)
        for g in opt.param_groups:
            g["lr"] = args.align_lr * 0.5 * (1 + math.cos(math.pi * step / max(1, args.align_steps)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        align_hist.append(loss.item())
        if step % 250 == 0 or step == args.align_steps - 1:
            _log(f"grounding step {step + 1}/{args.align_steps} mse {sum(align_hist[-50:]) / len(align_hist[-50:]):.4f}"
                 f" (target mse of predicting zero {float(target.pow(2).mean()):.4f})")
    align_mse = sum(align_hist[-50:]) / max(1, len(align_hist[-50:]))
    _log(f"grounding stage done in {time.perf_counter() - t1:.0f} s")

    # Stage 2: answers through the LM (frozen, plus LoRA adapters on its q/v projections) and the grounding loss
    # with weight --align-weight.
    groups = [{"params": list(proj.parameters()), "lr": args.lr, "base": args.lr}]
    lora = None
    if args.lora_rank > 0:
        lora = LoRA(lm.model.model.layers, rank=args.lora_rank, alpha=args.lora_alpha)
        if init_lora is not None:
            with torch.no_grad():
                for k, v in init_lora.items():
                    if k.startswith("lora.A.") or k.startswith("lora.B."):
                        getattr(lora, k.split(".")[1])[k.split(".", 2)[2]].copy_(v)
        lora.attach(lm.model.model.layers)
        groups.append({"params": list(lora.parameters()), "lr": args.lora_lr, "base": args.lora_lr})
    opt = torch.optim.AdamW(groups, weight_decay=0.0)
    ckpt_path = out_dir / (PROJECTOR_FILE.stem + ".partial.safetensors")
    warm = min(10, args.steps)

    def lr_at(step: int, base: float) -> float:
        if step < warm:
            return base * (step + 1) / warm
        frac = (step - warm) / max(1, args.steps - warm)
        return base * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    order = torch.randperm(n_scenes, generator=gen)
    q_rng = np.random.default_rng(args.seed)
    n_fixed_full = prefix_emb.shape[0] + tokens.shape[1]  # "Image:" + image tokens, shared by every question
    token_drop = tuple(float(v) for v in args.token_drop.split(",")) if args.token_drop else None
    if token_drop is not None and not (0 <= token_drop[0] <= 1 and 0 < token_drop[1] <= 1):
        raise SystemExit("--token-drop needs P in [0, 1] and KMIN in (0, 1], e.g. 0.5,0.25")
    share_drop = tuple(float(v) for v in args.share_drop.split(",")) if args.share_drop else None
    if share_drop is not None and (token_drop is not None or len(share_drop) not in (3, 4) or min(share_drop) < 0
                                   or share_drop[0] > 1 or not 0 < share_drop[1] <= 1 or share_drop[2] < 1):
        raise SystemExit("--share-drop needs P in [0, 1], KMIN in (0, 1], R >= 1 and optionally T >= 0, e.g. "
                         "0.5,0.25,2.5 or 0.8,0.25,2.5,3, and no --token-drop")
    cursor, hist, kind_hist = 0, [], []
    for step in range(args.steps):
        t0 = time.perf_counter()
        idx = []
        for _ in range(args.batch):
            if cursor >= len(order):
                order, cursor = torch.randperm(n_scenes, generator=gen), 0
            idx.append(int(order[cursor]))
            cursor += 1
        img = proj(tokens[idx].float())  # [B, N, 576]
        img_in, n_fixed = img, n_fixed_full
        if token_drop is not None and float(torch.rand((), generator=gen)) < token_drop[0]:
            img_in, _ = drop_tokens(img, token_drop[1], gen)
            n_fixed = prefix_emb.shape[0] + img_in.shape[1]
        if share_drop is not None and float(torch.rand((), generator=gen)) < share_drop[0]:
            sel = torch.tensor(idx)
            img_in, _, _ = share_drop_tokens(img, patch_obj[sel], patch_frac[sel], share_drop[1], share_drop[2], gen,
                                              tilt=share_drop[3] if len(share_drop) > 3 else 0.0)
            n_fixed = prefix_emb.shape[0] + img_in.shape[1]
        seqs, spans, targets = [], [], []
        for b, i in enumerate(idx):
            qs = sc.training_questions(train_scenes[i], q_rng, args.questions)
            parts, span, pos = [prefix_emb, img_in[b]], [], n_fixed
            for q in qs:
                e = q_emb(q.text)
                parts.append(e)
                span.append((pos, pos + e.shape[0]))
                pos += e.shape[0]
                mask = torch.tensor([w in q.candidates for w in answer_words])
                targets.append((b, pos - 1, answer_words.index(q.answer), mask, q.kind))
            seqs.append(torch.cat(parts))
            spans.append(span)
        batch, allow, pos_ids = branch_batch(seqs, spans, n_fixed)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not args.no_bf16):
            hidden = lm.model.model(inputs_embeds=batch, attention_mask=allow, position_ids=pos_ids).last_hidden_state
        bi = torch.tensor([t[0] for t in targets])
        pi = torch.tensor([t[1] for t in targets])
        h = hidden[bi, pi].float()
        logits = h @ w_answers.T
        logits = logits.masked_fill(~torch.stack([t[3] for t in targets]), -1e9)
        y = torch.tensor([t[2] for t in targets])
        loss = F.cross_entropy(logits, y)
        if args.align_weight > 0:
            ground = grounding_batch(torch.tensor(idx), patch_obj, patch_frac, obj_targets, bg_target)
            loss = loss + args.align_weight * F.mse_loss(img, ground)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, g["base"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = float((logits.argmax(-1) == y).float().mean())
        hist.append((F.cross_entropy(logits.detach(), y).item(), acc))
        right = (logits.argmax(-1) == y).tolist()
        kind_hist.append([(t[4], ok) for t, ok in zip(targets, right, strict=True)])
        if step % 5 == 0 or step == args.steps - 1:
            recent = hist[-20:]
            per = {}
            for k, ok in (x for h in kind_hist[-20:] for x in h):
                per.setdefault(k, []).append(ok)
            _log(f"step {step + 1}/{args.steps} loss {sum(h[0] for h in recent) / len(recent):.3f} "
                 f"acc {sum(h[1] for h in recent) / len(recent):.3f} ({len(targets)} questions, "
                 f"{time.perf_counter() - t0:.1f} s/step); per type "
                 + " ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in per.items()))
        if args.ckpt_every and (step + 1) % args.ckpt_every == 0 and step + 1 < args.steps:
            save_projector(proj, ckpt_path, lora, command=command, extra={"steps_done": step + 1},
                           image_size=args.size)
    recent = hist[-20:]
    train_acc = sum(h[1] for h in recent) / len(recent) if recent else float("nan")
    training = {
        "steps": args.steps, "batch": args.batch, "questions_per_scene": args.questions,
        "question_packing": "tree mask (each question sees image only)", "lr": args.lr, "bf16": not args.no_bf16,
        "align_steps": args.align_steps, "align_batch": args.align_batch, "align_lr": args.align_lr,
        "align_weight": args.align_weight, "align_mse_last50": round(align_mse, 5),
        "train_radius_range": ",".join(f"{v:g}" for v in radius_range),
        "train_equal_area": ",".join(f"{v:g}" for v in area_range) if area_range else "",
        "token_drop": args.token_drop or "", "share_drop": args.share_drop or "",
        "train_mix_default": bool(args.mix_default), "n_train_total": n_scenes, "lora_lr": args.lora_lr,
    }
    save_projector(
        proj, out_path, lora, command=command, image_size=args.size,
        data_seeds={"split": "train", "n_train_scenes": args.n_train, "scene_seeds": f"0..{args.n_train - 1}",
                    "equal_area": training["train_equal_area"], "seed": args.seed},
        quality={"train_accuracy_last20_steps": round(train_acc, 4),
                 "command": 'python -m pytest tests/backend/test_illava_vlm.py -m "not full"'},
        extra={"what": "projector of the illava tiny VLM (DINOv2 ViT-S/14 -> MLP -> SmolLM2-135M)",
               "training": training, "train_seconds": round(time.perf_counter() - t_start),
               "packages": package_versions(("torch", "transformers"))},
    )
    ckpt_path.unlink(missing_ok=True)
    _log(f"saved {out_path} ({out_path.stat().st_size / 1e6:.2f} MB); train accuracy (last 20 steps) {train_acc:.3f}; "
         f"total {time.perf_counter() - t_start:.0f} s")
    return 0
