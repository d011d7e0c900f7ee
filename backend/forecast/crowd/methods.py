"""The crowd simulators behind the registry of :mod:`.interface` (STDDN and its baselines, each a
``rollout.CrowdSimulator``) and the shipped weights of the learned ones.

Weights: ``assets/crowd_stddn.safetensors`` (STDDN) and ``assets/crowd_micro.safetensors`` (its no-density ablation),
plus ``assets/crowd_<kind>_seed<S>.safetensors`` for other training seeds, all read and written through
:mod:`backend.weights` (metadata: the model config, the training command, the data seeds and the training record).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from backend import weights
from backend.runtime import ASSETS

from .data import Clip
from .physics import Orca, OrcaConfig, SocialForceConfig, social_force_step
from .rollout import CrowdState
from .stddn import STDDN, MicroConfig, MicroNet, StddnConfig

WEIGHTS_DIR = ASSETS  # where weights_path looks (the training script's quick run points it at a temporary folder)


def weights_path(kind: str) -> Path:
    """The shipped weights of the learned method ``kind`` (``interface.LEARNED``): ``crowd_<kind>.safetensors``."""
    return WEIGHTS_DIR / f"crowd_{kind}.safetensors"


def seed_weights(kind: str, seed: int) -> Path:
    """Shipped weights of ``kind`` ("stddn" | "micro") for a training seed: seed 0 is the default model
    (:func:`weights_path`), other seeds are ``assets/crowd_<kind>_seed<S>.safetensors`` (same data and budget)."""
    return weights_path(kind) if seed == 0 else ASSETS / f"crowd_{kind}_seed{seed}.safetensors"


def shipped_seeds() -> list[int]:
    """Training seeds for which both STDDN and its ablation are shipped (0 first)."""
    seeds = {0} | {int(p.stem.rsplit("seed", 1)[1]) for p in ASSETS.glob("crowd_stddn_seed*.safetensors")}
    return sorted(s for s in seeds if seed_weights("stddn", s).is_file() and seed_weights("micro", s).is_file())


def _goal_dir(s: CrowdState) -> torch.Tensor:
    d = s.goal - s.p
    return d / d.norm(dim=-1, keepdim=True).clamp_min(1e-6)


def _v0(s: CrowdState) -> torch.Tensor:
    return torch.where(s.v0 > 0.1, s.v0, torch.full_like(s.v0, 1.3))


class ConstantVelocity:
    name = "constant_velocity"

    def reset(self, clip: Clip) -> None:
        pass

    def step(self, s: CrowdState, dt: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return s.p + s.v * dt, s.v, torch.zeros_like(s.a)


class SocialForce:
    name = "social_force"

    def __init__(self, cfg: SocialForceConfig | None = None) -> None:
        self.cfg = cfg or SocialForceConfig()
        self.walls = torch.zeros(0, 4)

    def reset(self, clip: Clip) -> None:
        self.walls = torch.from_numpy(clip.walls())

    def step(self, s: CrowdState, dt: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return social_force_step(s.p, s.v, _goal_dir(s), _v0(s), s.present, self.walls, dt, self.cfg)


class OrcaSim:
    name = "orca"

    def __init__(self, cfg: OrcaConfig | None = None, max_speed_factor: float = 1.3) -> None:
        self.cfg = cfg or OrcaConfig()
        self.factor = max_speed_factor
        self.orca: Orca | None = None

    def reset(self, clip: Clip) -> None:
        self.orca = Orca(clip.walls(), clip.dt, self.cfg)

    def step(self, s: CrowdState, dt: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        assert self.orca is not None, "call reset(clip) first"
        v0 = _v0(s)
        pref = (v0[:, None] * _goal_dir(s)).numpy()
        vel = self.orca.velocities(s.p.numpy(), s.v.numpy(), pref, (self.factor * v0).numpy(), s.present.numpy())
        v = torch.from_numpy(vel)
        return s.p + v * dt, v, (v - s.v) / dt


class Learned:
    """A trained :class:`MicroNet` as a simulator (STDDN or its no-density ablation)."""

    def __init__(self, net: MicroNet, name: str) -> None:
        self.net = net.eval()
        self.name = name
        self.obstacles = torch.zeros(1, 0, 2)

    def reset(self, clip: Clip) -> None:
        self.obstacles = torch.from_numpy(clip.obstacle_points())[None]

    def step(self, s: CrowdState, dt: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        idx = torch.nonzero(s.present).flatten()  # run the network on present agents only
        a_next = torch.zeros_like(s.a)
        if len(idx):
            sub = self.net(s.p[idx][None], s.v[idx][None], s.a[idx][None], s.hist[idx][None], s.hist_ok[idx][None],
                           s.goal[idx][None], _v0(s)[idx][None], s.present[idx][None], self.obstacles)[0]
            a_next[idx] = sub
        return s.p + s.v * dt, s.v + s.a * dt, a_next


# ----------------------------------------------------------------------------------------------------- weights
TRAIN_COMMAND = "python -m backend.train crowd"
DATA_SEEDS = {"train_clips": "generator seeds 100-107 (one per training scene)", "val_clips": "generator seeds 200-207"}


def save_weights(model: STDDN, path: Path, micro_only: bool, training: dict[str, Any], command: str = TRAIN_COMMAND,
                 quality: dict[str, Any] | None = None) -> Path:
    """Write a trained model (only its network with ``micro_only``) through :func:`backend.weights.save`."""
    sd = model.micro.state_dict() if micro_only else model.state_dict()
    if micro_only:
        sd = {f"micro.{k}": v for k, v in sd.items()}
    return weights.save(path, sd, config=model.config_dict(), command=command,
                        data_seeds={**DATA_SEEDS, "train_seed": training.get("seed")}, quality=quality or {},
                        extra={"training": training})


def load_model(kind: str = "stddn", path: str | Path | None = None) -> tuple[STDDN, weights.WeightsMeta]:
    """Load shipped weights (safetensors only). Returns the model (ODE untrained for ``micro``) and its metadata."""
    p = Path(path) if path is not None else weights_path(kind)
    state, meta = weights.load(p, made_by=TRAIN_COMMAND)
    cfg = meta.config
    micro = MicroConfig(**cfg.get("micro", {}))
    macro_d = dict(cfg.get("macro", {}))
    if "bounds" in macro_d:
        macro_d["bounds"] = tuple(macro_d["bounds"])
    model = STDDN(micro, StddnConfig(**macro_d))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(k.startswith("micro.") for k in missing):
        raise weights.WeightsError(f"{p.name}: weights do not match the model (missing {missing}, unexpected "
                                   f"{unexpected})")
    model.eval()
    return model, meta


_cache: dict[str, MicroNet] = {}


def learned(kind: str) -> Learned:
    if kind not in _cache:
        _cache[kind] = load_model(kind)[0].micro
    return Learned(_cache[kind], kind)


def weights_sha(kind: str) -> str | None:
    from backend.runtime import sha256_file

    p = weights_path(kind)
    return sha256_file(p) if p.is_file() else None


def param_count(kind: str) -> int | None:
    if not weights_path(kind).is_file():
        return None
    return int(sum(v.numel() for v in learned(kind).net.parameters()))


__all__ = ["ConstantVelocity", "Learned", "OrcaSim", "SocialForce", "WEIGHTS_DIR", "learned", "load_model",
           "save_weights", "seed_weights", "shipped_seeds", "weights_path"]
