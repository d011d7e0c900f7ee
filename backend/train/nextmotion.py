"""``python -m backend.train nextmotion``: the motion generators (trajectory VAE + latent rectified flow), the
deterministic regressors and the retrieval bank of the "What Happens Next?" page.

Data: ``--scenes`` simulated training scenes (seeds ``[0, scenes)`` of :mod:`backend.forecast.nextmotion.world`,
each with its realised future), frozen DINOv2 ViT-S/14 patch tokens at 112 px computed once and cached. Per seed
(``--seeds``): the VAE (``--vae-steps`` AdamW steps, batch 32, Huber + beta KL), then the flow on the VAE's latent
means scaled to unit variance (``--flow-steps``), then the regressor (``--reg-steps``, MSE) whose residual spread
(per step and axis, over the training grid) sets the noise of the noisy-regressor baseline. Writes
``assets/nextmotion_gen_s<seed>.safetensors``, ``assets/nextmotion_reg_s<seed>.safetensors`` (float16 tensors) and
``assets/nextmotion_bank.safetensors`` (the mean patch token of the first 1000 training scenes, for retrieval).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from .. import weights
    from ..forecast.nextmotion.data import cached_features
    from ..forecast.nextmotion.jobs import BANK_FILE, gen_file, reg_file
    from ..forecast.nextmotion.model import FlowNet, NetConfig, Regressor, TrajVAE, flow_loss, to_channels
    from ..forecast.nextmotion.world import make_scenes

    ap = argparse.ArgumentParser(prog="python -m backend.train nextmotion")
    ap.add_argument("--scenes", type=int, default=2000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--vae-steps", type=int, default=800)
    ap.add_argument("--flow-steps", type=int, default=1500)
    ap.add_argument("--reg-steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    scenes = make_scenes(range(args.scenes))
    tokens = cached_features("train", scenes)
    traj = torch.from_numpy(np.stack([s.future for s in scenes]))
    x_all = to_channels(traj)
    print(f"data {tuple(tokens.shape)} {tuple(x_all.shape)} in {time.perf_counter() - t0:.0f}s", flush=True)
    cfg = NetConfig()
    out = args.out_dir or weights.ASSETS
    n = x_all.shape[0]
    cmd = "python -m backend.train nextmotion"
    data_seeds = {"train": [0, args.scenes]}

    def half(sd: dict) -> dict:
        return {k: v.detach().to(torch.float16).contiguous() for k, v in sd.items()}

    def batches(seed: int, steps: int):
        g = torch.Generator().manual_seed(seed)
        for _ in range(steps):
            yield torch.randint(0, n, (args.batch,), generator=g), g

    def fit(model, loss_fn, steps: int, seed: int, name: str, lr: float = 2e-3) -> float:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
        ema, ts = None, time.perf_counter()
        for i, (idx, g) in enumerate(batches(seed, steps)):
            loss = loss_fn(idx, g)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
            if (i + 1) % 250 == 0:
                print(f"  {name} seed {seed} step {i + 1}/{steps} loss {ema:.4f} ({time.perf_counter() - ts:.0f}s)",
                      flush=True)
        return float(ema)

    for seed in args.seeds:
        ts = time.perf_counter()
        torch.manual_seed(seed)
        vae = TrajVAE(cfg)
        vae_loss = fit(vae, lambda idx, g, m=vae: m.loss(x_all[idx], tokens[idx], g), args.vae_steps, seed, "vae")
        vae.eval()
        with torch.no_grad():
            mu = torch.cat([vae.encode(x_all[i:i + 256], tokens[i:i + 256])[0] for i in range(0, n, 256)])
            rec = torch.cat([vae.decode(mu[i:i + 256], tokens[i:i + 256]) for i in range(0, n, 256)])
        rec_mse_px = float(((rec - x_all) ** 2).mean() * 16.0 ** 2)
        zscale = mu.std(dim=(0, 2, 3)).clamp_min(1e-3)
        z1_all = mu / zscale[None, :, None, None]
        torch.manual_seed(seed + 100)
        flow = FlowNet(cfg)
        fl = fit(flow, lambda idx, g, m=flow, z=z1_all: flow_loss(m, z[idx], tokens[idx], g), args.flow_steps,
                 seed + 100, "flow", lr=1e-3)
        state = {**{f"vae.{k}": v for k, v in vae.state_dict().items()},
                 **{f"flow.{k}": v for k, v in flow.state_dict().items()}, "zscale": zscale}
        quality = {"vae_loss": round(vae_loss, 5), "train_recon_mse_px2": round(rec_mse_px, 3),
                   "flow_loss": round(fl, 4), "seconds": round(time.perf_counter() - ts, 1),
                   "command": "pytest tests/backend/test_nextmotion_claims.py"}
        weights.save(out / gen_file(seed).name, half(state), config=asdict(cfg), command=cmd,
                     data_seeds={**data_seeds, "init_seed": seed}, quality=quality)
        print(f"seed {seed} generator {quality}", flush=True)

        ts = time.perf_counter()
        torch.manual_seed(seed + 200)
        reg = Regressor(cfg)
        rl = fit(reg, lambda idx, g, m=reg: torch.nn.functional.mse_loss(m(tokens[idx]), x_all[idx]),
                 args.reg_steps, seed + 200, "regressor")
        reg.eval()
        with torch.no_grad():
            pred = torch.cat([reg(tokens[i:i + 256]) for i in range(0, n, 256)])
        resid = (pred - x_all).reshape(n, cfg.steps, 2, cfg.grid, cfg.grid)
        sigma = resid.std(dim=(0, 3, 4))  # [T, 2] network units
        quality = {"train_mse_px2": round(float(((pred - x_all) ** 2).mean() * 256.0), 3),
                   "noise_sigma_px_mean": round(float(sigma.mean() * 16.0), 3), "loss": round(rl, 5),
                   "seconds": round(time.perf_counter() - ts, 1),
                   "command": "pytest tests/backend/test_nextmotion_claims.py"}
        weights.save(out / reg_file(seed).name, half({**reg.state_dict(), "sigma": sigma}), config=asdict(cfg),
                     command=cmd, data_seeds={**data_seeds, "init_seed": seed + 200}, quality=quality)
        print(f"seed {seed} regressor {quality}", flush=True)

    bank_n = min(1000, n)
    weights.save(out / BANK_FILE.name, {"mean_tokens": tokens[:bank_n].mean(1).to(torch.float16).contiguous(),
                                        "seeds": torch.arange(bank_n, dtype=torch.int64)},
                 config={"scenes": bank_n}, command=cmd, data_seeds={"train": [0, bank_n]},
                 quality={"scenes": bank_n, "command": "pytest tests/backend/test_nextmotion.py"})
    print(f"total {time.perf_counter() - t0:.0f}s", flush=True)
    return 0
