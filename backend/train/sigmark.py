"""Train the tiny latent video diffusion model of the SIGMark page: ``python -m backend.train sigmark``.

SIGMark (arXiv 2603.02882) needs a video diffusion model with a causal 3D VAE; none can be downloaded here, so this
script trains one on seeded procedural clips (:func:`backend.watermark.video_diffusion.synthetic_clips`: panning
textured backgrounds and bouncing shapes, 25 frames of 16x16):

1. the causal 3D VAE (reconstruction MSE + small KL + a latent cycle term ``|E(D(z)) - z|^2`` that keeps the
   encoder a left inverse of the decoder, which the watermark's extraction relies on);
2. the scaling factor ``1 / std`` of the latent means;
3. the eps-prediction space-time denoiser on the scaled latents with diffusers' ``DDPMScheduler``.

Writes ``assets/sigmark_tiny_vldm.safetensors`` (both nets, config in the metadata) and
``assets/sigmark_tiny_vldm_train.json`` (settings, loss curves, held-out quality: VAE PSNR, sample statistics vs data,
DDIM round-trip sign-flip rate of z_T). One torch thread.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from backend.runtime import ASSETS, seed_everything


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m backend.train sigmark", description=__doc__.split("\n\n")[0])
    p.add_argument("--vae-steps", type=int, default=450)
    p.add_argument("--den-steps", type=int, default=1500)
    p.add_argument("--vae-batch", type=int, default=8)
    p.add_argument("--den-batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--kl", type=float, default=1e-4)
    p.add_argument("--cycle", type=float, default=0.5)
    p.add_argument("--n-latents", type=int, default=2048, help="clips encoded once for denoiser training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init", default=None, help="continue from these weights (VAE and denoiser); with --vae-steps 0 "
                   "only the denoiser trains further")
    p.add_argument("--enc-steps", type=int, default=0,
                   help="stage 4: fine-tune the VAE encoder (decoder frozen) as a left inverse of the decoder on the "
                        "denoiser's own DDIM samples, |E(D(z0)) - z0|^2")
    p.add_argument("--sample-steps", type=int, default=None, help="DDIM steps stored in the config")
    p.add_argument("--out", default=str(ASSETS / "sigmark_tiny_vldm.safetensors"))
    p.add_argument("--time-cap-min", type=float, default=40.0,
                   help="wall-clock cap: the VAE stage stops at 40%% of it, the denoiser at 100%%")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import torch
    from safetensors.torch import save_file

    from backend.watermark.video_diffusion import TinyConfig, build_models, config_json, schedulers, synthetic_clips

    seed_everything(args.seed)
    torch.manual_seed(args.seed)
    cfg = TinyConfig()
    if args.init:
        from safetensors import safe_open
        from safetensors.torch import load_file

        with safe_open(args.init, "pt") as fh:
            cfg = TinyConfig(**json.loads((fh.metadata() or {})["config"]))
    vae, den = build_models(cfg)
    if args.init:
        state = load_file(args.init)
        vae.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("vae.")})
        den.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("den.")})
    log: dict = {"args": vars(args), "vae_loss": [], "den_loss": []}
    t0 = time.time()
    cap = args.time_cap_min * 60

    def batch(step: int, seed_base: int) -> torch.Tensor:
        clips = synthetic_clips(args.vae_batch, seed=seed_base + step, frames=cfg.frames, size=cfg.size)
        return torch.from_numpy(clips * 2 - 1).permute(0, 4, 1, 2, 3)

    # ---- stage 1: causal VAE
    opt = torch.optim.Adam(vae.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=max(1, args.vae_steps), pct_start=0.1)
    vae_steps_done = 0
    for step in range(args.vae_steps):
        x = batch(step, 10_000)
        mean, logvar = vae.encode(x)
        z = mean + torch.randn_like(mean) * (0.5 * logvar).exp()
        rec = vae.decode(z)
        l_rec = ((rec - x) ** 2).mean()
        l_kl = 0.5 * (mean**2 + logvar.exp() - 1 - logvar).mean()
        m2, _ = vae.encode(rec)
        l_cyc = ((m2 - z.detach()) ** 2).mean() / (mean.detach().var() + 1e-6)
        loss = l_rec + args.kl * l_kl + args.cycle * 0.1 * l_cyc
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        vae_steps_done = step + 1
        if step % 50 == 0:
            log["vae_loss"].append([step, l_rec.item(), l_kl.item(), l_cyc.item()])
            print(f"vae {step} rec {l_rec.item():.5f} kl {l_kl.item():.3f} cyc {l_cyc.item():.4f} "
                  f"{time.time() - t0:.0f}s", flush=True)
        if time.time() - t0 > cap * 0.4:
            print("vae stage hit its time share", flush=True)
            break
    vae.eval()
    for p in vae.parameters():
        p.requires_grad_(False)

    # ---- stage 2: latents and scaling factor
    clips = synthetic_clips(args.n_latents, seed=args.seed + 777, frames=cfg.frames, size=cfg.size)
    lat = []
    with torch.no_grad():
        for i in range(0, len(clips), 64):
            x = torch.from_numpy(clips[i:i + 64] * 2 - 1).permute(0, 4, 1, 2, 3)
            lat.append(vae.encode(x)[0])
    lat = torch.cat(lat)
    if not (args.init and args.vae_steps == 0):  # a continued run keeps the VAE and its scaling factor
        cfg.scaling_factor = float(1.0 / lat.std())
    lat = lat * cfg.scaling_factor
    print(f"scaling factor {cfg.scaling_factor:.4f}", flush=True)

    # ---- stage 3: denoiser
    ddpm, _, _ = schedulers(cfg)
    opt = torch.optim.Adam(den.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=max(1, args.den_steps), pct_start=0.05)
    g = torch.Generator().manual_seed(args.seed + 1)
    den_steps_done = 0
    for step in range(args.den_steps):
        idx = torch.randint(0, len(lat), (args.den_batch,), generator=g)
        z0 = lat[idx]
        noise = torch.randn(z0.shape, generator=g)
        t = torch.randint(0, cfg.train_timesteps, (args.den_batch,), generator=g)
        zt = ddpm.add_noise(z0, noise, t)
        eps = den(zt, t.float())
        loss = ((eps - noise) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(den.parameters(), 1.0)
        opt.step()
        sched.step()
        den_steps_done = step + 1
        if step % 50 == 0:
            log["den_loss"].append([step, float(loss)])
            print(f"den {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
        if time.time() - t0 > cap:
            print("denoiser stage hit the time cap", flush=True)
            break
    den.eval()
    if args.sample_steps:
        cfg.steps = args.sample_steps

    # ---- stage 4 (optional): encoder as the decoder's left inverse on generated latents
    if args.enc_steps > 0:
        _, ddim, _ = schedulers(cfg)
        for p_ in den.parameters():
            p_.requires_grad_(False)
        enc_params = [p_ for n_, p_ in vae.named_parameters() if n_.startswith("e_")]
        for p_ in enc_params:
            p_.requires_grad_(True)
        opt = torch.optim.Adam(enc_params, lr=5e-4)
        gs = torch.Generator().manual_seed(args.seed + 2)
        shape = (args.den_batch, cfg.latent_channels, 1 + (cfg.frames - 1) // 4, cfg.size // 2, cfg.size // 2)
        t_enc = time.time()
        for step in range(args.enc_steps):
            with torch.no_grad():
                x = torch.randn(shape, generator=gs)
                ddim.set_timesteps(cfg.steps)
                for t in ddim.timesteps:
                    x = ddim.step(den(x, torch.as_tensor(t, dtype=torch.float32)), t, x).prev_sample
                video = vae.decode(x / cfg.scaling_factor).clamp(-1, 1)
                video = torch.round((video + 1) * 127.5) / 127.5 - 1  # 8-bit, as saved videos are
            mean, _ = vae.encode(video)
            loss = ((mean * cfg.scaling_factor - x) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 25 == 0:
                log.setdefault("enc_loss", []).append([step, loss.item()])
                print(f"enc {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
            if time.time() - t_enc > cap:
                print("encoder stage hit the time cap", flush=True)
                break
        log["enc_steps_done"] = step + 1
        vae.eval()

    state = {f"vae.{k}": v.contiguous() for k, v in vae.state_dict().items()}
    state.update({f"den.{k}": v.contiguous() for k, v in den.state_dict().items()})
    out = Path(args.out)
    save_file(state, str(out), metadata={"config": config_json(cfg), "seed": str(args.seed)})
    log.update(vae_steps=vae_steps_done, den_steps=den_steps_done, train_seconds=round(time.time() - t0, 1))
    log["quality"] = evaluate_quality(out)
    out.with_name(out.stem + "_train.json").write_text(json.dumps(log, indent=1))
    print(json.dumps(log["quality"], indent=1), flush=True)
    return 0


def evaluate_quality(path: Path, n: int = 24, seed: int = 4242) -> dict:
    """Held-out quality of the shipped model: VAE PSNR, sample vs data statistics, z_T round-trip sign-flip rate."""
    from backend.watermark.video_diffusion import TinyChannel, synthetic_clips

    ch = TinyChannel(path)
    clips = synthetic_clips(n, seed=seed, frames=ch.frames, size=ch.size)
    psnr = []
    for c in clips:
        rec = np.clip(ch.decode_latents(ch.encode_video(c)), 0, 1)
        psnr.append(10 * np.log10(1.0 / max(1e-10, float(((rec - c) ** 2).mean()))))
    rng = np.random.default_rng(seed)
    flips, samples = [], []
    for _ in range(n // 2):
        z = rng.standard_normal(ch.latent_shape).astype(np.float32)
        video = ch.generate(z)
        samples.append(video)
        z_hat = ch.recover_noise(video)
        flips.append(float((np.sign(z_hat[:, 1:]) != np.sign(z[:, 1:])).mean()))
    samples = np.stack(samples)
    tdiff = lambda v: float(np.abs(np.diff(v, axis=1)).mean())  # noqa: E731
    return {
        "vae_psnr_db_heldout": round(float(np.mean(psnr)), 2),
        "roundtrip_sign_flip_rate": round(float(np.mean(flips)), 4),
        "sample_mean": round(float(samples.mean()), 4), "data_mean": round(float(clips.mean()), 4),
        "sample_std": round(float(samples.std()), 4), "data_std": round(float(clips.std()), 4),
        "sample_temporal_diff": round(tdiff(samples), 4), "data_temporal_diff": round(tdiff(clips), 4),
        "n_eval": n,
    }
