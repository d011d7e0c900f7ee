"""Train the TinyHiDDeN watermark shipped for the attribution page: ``python -m backend.train attribution``.

Writes ``assets/attribution_tinyhidden.safetensors`` (weights + config in the metadata) and
``assets/attribution_tinyhidden_train.json`` (settings, loss curve, held-out checks). Data: scikit-image's training
photos (``backend.watermark.datasets.TRAIN_PHOTOS``) and procedural images; the held-out photos and procedural seeds are
never used here. One torch thread; the default schedule takes well under an hour on two CPU cores.

Each step: draw a batch at a random full resolution (128-256 px), embed random messages (residual computed at 64 px,
upsampled, scaled to the PSNR budget), pass the result through a random chain of noise layers (crop, resize,
brightness/contrast, blur, noise, straight-through JPEG) and decode. Loss = message BCE + ``ssim_weight`` x (1 - SSIM).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from backend.runtime import ASSETS, seed_everything

if TYPE_CHECKING:
    import torch


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m backend.train attribution", description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=1800)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-bits", type=int, default=64)
    p.add_argument("--arch", default="tile", choices=["tile", "frame"],
                   help="tile: periodic code + crop synchronisation (shipped); frame: plain position-aware read-out")
    p.add_argument("--period", type=int, default=16)
    p.add_argument("--scale-jitter", type=float, default=0.0, help="relative error of the fold scale in training")
    p.add_argument("--size", type=int, default=64, help="working resolution of encoder and decoder")
    p.add_argument("--msg-grid", type=int, default=8)
    p.add_argument("--dec-pool", default="flatten", choices=["flatten", "avg"])
    p.add_argument("--enc-channels", type=int, default=16)
    p.add_argument("--enc-blocks", type=int, default=2)
    p.add_argument("--dec-channels", type=int, default=32)
    p.add_argument("--target-psnr", type=float, default=36.0)
    p.add_argument("--psnr-start-gap", type=float, default=14.0,
                   help="start this many dB below the target (a strong residual) and anneal during the warm-up")
    p.add_argument("--psnr-jitter", type=float, default=1.5, help="train at target +- jitter dB")
    p.add_argument("--ssim-weight", type=float, default=0.1)
    p.add_argument("--warmup", type=float, default=0.25,
                   help="fraction of the steps over which noise layers and the SSIM term ramp in")
    p.add_argument("--sides", type=int, nargs="+", default=[96, 128, 160], help="full resolutions of training batches")
    p.add_argument("--p-crop", type=float, default=0.45, help="probability of a random crop in the noise layer")
    p.add_argument("--crop-min-area", type=float, default=0.55, help="smallest area fraction a training crop keeps")
    p.add_argument("--procedural", type=int, default=400)
    p.add_argument("--eval-every", type=int, default=300)
    p.add_argument("--out", type=Path, default=ASSETS / "attribution_tinyhidden.safetensors")
    p.add_argument("--time-limit-min", type=float, default=55.0, help="stop early (and save) after this many minutes")
    p.add_argument("--stop-after", type=int, default=None,
                   help="stop (and save) after this step; the learning-rate schedule still spans --steps")
    return p


def sample_batch(photos: list[np.ndarray], procedural: list[np.ndarray], rng: np.random.Generator, b: int,
                 side: int) -> torch.Tensor:
    import torch

    from backend.watermark.datasets import random_crop

    out = []
    for _ in range(b):
        src = photos[rng.integers(len(photos))] if rng.random() < 0.45 else procedural[rng.integers(len(procedural))]
        img = random_crop(src, rng, side, min_frac=0.2)
        if rng.random() < 0.5:
            img = img[:, ::-1]
        out.append(np.ascontiguousarray(img))
    return torch.from_numpy(np.stack(out)).permute(0, 3, 1, 2).float() / 255.0


def quick_eval(model, images: list[np.ndarray], seed: int = 0) -> dict[str, float]:
    """Bit accuracy on held-out images through the real pipeline (uint8 round trip, numpy attacks)."""
    import torch

    from backend.watermark.attacks import apply_chain
    from backend.watermark.learned import to_tensor, to_uint8
    from backend.watermark.metrics import psnr

    rng = np.random.default_rng(seed)
    attacks = ["none", "jpeg:50", "resize:0.5", "crop:0.25", "jpeg:50+resize:0.5+crop:0.25", "noise:8", "blur:5"]
    acc = {a: [] for a in attacks}
    psnrs = []
    model.eval()
    with torch.no_grad():
        for i, img in enumerate(images):
            bits = rng.integers(0, 2, (1, model.cfg.n_bits)).astype(np.float32)
            wm = to_uint8(model.embed(to_tensor(img), torch.from_numpy(bits)))
            psnrs.append(psnr(img, wm))
            for a in attacks:
                att = apply_chain(wm, a, seed=seed * 1000 + i)
                dec = (model.decode_logits(to_tensor(att)) > 0).float().numpy()
                acc[a].append(float((dec == bits).mean()))
    model.train()
    res = {f"bitacc/{a}": round(float(np.mean(v)), 4) for a, v in acc.items()}
    res["psnr_mean"] = round(float(np.mean(psnrs)), 2)
    return res


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import torch
    import torch.nn.functional as F

    from backend.watermark import learned
    from backend.watermark.attacks import noise_layer
    from backend.watermark.datasets import heldout_images, train_bank
    from backend.watermark.metrics import ssim_torch

    seed_everything(args.seed)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    photos, procedural = train_bank(args.procedural, 256, seed=args.seed)
    val_images = heldout_images(12, seed=99, min_side=128, max_side=384)
    print(f"data: {len(photos)} photos + {len(procedural)} procedural images in {time.time() - t0:.1f} s", flush=True)

    if args.arch == "tile":
        cfg = learned.TileHiDDeNConfig(n_bits=args.n_bits, size=args.size, period=args.period,
                                       target_psnr=args.target_psnr)
        model = learned.TileHiDDeN(cfg)
    else:
        cfg = learned.TinyHiDDeNConfig(n_bits=args.n_bits, size=args.size, msg_grid=args.msg_grid,
                                       enc_channels=args.enc_channels, enc_blocks=args.enc_blocks,
                                       dec_channels=args.dec_channels, target_psnr=args.target_psnr,
                                       dec_pool=args.dec_pool)
        model = learned.TinyHiDDeN(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.05)
    history: list[dict[str, float]] = []
    evals: list[dict[str, float]] = []
    run_bce = run_acc = run_ssim = 0.0
    start = time.time()
    step = 0
    for step in range(1, args.steps + 1):
        side = int(rng.choice(args.sides))
        x = sample_batch(photos, procedural, rng, args.batch, side)
        bits = torch.from_numpy(rng.integers(0, 2, (args.batch, cfg.n_bits)).astype(np.float32))
        warm = min(1.0, step / max(1.0, args.warmup * args.steps))  # curriculum: budget, noise and SSIM ramp in
        psnr_t = args.target_psnr - args.psnr_start_gap * (1 - warm) + rng.uniform(-args.psnr_jitter,
                                                                                    args.psnr_jitter)
        r = model.residual(x, bits, target_psnr=psnr_t)
        xw = (x + r).clamp(0, 1)
        y, (scale, oy, ox) = noise_layer(xw, rng, p_identity=1.0 - 0.85 * warm, p_crop=args.p_crop,
                                         min_area=args.crop_min_area, frame=cfg.size)
        if args.arch == "tile":  # the crop's scale and offset are known here: fold and read out at the true phase
            py = torch.from_numpy(np.round(oy).astype(np.int64) % cfg.period)
            px = torch.from_numpy(np.round(ox).astype(np.int64) % cfg.period)
            jitter = 1.0 + rng.uniform(-args.scale_jitter, args.scale_jitter) if args.scale_jitter > 0 else 1.0
            logits = model.decode_aligned(y, scale * jitter, py, px)
        else:
            logits = model.decode_logits(y)
        bce = F.binary_cross_entropy_with_logits(logits, bits)
        loss = bce
        if args.ssim_weight > 0:
            s = cfg.size
            ss = ssim_torch(learned.resize(xw, (s, s)), learned.resize(x, (s, s))).mean()
            loss = loss + args.ssim_weight * warm * (1 - ss)
            run_ssim = 0.98 * run_ssim + 0.02 * float(ss.detach()) if step > 1 else float(ss.detach())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        acc = float(((logits > 0).float() == bits).float().mean())
        run_bce = 0.98 * run_bce + 0.02 * float(bce.detach()) if step > 1 else float(bce.detach())
        run_acc = 0.98 * run_acc + 0.02 * acc if step > 1 else acc
        if step % 25 == 0:
            el = time.time() - start
            history.append({"step": step, "bce": round(run_bce, 4), "bitacc_noisy": round(run_acc, 4),
                            "ssim_small": round(run_ssim, 4), "seconds": round(el, 1)})
            print(f"step {step} bce {run_bce:.4f} acc {run_acc:.4f} ssim {run_ssim:.4f} "
                  f"{el / step:.2f} s/step", flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            ev = {"step": step, **quick_eval(model, val_images)}
            evals.append(ev)
            print("eval", json.dumps(ev), flush=True)
            learned.save(model, args.out.with_suffix(".ckpt.safetensors"), extra={"trained_steps": step})
        if args.stop_after is not None and step >= args.stop_after:
            print(f"stopping after step {step} (--stop-after)", flush=True)
            evals.append({"step": step, **quick_eval(model, val_images)})
            break
        if (time.time() - start) / 60 > args.time_limit_min:
            print(f"time limit reached at step {step}", flush=True)
            evals.append({"step": step, **quick_eval(model, val_images)})
            break
    model.eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    learned.save(model, args.out, command=" ".join(["python -m backend.train attribution", *(argv or [])]),
                 data_seeds={"seed": args.seed}, extra={"trained_steps": step})
    record = {
        "command": "python -m backend.train attribution " + " ".join(argv or []),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "steps_done": step,
        "train_seconds": round(time.time() - start, 1),
        "torch_threads": torch.get_num_threads(),
        "history": history,
        "heldout_checks": evals,
        "data": {"train_photos": list(__import__("backend.watermark.datasets", fromlist=["x"]).TRAIN_PHOTOS),
                 "procedural_images": args.procedural, "heldout_photos_never_used": True},
    }
    args.out.with_name(args.out.stem + "_train.json").write_text(json.dumps(record, indent=1))
    print(f"saved {args.out} after {step} steps in {time.time() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
