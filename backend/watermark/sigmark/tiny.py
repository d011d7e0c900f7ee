"""The sizes of the tiny latent video diffusion model (:class:`TinyConfig`) and the causal VAE's temporal grouping
(:data:`TEMPORAL`): the pieces that the channel (:mod:`.channel`) and the networks (:mod:`.networks`) both read.
Import-light (no torch)."""

from __future__ import annotations

from dataclasses import dataclass

TEMPORAL = 4  # frames per latent frame after the first (causal VAE grouping)


@dataclass
class TinyConfig:
    """Sizes of the tiny latent video diffusion model (defaults = the shipped weights)."""

    frames: int = 25
    size: int = 32
    spatial: int = 4  # spatial downsampling of the VAE (the first frame's 3*size^2 pixels must exceed its latents)
    latent_channels: int = 16
    vae_hidden: int = 32
    vae_hidden_full: int = 16
    den_hidden: int = 48
    den_blocks: int = 4
    den_temporal_attention: bool = False  # a temporal self-attention layer per denoiser block (on in the shipped weights)
    train_timesteps: int = 1000
    beta_schedule: str = "linear"
    prediction_type: str = "epsilon"  # or "v_prediction" (the shipped weights; see :func:`.channel.schedulers`)
    scaling_factor: float = 1.0  # set after VAE training: 1 / std of the latent means
    steps: int = 25  # DDIM steps for sampling and inversion
    fixed_point: int = 3  # inversion: 0 = diffusers' DDIMInverseScheduler; K = exact DDIM inverse, K fixed-point iters
    decoder_inv_steps: int = 100  # > 0: refine E(x) by Adam steps on |clamp(D(z0)) - x|^2 before inversion (PRC)
    decoder_inv_lr: float = 0.1


def latent_frames(frames: int = TinyConfig.frames) -> int:
    """Watermarked latent frames ``Lf = (F - 1) / 4`` of an ``F``-frame clip (latent frame 0 carries no key)."""
    return (frames - 1) // TEMPORAL
