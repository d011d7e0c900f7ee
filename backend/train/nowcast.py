"""Train the shipped nowcasting weights: ``python -m backend.train nowcast [--steps N] [--unet-steps N] ...``.

Writes (rows of assets/manifest.json):
- ``assets/nowcast_model.safetensors``: the RainPro-8-style multi-source network (ordered exceedance bins, BCE + CRPS),
  with its config, the CSI probability cut-offs chosen on validation cases, and its validation scores as metadata;
- ``assets/nowcast_unet.safetensors``: the deterministic U-Net baseline (same backbone and inputs, MSE on log1p rain);
- ``assets/nowcast_training.json``: the run's settings, loss curves, wall times and validation scores.

Data: synthetic episodes from ``backend.forecast.nowcast.synthetic`` (training seeds 1000+, validation seeds 5000+;
tests and benchmarks use seeds >= 20000, never seen in training). Each episode gives ``--windows`` cases issued one hour
apart. Augmentation: the 8 rotations/flips of the square (the world is isotropic). Modality dropout: satellite and NWP
are each hidden with probability 0.1 (flags at 0), so the same network serves radar-only uploads.

Defaults (the shipped weights): 120 episodes x 8 cases; AdamW, batch 4, one-cycle schedule peaking at 6e-3; 5000 steps
for the model, 600 for the U-Net. The model's loss is the summed BCE over the threshold ladder plus 4 x the
threshold-weighted CRPS (``--crps-weight``; with weight 1 the BCE term is ~6x larger and the CRPS the claims are scored
on barely steers training). Each step scores 8 of the 32 leads (one random lead per hour: an unbiased estimate of the
all-lead loss at a third of its cost). CSI cut-offs are picked per lead and threshold on the validation cases from
0.025 to 0.95. About 25 minutes on one thread of an idle core (0.25-0.3 s per step); about 75 minutes on a 2-core
machine shared with 8 other jobs. The first run adds ~5 minutes of data generation; ``--data-cache FILE.npz`` keeps
the generated episodes for reruns (same data); ``--resume`` reuses the model checkpoint of an interrupted run of the
same command.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def build_episodes(seeds: list[int], windows: int, log=print) -> dict[str, np.ndarray]:
    """Generate episodes: frames (E, 4*windows+32, H, W) f16, satellite (E, windows, 2, H, W) f16,
    nwp (E, windows, 9, H, W) f16 (hourly NWP already upsampled to the radar grid)."""
    from backend.forecast.nowcast.synthetic import make_cases, upsample

    frames, sats, nwps = [], [], []
    t = time.perf_counter()
    for j, seed in enumerate(seeds):
        cases = make_cases(seed, windows, stride=4)
        frames.append(np.concatenate([c.radar[:4] for c in cases] + [cases[-1].radar[4:]]).astype(np.float16))
        sats.append(np.stack([c.satellite[-2:] for c in cases]).astype(np.float16))
        nwps.append(np.stack([upsample(c.nwp, c.config.size) for c in cases]).astype(np.float16))
        if (j + 1) % 20 == 0:
            log(f"  episodes {j + 1}/{len(seeds)} ({time.perf_counter() - t:.0f} s)")
    return {"frames": np.stack(frames), "sat": np.stack(sats), "nwp": np.stack(nwps)}


def make_batch(data: dict, idx: list[tuple[int, int]], cfg, rng: np.random.Generator | None, drop: float = 0.1):
    """Inputs (B, C, H, W) and targets (B, 32, H, W) mm/h for (episode, window) pairs; random dihedral transform and
    modality dropout when ``rng`` is given."""
    import torch

    from backend.forecast.nowcast.model import build_inputs

    xs, ys = [], []
    for e, i in idx:
        fr = data["frames"][e, 4 * i: 4 * i + 4 + cfg.n_leads].astype(np.float32)
        sat = data["sat"][e, i].astype(np.float32)
        nwp = data["nwp"][e, i].astype(np.float32)
        if rng is not None:
            sat = None if rng.random() < drop else sat
            nwp = None if rng.random() < drop else nwp
        x = build_inputs(fr[:4], sat, nwp, cfg)
        y = fr[4:]
        if rng is not None:
            k, flip = int(rng.integers(4)), bool(rng.integers(2))
            x, y = np.rot90(x, k, (1, 2)), np.rot90(y, k, (1, 2))
            if flip:
                x, y = x[:, :, ::-1], y[:, :, ::-1]
        xs.append(np.ascontiguousarray(x))
        ys.append(np.ascontiguousarray(y))
    return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))


def train(kind: str, data: dict, steps: int, batch: int, lr: float, seed: int, log=print,
          input_skip: bool = True, skip_gain: float = 1.0, crps_weight: float = 1.0) -> tuple[object, list]:
    import torch

    from backend.forecast.nowcast.model import NowcastConfig, NowcastNet, ordered_loss, rain_transform

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    cfg = NowcastConfig(kind=kind, input_skip=input_skip, skip_gain=skip_gain)
    model = NowcastNet(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    n_ep, n_win = data["sat"].shape[:2]
    pairs = [(e, i) for e in range(n_ep) for i in range(n_win)]
    curve, t0, run = [], time.perf_counter(), []
    model.train()
    for step in range(steps):
        idx = [pairs[j] for j in rng.choice(len(pairs), batch, replace=False)]
        x, y = make_batch(data, idx, cfg, rng)
        out = model(x)
        if kind == "prob":
            leads = torch.from_numpy(np.arange(0, cfg.n_leads, 4) + rng.integers(0, 4, cfg.n_leads // 4))
            loss, _ = ordered_loss(out, y, cfg, crps_weight=crps_weight, leads=leads)
        else:
            loss = torch.mean((out - rain_transform(y)) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        run.append(float(loss.detach()))
        if (step + 1) % 25 == 0 or step + 1 == steps:
            curve.append({"step": step + 1, "loss": float(np.mean(run)), "s": round(time.perf_counter() - t0, 1)})
            run = []
            log(f"  {kind} step {step + 1}/{steps} loss {curve[-1]['loss']:.4f} ({curve[-1]['s']:.0f} s)")
    model.eval()
    return model, curve


def predict_batch(model, x) -> np.ndarray:
    import torch

    from backend.forecast.nowcast.model import exceedance_from_logits

    with torch.no_grad():
        out = model(x)
    if model.cfg.kind == "prob":
        return exceedance_from_logits(out, model.cfg.n_leads).numpy()
    return np.expm1(2 * np.maximum(out.numpy(), 0))


def validate(model, unet, data: dict, log=print) -> dict:
    """CSI cut-offs (per lead and threshold, maximising pooled CSI) and validation CRPS/CSI of model, U-Net, NWP."""
    from backend.forecast.nowcast.verify import crps_exceedance, exceedance_indicators

    cfg = model.cfg
    thr = np.asarray(cfg.thresholds)
    cuts = np.round(np.arange(1, 39) * 0.025, 3)  # 0.025 .. 0.95: rare, hard-to-place rain needs low cut-offs
    n_ep, n_win = data["sat"].shape[:2]
    pairs = [(e, i) for e in range(n_ep) for i in range(n_win)]
    hits = np.zeros((cfg.n_leads, len(thr), len(cuts)))
    union = np.zeros_like(hits)
    crps = {"model": np.zeros(cfg.n_leads), "unet": np.zeros(cfg.n_leads), "nwp": np.zeros(cfg.n_leads)}
    for j in range(0, len(pairs), 8):
        x, y = make_batch(data, pairs[j:j + 8], cfg, None)
        p = predict_batch(model, x)                       # (B, T, K, H, W)
        u = predict_batch(unet, x) if unet is not None else None  # (B, T, H, W)
        y = y.numpy()
        obs = exceedance_indicators(y, thr) > 0.5         # (B, T, K, H, W) bool
        for c, cut in enumerate(cuts):
            f = p >= cut
            hits[:, :, c] += (f & obs).sum(axis=(0, 3, 4))
            union[:, :, c] += (f | obs).sum(axis=(0, 3, 4))
        nwp_fine = np.stack([data["nwp"][e, i].astype(np.float32) for e, i in pairs[j:j + 8]])
        nwp_leads = np.stack([_hourly_fine_to_leads(nf, cfg.n_leads) for nf in nwp_fine])
        for name, probs in (("model", p), ("unet", None if u is None else exceedance_indicators(u, thr)),
                            ("nwp", exceedance_indicators(nwp_leads, thr))):
            if probs is None:
                continue
            crps[name] += crps_exceedance(probs, y, thr, axis=(0, 2, 3)) * len(x)
    csi = hits / np.maximum(union, 1)
    best = csi.argmax(-1)
    cutoffs = cuts[best]
    out = {"csi_cutoffs": cutoffs.round(3).tolist(),
           "val_csi_at_cutoff": np.take_along_axis(csi, best[..., None], -1)[..., 0].round(4).tolist(),
           "val_crps": {k: (v / len(pairs)).round(5).tolist() for k, v in crps.items()},
           "val_cases": len(pairs)}
    k1 = list(cfg.thresholds).index(1.0)
    log("  validation CSI at 1 mm/h, leads 1/4/8/16/32: " + " ".join(
        f"{out['val_csi_at_cutoff'][t][k1]:.3f}" for t in (0, 3, 7, 15, 31)))
    log("  validation CRPS (mean over leads): " + ", ".join(f"{k} {np.mean(v):.4f}" for k, v in out["val_crps"].items()))
    return out


def _hourly_fine_to_leads(nwp_fine: np.ndarray, n_leads: int, sph: int = 4) -> np.ndarray:
    """(9, H, W) hourly fields on the radar grid -> (n_leads, H, W), linear in time (as synthetic.nwp_to_leads)."""
    out = np.empty((n_leads,) + nwp_fine.shape[1:], np.float32)
    for lead in range(1, n_leads + 1):
        h0, frac = divmod(lead, sph)
        out[lead - 1] = (1 - frac / sph) * nwp_fine[h0] + frac / sph * nwp_fine[min(h0 + 1, len(nwp_fine) - 1)]
    return out


def data_seeds(args: argparse.Namespace) -> dict[str, str]:
    """The synthetic episodes a run trains and validates on (recorded in the weights' metadata)."""
    return {"train_episodes": f"synthetic seeds 1000-{1000 + args.episodes - 1}, {args.windows} cases each",
            "val_episodes": f"synthetic seeds 5000-{5000 + args.val_episodes - 1}, 4 cases each"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend.train nowcast", description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=120, help="training episodes (x windows cases)")
    ap.add_argument("--windows", type=int, default=8, help="cases per episode, issued 1 h apart")
    ap.add_argument("--val-episodes", type=int, default=12)
    ap.add_argument("--steps", type=int, default=5000, help="optimiser steps of the probabilistic model")
    ap.add_argument("--unet-steps", type=int, default=600, help="optimiser steps of the MSE U-Net")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=6e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ASSETS), help="folder for the weights and the training report")
    ap.add_argument("--data-cache", default=None,
                    help="optional .npz to save the generated episodes to / load them from (speeds up reruns)")
    ap.add_argument("--skip-unet", action="store_true", help="train only the probabilistic model (experiments)")
    ap.add_argument("--no-input-skip", action="store_true", help="ablation: no raw-input skip into the output head")
    ap.add_argument("--skip-gain", type=float, default=4.0, help="fixed scale of the raw inputs in the output head")
    ap.add_argument("--crps-weight", type=float, default=4.0,
                    help="weight of the threshold-weighted CRPS beside the summed BCE in the model's loss")
    ap.add_argument("--resume", action="store_true",
                    help="reuse the model checkpoint a previous run of the same command left (nowcast_model.partial)")
    args = ap.parse_args(argv)

    import torch

    from backend.forecast.nowcast.model import count_macs, count_parameters, save_model

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python -m backend.train nowcast", *(argv if argv is not None else sys.argv[1:])])
    t_all = time.perf_counter()
    log = lambda m: print(m, flush=True)
    log(f"torch threads {torch.get_num_threads()}; building {args.episodes} training episodes")
    t = time.perf_counter()
    cache = Path(args.data_cache) if args.data_cache else None
    if cache is not None and cache.is_file():
        z = np.load(cache)
        data = {k: z[k] for k in ("frames", "sat", "nwp")}
        val = {k: z["val_" + k] for k in ("frames", "sat", "nwp")}
        if data["frames"].shape[0] != args.episodes or data["sat"].shape[1] != args.windows:
            raise SystemExit(f"{cache} holds other settings; delete it or pass matching --episodes/--windows")
        log(f"loaded episodes from {cache}")
    else:
        data = build_episodes([1000 + i for i in range(args.episodes)], args.windows, log)
        val = build_episodes([5000 + i for i in range(args.val_episodes)], 4, log)
        if cache is not None:
            np.savez(cache, **data, **{"val_" + k: v for k, v in val.items()})
    t_data = time.perf_counter() - t
    log(f"data: {t_data:.0f} s, {sum(v.nbytes for v in data.values()) / 2**20:.0f} MB")
    t = time.perf_counter()
    ckpt = out / "nowcast_model.partial.safetensors"
    if args.resume and ckpt.is_file():
        from backend.forecast.nowcast.model import load_model

        model, meta = load_model(ckpt)
        curve_m, t_model = meta.extra.get("curve", []), float(meta.extra.get("seconds", 0.0))
        log(f"resumed the trained model from {ckpt}")
    else:
        model, curve_m = train("prob", data, args.steps, args.batch, args.lr, args.seed, log, not args.no_input_skip,
                               args.skip_gain, args.crps_weight)
        t_model = time.perf_counter() - t
        save_model(model, ckpt, command=command, extra={"curve": curve_m, "seconds": t_model})  # a crash later
        # loses nothing
    t = time.perf_counter()
    unet, curve_u = (None, []) if args.skip_unet else train("mse", data, args.unet_steps, args.batch, args.lr,
                                                            args.seed + 1, log, not args.no_input_skip,
                                                            args.skip_gain)
    t_unet = time.perf_counter() - t
    t = time.perf_counter()
    v = validate(model, unet, val, log)
    t_val = time.perf_counter() - t
    report = {
        "command": command,
        "args": vars(args), "seconds": {"data": round(t_data, 1), "model": round(t_model, 1), "unet": round(t_unet, 1),
                                        "validation": round(t_val, 1), "total": round(time.perf_counter() - t_all, 1)},
        "parameters": {"model": count_parameters(model), "unet": count_parameters(unet) if unet else None},
        "macs_per_pass": {"model": count_macs(model), "unet": count_macs(unet) if unet else None},
        "curves": {"model": curve_m, "unet": curve_u}, "validation": v,
        "torch_threads": torch.get_num_threads(),
    }
    seeds = data_seeds(args)
    save_model(model, out / "nowcast_model.safetensors", command=command, data_seeds={**seeds, "train_seed": args.seed},
               quality={"val_crps": v["val_crps"]["model"]},
               extra={"csi_cutoffs": v["csi_cutoffs"], "train_steps": args.steps, "crps_weight": args.crps_weight})
    if not args.skip_unet:
        save_model(unet, out / "nowcast_unet.safetensors", command=command,
                   data_seeds={**seeds, "train_seed": args.seed + 1}, quality={"val_crps": v["val_crps"]["unet"]},
                   extra={"train_steps": args.unet_steps})
    (out / "nowcast_training.json").write_text(json.dumps(report, indent=1))
    ckpt.unlink(missing_ok=True)
    log(f"done in {report['seconds']['total']:.0f} s; wrote {out}/nowcast_model.safetensors, nowcast_unet.safetensors")
    return 0
