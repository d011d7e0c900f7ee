"""The frozen forecasters that delta-Adapter post-processes: DLinear, a PatchTST-style patch transformer and an MLP.

All map ``x (B, L, d)`` to ``y (B, H, m)`` (m = 1: the target channel; all channels are inputs, the "MS" setting).

* :class:`DLinear` (Zeng et al., AAAI 2023): moving-average decomposition (kernel 25) into trend and remainder, one
  linear map of each to the horizon. It maps the flattened ``L x d`` window (channel-mixing), so that leading channels
  can inform the target; the original applies one map per channel.
* :class:`PatchTST` (Nie et al., ICLR 2023 style): each channel cut into patches of 16 (stride 16: non-overlapping,
  half the tokens of the paper's stride 8), a shared transformer
  encoder over the patch tokens, a flatten head over all channels' tokens. No internal RevIN: re-normalisation is a
  baseline here (:mod:`.baselines`), so every backbone starts from the same plain inputs. Defaults give >= 0.5M
  parameters on every preset.
* :class:`MLPBackbone`: two hidden layers of 256 on the flattened window.

The project trains each once on the early regime of each preset (``python -m backend.train deltaadapter``) and ships
them as ``assets/deltaadapter_<preset>_<backbone>.safetensors``; :func:`load_shipped` reads them (safetensors only) and
:func:`load_user` reads a user's state of one of these architectures, checking every shape.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from backend.errors import InputError
from backend.registry import choose

from .training import FitConfig, fit

ASSETS = Path(__file__).resolve().parents[3] / "assets"
TRAIN_COMMAND = "python -m backend.train deltaadapter"


@dataclass
class BackboneConfig:
    """Shapes and sizes; ``kind`` is ``dlinear``, ``patchtst`` or ``mlp``."""

    kind: str = "dlinear"
    lookback: int = 96
    horizon: int = 24
    channels: int = 6
    targets: int = 1
    kernel: int = 25
    patch_len: int = 16
    stride: int = 16
    d_model: int = 128
    n_heads: int = 8
    n_layers: int = 4
    d_ff: int = 256
    dropout: float = 0.1
    hidden: int = 256


def _moving_average(x: torch.Tensor, k: int) -> torch.Tensor:
    """Replicate-padded moving average over time of ``x (B, L, d)``."""
    front = x[:, :1].repeat(1, (k - 1) // 2, 1)
    back = x[:, -1:].repeat(1, k // 2, 1)
    xp = torch.cat([front, x, back], 1)
    return F.avg_pool1d(xp.transpose(1, 2), k, stride=1).transpose(1, 2)


class Architecture(nn.Module):
    """What every backbone class says about itself: its ``kind`` (the name of ``interface.BACKBONES``), its training
    settings ``train_config`` (the training script and the page's "train on my series"), how it adapts a
    configuration to the input shape (:meth:`configure`) and reads the sizes of a user's state (:meth:`read_sizes`)."""

    kind = ""
    train_config = FitConfig()

    @classmethod
    def configure(cls, cfg: BackboneConfig) -> None:
        """Adjust ``cfg`` to its input shape (in place)."""

    @classmethod
    def read_sizes(cls, cfg: BackboneConfig, tensors: dict[str, torch.Tensor]) -> None:
        """Set the sizes of ``cfg`` that a user's state ``tensors`` fixes (in place)."""


class DLinear(Architecture):
    kind = "dlinear"
    train_config = FitConfig(epochs=30, lr=3e-3, batch=64, patience=5, weight_decay=1e-4)

    def __init__(self, cfg: BackboneConfig):
        super().__init__()
        self.cfg = cfg
        n_in, n_out = cfg.lookback * cfg.channels, cfg.horizon * cfg.targets
        self.seasonal = nn.Linear(n_in, n_out)
        self.trend = nn.Linear(n_in, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        trend = _moving_average(x, self.cfg.kernel)
        out = self.seasonal((x - trend).flatten(1)) + self.trend(trend.flatten(1))
        return out.view(-1, self.cfg.horizon, self.cfg.targets)


class PatchTST(Architecture):
    kind = "patchtst"
    train_config = FitConfig(epochs=12, lr=5e-4, batch=64, patience=3)

    @classmethod
    def configure(cls, cfg: BackboneConfig) -> None:
        """Short inputs (fewer than 32 steps) get patches of 4."""
        if cfg.lookback < 32:
            cfg.patch_len, cfg.stride = 4, 4

    @classmethod
    def read_sizes(cls, cfg: BackboneConfig, tensors: dict[str, torch.Tensor]) -> None:
        if "embed.weight" in tensors:
            cfg.d_model, cfg.patch_len = (int(s) for s in tensors["embed.weight"].shape)
        if "pos" in tensors:
            n_patches = int(tensors["pos"].shape[0])
            cfg.stride = max(1, (cfg.lookback - cfg.patch_len) // max(n_patches - 1, 1))
        cfg.n_layers = len({k.split(".")[2] for k in tensors if k.startswith("encoder.layers.")}) or cfg.n_layers
        if "encoder.layers.0.linear1.weight" in tensors:
            cfg.d_ff = int(tensors["encoder.layers.0.linear1.weight"].shape[0])

    def __init__(self, cfg: BackboneConfig):
        super().__init__()
        self.cfg = cfg
        if cfg.lookback < cfg.patch_len:
            raise InputError(f"PatchTST needs an input of at least patch_len = {cfg.patch_len} steps.")
        self.n_patches = (cfg.lookback - cfg.patch_len) // cfg.stride + 1
        self.embed = nn.Linear(cfg.patch_len, cfg.d_model)
        self.pos = nn.Parameter(torch.randn(self.n_patches, cfg.d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.dropout, batch_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(cfg.channels * self.n_patches * cfg.d_model, cfg.horizon * cfg.targets)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, _, d = x.shape
        p = x.transpose(1, 2).unfold(-1, self.cfg.patch_len, self.cfg.stride)  # (B, d, n_patches, patch_len)
        z = self.embed(p).reshape(b * d, self.n_patches, -1) + self.pos
        z = self.encoder(z).reshape(b, -1)
        return self.head(z).view(-1, self.cfg.horizon, self.cfg.targets)


class MLPBackbone(Architecture):
    kind = "mlp"
    train_config = FitConfig(epochs=30, lr=1e-3, batch=64, patience=5, weight_decay=1e-4)

    @classmethod
    def read_sizes(cls, cfg: BackboneConfig, tensors: dict[str, torch.Tensor]) -> None:
        if "net.0.weight" in tensors:
            cfg.hidden = int(tensors["net.0.weight"].shape[0])

    def __init__(self, cfg: BackboneConfig):
        super().__init__()
        self.cfg = cfg
        h = cfg.hidden
        self.net = nn.Sequential(nn.Linear(cfg.lookback * cfg.channels, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                                 nn.Linear(h, cfg.horizon * cfg.targets))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.flatten(1)).view(-1, self.cfg.horizon, self.cfg.targets)


ARCHS: dict[str, type[Architecture]] = {c.kind: c for c in (DLinear, PatchTST, MLPBackbone)}
# Training settings per architecture (used by the training script and the page's "train on my series").
TRAIN: dict[str, FitConfig] = {k: c.train_config for k, c in ARCHS.items()}


def architecture(kind: str) -> type[Architecture]:
    """The class of ``kind`` (case-insensitive); an unknown name raises InputError listing the valid ones."""
    return ARCHS[choose(kind, ARCHS, "backbone")]


def config_for(kind: str, lookback: int, horizon: int, channels: int) -> BackboneConfig:
    """The configuration of ``kind`` for windows of this shape (short inputs get patches of 4)."""
    arch = architecture(kind)
    cfg = BackboneConfig(kind=arch.kind, lookback=lookback, horizon=horizon, channels=channels)
    arch.configure(cfg)
    return cfg


def build(cfg: BackboneConfig) -> nn.Module:
    return architecture(cfg.kind)(cfg)


def predict(model: nn.Module, x: torch.Tensor, batch: int = 512) -> np.ndarray:
    """``model``'s forecasts of ``x (N, L, d)`` in batches of ``batch``, as numpy ``(N, H, m)``."""
    with torch.no_grad():
        return torch.cat([model(x[i:i + batch]) for i in range(0, len(x), batch)]).numpy()


def freeze(model: nn.Module) -> nn.Module:
    """requires_grad False on every parameter, eval mode (dropout off). Gradients still flow through it to inputs."""
    for p in model.parameters():
        p.requires_grad_(False)
    return model.eval()


def state_hash(model: nn.Module) -> str:
    """sha256 over every tensor's name, dtype, shape and bytes: equal iff the state is bit-identical."""
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        t = v.detach().cpu().contiguous()
        h.update(k.encode())
        h.update(str(t.dtype).encode())
        h.update(str(tuple(t.shape)).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def n_params(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def train_backbone(cfg: BackboneConfig, x: torch.Tensor, y: torch.Tensor, xv: torch.Tensor, yv: torch.Tensor,
                   seed: int = 0, fit_cfg: FitConfig | None = None, progress=None, cancel=None):
    """Train a fresh backbone on the early regime (MSE); returns ``(frozen model, FitLog)``."""
    torch.manual_seed(seed)
    model = build(cfg)

    def loss(xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(model(xb), yb)

    log = fit(list(model.parameters()), loss, [model], x, y, xv, yv, fit_cfg or TRAIN[cfg.kind], seed=seed,
              progress=progress, cancel=cancel)
    return freeze(model), log


def asset_path(preset: str, kind: str) -> Path:
    return ASSETS / f"deltaadapter_{preset}_{kind}.safetensors"


def load_shipped(preset: str, kind: str) -> tuple[nn.Module, dict]:
    """The shipped frozen backbone of ``preset`` and its metadata (``config``, ``quality``, ``data_seeds``)."""
    from backend import weights

    path = asset_path(preset, kind)
    meta = weights.read_meta(weights.check(path, TRAIN_COMMAND))
    model = build(BackboneConfig(**meta.config))
    weights.load_into(model, path, TRAIN_COMMAND)
    return freeze(model), {"config": meta.config, "quality": meta.quality, "data_seeds": meta.data_seeds,
                           "file": path.name}


def load_user(tensors: dict[str, torch.Tensor], kind: str, lookback: int, horizon: int, channels: int) -> nn.Module:
    """A user's state dict (decoded from safetensors) as a frozen backbone of ``kind`` for windows of this shape.

    Hyper-parameters that do not change tensor shapes (heads, dropout, kernel) take the defaults. Any missing,
    extra or differently shaped tensor raises InputError naming it."""
    arch = architecture(kind)
    cfg = BackboneConfig(kind=arch.kind, lookback=lookback, horizon=horizon, channels=channels)
    arch.read_sizes(cfg, tensors)
    model = build(cfg)
    want = model.state_dict()
    missing = sorted(set(want) - set(tensors))
    extra = sorted(set(tensors) - set(want))
    if missing or extra:
        raise InputError(f"The uploaded state is not a {kind} backbone: missing {missing[:4]}, unexpected "
                         f"{extra[:4]}.")
    for k, v in want.items():
        if tuple(tensors[k].shape) != tuple(v.shape):
            raise InputError(f"Tensor {k!r} has shape {tuple(tensors[k].shape)}; a {kind} backbone for input "
                             f"{lookback} x {channels} channels and horizon {horizon} needs {tuple(v.shape)}.")
    model.load_state_dict({k: t.float() for k, t in tensors.items()})
    return freeze(model)


MAX_STATE_TENSORS = 256
MAX_STATE_PARAMS = 8_000_000


def read_state(data: bytes, name: str = "the upload") -> dict[str, torch.Tensor]:
    """A safetensors file of floating-point tensors (a backbone state), decoded with ``safetensors`` only (no pickle).
    Non-safetensors bytes, non-float or non-finite tensors, and states above the size limits raise InputError."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        tensors = load(bytes(data))
    except (SafetensorError, ValueError, RuntimeError, OverflowError, MemoryError) as err:
        raise InputError(f"{name} is not a readable safetensors file ({str(err)[:120]}); save the backbone with "
                         "safetensors.torch.save_file(model.state_dict(), path).") from None
    if not tensors:
        raise InputError(f"{name} holds no tensors.")
    if len(tensors) > MAX_STATE_TENSORS or sum(t.numel() for t in tensors.values()) > MAX_STATE_PARAMS:
        raise InputError(f"{name} is larger than a backbone of this page ({MAX_STATE_TENSORS} tensors, "
                         f"{MAX_STATE_PARAMS:,} values).")
    for k, t in tensors.items():
        if not t.is_floating_point():
            raise InputError(f"Tensor {k!r} of {name} is {t.dtype}; a backbone state holds floating-point tensors.")
        if not torch.isfinite(t).all():
            raise InputError(f"Tensor {k!r} of {name} has NaN or infinite values.")
    return {k: t.float() for k, t in tensors.items()}


def config_dict(model: nn.Module) -> dict:
    return asdict(model.cfg)
