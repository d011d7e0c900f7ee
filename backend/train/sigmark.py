"""Train the tiny latent video diffusion model of the SIGMark page: ``python -m backend.train sigmark``.

SIGMark (arXiv 2603.02882) needs a video diffusion model with a causal 3D VAE; none can be downloaded here, so this
script trains one on seeded procedural clips (:func:`backend.watermark.sigmark.channel.synthetic_clips`: panning
textured backgrounds and bouncing shapes, 25 frames of 32x32):

1. the causal 3D VAE (reconstruction MSE + small KL + a latent cycle term ``|E(8bit(D(z))) - z|^2`` on latents
   around the data latents, which keeps the decoder injective and the encoder its left inverse where the sampler goes;
   the watermark's extraction relies on it);
2. the scaling factor ``1 / std`` of the latent means;
3. the space-time denoiser on the scaled latents with diffusers' ``DDPMScheduler``, predicting v (the default for fresh
   runs; eps prediction left the tiny net an error floor at high noise that DDIM amplified into
   over-dispersed, flickering samples);
4. a short joint fine-tune of the VAE on the denoiser's own DDIM samples (same cycle term, reconstruction kept);
5. a fresh v-prediction denoiser with temporal attention (``--den-final-steps 2500``, ``--den-final-reinit``: the
   defaults) trained on the final VAE's latents with a re-estimated scaling factor (stage 4 moves the
   latent space); ``--no-den-final-reinit`` fine-tunes the stage-3 / loaded denoiser instead, ``--den-final-steps 0``
   skips the stage. The defaults run stages 1-5 in one command (the shipped weights: ``python -m backend.train
   sigmark --cycle-steps 481``).

Writes ``assets/sigmark_tiny_vldm.safetensors`` (both nets, config in the metadata) and
``assets/sigmark_tiny_vldm_train.json`` (settings, loss curves, held-out quality: VAE PSNR, sample statistics vs data,
DDIM round-trip sign-flip rate of z_T). One torch thread.
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
    p = argparse.ArgumentParser(prog="python -m backend.train sigmark", description=__doc__.split("\n\n")[0])
    p.add_argument("--vae-steps", type=int, default=800)
    p.add_argument("--den-steps", type=int, default=2500)
    p.add_argument("--cycle-steps", type=int, default=540,
                   help="stage 4: fine-tune the VAE (encoder and decoder) so that E(8bit(D(z0))) = z0 on the "
                        "denoiser's own DDIM samples, with the data reconstruction loss kept")
    p.add_argument("--den-final-steps", type=int, default=2500,
                   help="stage 5: re-estimate the scaling factor on the FINAL VAE's data latents and fine-tune the "
                        "denoiser on them (stage 4 moves the VAE's latent space away from the one the denoiser "
                        "learnt: data latent std 1.0 -> 1.52 when it was skipped, which made the samples off-manifold and "
                        "flickery); 0 skips the stage")
    p.add_argument("--den-final-lr", type=float, default=1e-3)
    p.add_argument("--den-final-reinit", action=argparse.BooleanOptionalAction, default=True,
                   help="stage 5 trains a FRESH denoiser (at --lr; default, as the shipped weights) instead of "
                        "fine-tuning the stage-3 / loaded one (--no-den-final-reinit, at --den-final-lr); needed when "
                        "--prediction-type changes")
    p.add_argument("--prediction-type", choices=("epsilon", "v_prediction"), default=None,
                   help="denoiser target (default: the loaded weights' config, else v_prediction). eps prediction "
                        "left the tiny net an error floor at high noise that DDIM amplifies by 1/sqrt(alpha_bar) into "
                        "over-dispersed, flickering samples; v prediction (Salimans & Ho 2022) does not")
    p.add_argument("--temporal-attention", action=argparse.BooleanOptionalAction, default=True,
                   help="give a FRESH denoiser (stage 3 without --init, or stage 5 with --den-final-reinit) a temporal "
                        "self-attention layer per block, as the shipped weights have (--no-temporal-attention: none)")
    p.add_argument("--vae-batch", type=int, default=8)
    p.add_argument("--den-batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--kl", type=float, default=1e-6)
    p.add_argument("--cycle", type=float, default=1.0, help="weight of the latent cycle loss (relative to latent var)")
    p.add_argument("--cycle-noise", type=float, default=1.0,
                   help="cycle loss on latents perturbed by up to this many latent std (the decoder must stay "
                        "injective where the sampler goes, not only on data latents)")
    p.add_argument("--n-latents", type=int, default=1024, help="clips encoded once for denoiser training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init", default=None, help="continue from these weights (VAE and denoiser); with --vae-steps 0 "
                   "only the denoiser trains further")
    p.add_argument("--sample-steps", type=int, default=None, help="DDIM steps stored in the config")
    p.add_argument("--out", default=str(ASSETS / "sigmark_tiny_vldm.safetensors"))
    p.add_argument("--time-cap-min", type=float, default=55.0,
                   help="wall-clock cap: the VAE stage stops at 40%% of it, the denoiser at 85%%, the cycle stage at "
                        "100%%")
    return p


def _q8(v):
    """Clamp to [-1, 1] and quantise to 8 bits (as a saved video is), straight-through gradient."""
    import torch

    vc = v.clamp(-1, 1)
    return vc + (torch.round((vc + 1) * 127.5) / 127.5 - 1 - vc).detach()


def _update(opt, params, loss, sched=None) -> None:  # noqa: ANN001
    """One optimiser step on ``loss`` with the gradient norm of ``params`` clipped to 1 (every stage here), then the
    LR schedule's step if there is one."""
    import torch

    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    if sched is not None:
        sched.step()


def _clip_latents(vae, n: int, seed0: int, cfg) -> torch.Tensor:
    """Posterior means of ``n`` procedural training clips (seeds ``seed0 + i``, batches of 64), unscaled."""
    import torch

    from backend.watermark.sigmark.channel import synthetic_clips

    lat = []
    with torch.no_grad():
        for i in range(0, n, 64):
            clips = synthetic_clips(min(64, n - i), seed=seed0 + i, frames=cfg.frames, size=cfg.size)
            lat.append(vae.encode(torch.from_numpy(clips * 2 - 1).permute(0, 4, 1, 2, 3))[0])
    return torch.cat(lat)


def _fit_denoiser(den, ddpm, lat, steps: int, lr: float, batch: int, seed: int, cfg, stop_at: float, log: list,
                  tag: str, t0: float) -> int:
    """Epsilon- or v-prediction training (``cfg.prediction_type``) of the denoiser on scaled latents
    ``lat [N, C, F, h, w]`` (Adam, one-cycle LR, gradient clip 1); stops early at wall time ``stop_at``. Returns the
    steps done."""
    import torch

    opt = torch.optim.Adam(den.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=max(1, steps), pct_start=0.05)
    g = torch.Generator().manual_seed(seed)
    done = 0
    for step in range(steps):
        idx = torch.randint(0, len(lat), (batch,), generator=g)
        z0 = lat[idx]
        noise = torch.randn(z0.shape, generator=g)
        t = torch.randint(0, cfg.train_timesteps, (batch,), generator=g)
        target = ddpm.get_velocity(z0, noise, t) if cfg.prediction_type == "v_prediction" else noise
        loss = ((den(ddpm.add_noise(z0, noise, t), t.float()) - target) ** 2).mean()
        _update(opt, den.parameters(), loss, sched)
        done = step + 1
        if step % 50 == 0 or step == steps - 1:
            log.append([step, loss.item()])
            print(f"{tag} {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
        if time.time() > stop_at:
            print(f"{tag} stage hit its time cap", flush=True)
            break
    return done


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import torch

    from backend import weights
    from backend.watermark.sigmark.channel import (
        TinyConfig,
        build_models,
        read_config,
        save_weights,
        schedulers,
        synthetic_clips,
    )

    seed_everything(args.seed)
    torch.manual_seed(args.seed)
    cfg = TinyConfig()
    if args.init:
        cfg = read_config(args.init)
    if args.prediction_type:
        cfg.prediction_type = args.prediction_type
    elif not args.init:
        cfg.prediction_type = "v_prediction"
    if args.temporal_attention and not args.init:
        cfg.den_temporal_attention = True
    vae, den = build_models(cfg)
    if args.init:
        state, _ = weights.load(args.init)
        vae.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("vae.")})
        den.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("den.")})
    log: dict = {"args": vars(args), "vae_loss": [], "den_loss": [], "cycle_loss": []}
    t0 = time.time()
    cap = args.time_cap_min * 60

    def batch(step: int, seed_base: int) -> torch.Tensor:
        clips = synthetic_clips(args.vae_batch, seed=seed_base + step, frames=cfg.frames, size=cfg.size)
        return torch.from_numpy(clips * 2 - 1).permute(0, 4, 1, 2, 3)

    # ---- stage 1: causal VAE (reconstruction, small KL, cycle E(8bit(D(z))) = z around the data latents)
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
        sd = mean.detach().std() + 1e-6
        amp = args.cycle_noise * torch.rand(z.shape[0], 1, 1, 1, 1)
        zr = z.detach() + amp * sd * torch.randn_like(z)
        m2, _ = vae.encode(_q8(vae.decode(zr)))
        l_cyc = ((m2 - zr) ** 2).mean() / sd**2
        loss = l_rec + args.kl * l_kl + args.cycle * l_cyc
        _update(opt, vae.parameters(), loss, sched)
        vae_steps_done = step + 1
        if step % 50 == 0 or step == args.vae_steps - 1:
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
    lat = _clip_latents(vae, args.n_latents, args.seed + 777, cfg)
    if not (args.init and args.vae_steps == 0):  # a continued run keeps the VAE and its scaling factor
        cfg.scaling_factor = float(1.0 / lat.std())
    lat = lat * cfg.scaling_factor
    print(f"scaling factor {cfg.scaling_factor:.4f}", flush=True)

    # ---- stage 3: denoiser
    ddpm, _, _ = schedulers(cfg)
    den_steps_done = _fit_denoiser(den, ddpm, lat, args.den_steps, args.lr, args.den_batch, args.seed + 1, cfg,
                                   stop_at=t0 + cap * 0.85, log=log["den_loss"], tag="den", t0=t0)
    den.eval()
    for p_ in den.parameters():
        p_.requires_grad_(False)
    if args.sample_steps:
        cfg.steps = args.sample_steps

    # ---- stage 4: VAE (both halves) as a left inverse on the denoiser's own samples, data reconstruction kept
    cycle_steps_done = 0
    if args.cycle_steps > 0:
        _, ddim, _ = schedulers(cfg)
        for p_ in vae.parameters():
            p_.requires_grad_(True)
        vae.train()
        opt = torch.optim.Adam(vae.parameters(), lr=3e-4)
        gs = torch.Generator().manual_seed(args.seed + 2)
        shape = (args.vae_batch, cfg.latent_channels, 1 + (cfg.frames - 1) // 4, cfg.size // cfg.spatial,
                 cfg.size // cfg.spatial)
        for step in range(args.cycle_steps):
            with torch.no_grad():
                zs = torch.randn(shape, generator=gs)
                ddim.set_timesteps(cfg.steps)
                for t in ddim.timesteps:
                    zs = ddim.step(den(zs, torch.as_tensor(t, dtype=torch.float32)), t, zs).prev_sample
            m2, _ = vae.encode(_q8(vae.decode(zs / cfg.scaling_factor)))
            l_cyc = ((m2 * cfg.scaling_factor - zs) ** 2).mean() / zs.var()
            x = batch(step, 50_000)
            mean, _ = vae.encode(x)
            l_rec = ((vae.decode(mean) - x) ** 2).mean()
            loss = l_rec + args.cycle * l_cyc
            _update(opt, vae.parameters(), loss)
            cycle_steps_done = step + 1
            if step % 25 == 0 or step == args.cycle_steps - 1:
                log["cycle_loss"].append([step, l_rec.item(), l_cyc.item()])
                print(f"cycle {step} rec {l_rec.item():.5f} cyc {l_cyc.item():.4f} {time.time() - t0:.0f}s",
                      flush=True)
            if time.time() - t0 > cap:
                print("cycle stage hit the time cap", flush=True)
                break
        vae.eval()

    # ---- stage 5: denoiser re-fit on the final VAE's latent space (scaling factor re-estimated)
    den_final_done = 0
    log["den_final_loss"] = []
    if args.den_final_steps > 0:
        for p_ in vae.parameters():
            p_.requires_grad_(False)
        lat = _clip_latents(vae, args.n_latents, args.seed + 90_777, cfg)
        log["scaling_factor_before_stage5"] = cfg.scaling_factor
        cfg.scaling_factor = float(1.0 / lat.std())
        lat = lat * cfg.scaling_factor
        print(f"stage 5: scaling factor {cfg.scaling_factor:.4f}", flush=True)
        if args.den_final_reinit:
            if args.temporal_attention:
                cfg.den_temporal_attention = True
            _, den = build_models(cfg)
        for p_ in den.parameters():
            p_.requires_grad_(True)
        den.train()
        ddpm, _, _ = schedulers(cfg)
        lr5 = args.lr if args.den_final_reinit else args.den_final_lr
        den_final_done = _fit_denoiser(den, ddpm, lat, args.den_final_steps, lr5, args.den_batch,
                                       args.seed + 5, cfg, stop_at=time.time() + cap, log=log["den_final_loss"],
                                       tag="den-final", t0=t0)
        den.eval()

    out = Path(args.out)
    save_weights(out, vae, den, cfg, command=" ".join(["python -m backend.train sigmark", *(argv or [])]), data_seeds={"seed": args.seed})
    log.update(vae_steps=vae_steps_done, den_steps=den_steps_done, cycle_steps=cycle_steps_done,
               den_final_steps=den_final_done,
               train_seconds=round(time.time() - t0, 1))
    log["quality"] = evaluate_quality(out)
    out.with_name(out.stem + "_train.json").write_text(json.dumps(log, indent=1))
    print(json.dumps(log["quality"], indent=1), flush=True)
    return 0


def evaluate_quality(path: Path, n: int = 24, seed: int = 4242) -> dict:
    """Held-out quality of the shipped model: VAE PSNR, sample vs data statistics, z_T round-trip sign-flip rate."""
    from backend.watermark.sigmark.channel import TinyChannel, synthetic_clips

    ch = TinyChannel(path)
    clips = synthetic_clips(n, seed=seed, frames=ch.frames, size=ch.size)
    psnr = []
    for c in clips:
        rec = np.clip(ch.decode_latents(ch.encode_video(c)), 0, 1)
        psnr.append(10 * np.log10(1.0 / max(1e-10, float(((rec - c) ** 2).mean()))))
    rng = np.random.default_rng(seed)
    flips, flips_novae, z0_err, samples = [], [], [], []
    for _ in range(n // 2):
        z = rng.standard_normal(ch.latent_shape).astype(np.float32)
        z0 = ch.sample(z)
        video = np.round(np.clip(ch.decode_latents(z0), 0, 1) * 255) / 255  # = ch.generate(z)
        samples.append(video)
        z0_rt = ch.encode_video(video)
        z0_err.append(float(np.linalg.norm(z0_rt[:, 1:] - z0[:, 1:]) / np.linalg.norm(z0[:, 1:])))
        z_hat = ch.invert(z0_rt)
        flips.append(float((np.sign(z_hat[:, 1:]) != np.sign(z[:, 1:])).mean()))
        flips_novae.append(float((np.sign(ch.invert(z0)[:, 1:]) != np.sign(z[:, 1:])).mean()))
    samples = np.stack(samples)
    tdiff = lambda v: float(np.abs(np.diff(v, axis=1)).mean())  # noqa: E731
    return {
        "vae_psnr_db_heldout": round(float(np.mean(psnr)), 2),
        "roundtrip_sign_flip_rate": round(float(np.mean(flips)), 4),
        "inversion_only_sign_flip_rate": round(float(np.mean(flips_novae)), 4),
        "vae_roundtrip_rel_err_on_samples": round(float(np.mean(z0_err)), 4),
        "sample_mean": round(float(samples.mean()), 4), "data_mean": round(float(clips.mean()), 4),
        "sample_std": round(float(samples.std()), 4), "data_std": round(float(clips.std()), 4),
        "sample_temporal_diff": round(tdiff(samples), 4), "data_temporal_diff": round(tdiff(clips), 4),
        "n_eval": n,
    }
