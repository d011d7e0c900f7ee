"""Training a pooling and a linear head on cached token states (the backbone is not touched), and the shipped heads
``assets/glot_heads_<variant>.safetensors`` (saved and loaded through :mod:`backend.weights`; made by
``python -m backend.train glot``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ... import weights
from ...errors import InputError
from ...runtime import Progress, report
from .backbone import HiddenStates
from .layers import GLOT, GlotConfig, Pooled, edge_density, token_graph
from .pooling import POOLINGS, build_pooler


def count_trainable(module: nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters() if p.requires_grad))


class PooledClassifier(nn.Module):
    """A pooling followed by a linear head: ``hidden [B, L, d], mask [B, L] -> logits [B, C]``."""

    def __init__(self, pooling: str, in_dim: int, n_classes: int, *, is_decoder: bool = False,
                 config: GlotConfig | None = None) -> None:
        super().__init__()
        self.pooling = pooling
        self.pooler = build_pooler(pooling, in_dim, is_decoder=is_decoder, config=config)
        self.head = nn.Linear(self.pooler.out_dim, n_classes)

    def pool(self, hidden: torch.Tensor, mask: torch.Tensor, adj: torch.Tensor | None = None) -> Pooled:
        if isinstance(self.pooler, GLOT):
            return self.pooler(hidden, mask, adj)
        return self.pooler(hidden, mask)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, adj: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(self.pool(hidden, mask, adj).z)


# ================================================================================================ head training
@dataclass(frozen=True)
class TrainConfig:
    """Head training on cached states (design for the CPU miniature: Adam lr 1e-3, batch 32; the paper's stress test
    uses lr 1e-4 for 3 epochs on Mistral-7B). ``accuracy`` = last epoch; ``best_epoch_accuracy`` = the best eval epoch,
    the number the released script prints."""

    lr: float = 1e-3
    epochs: int = 10
    batch_size: int = 32
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.epochs <= 200:
            raise InputError(f"Epochs must be between 1 and 200; got {self.epochs}.")
        if not 0 < self.lr <= 1:
            raise InputError(f"The learning rate must be in (0, 1]; got {self.lr}.")
        if not 1 <= self.batch_size <= 1024:
            raise InputError(f"The batch size must be between 1 and 1024; got {self.batch_size}.")


@dataclass
class HeadResult:
    """One trained pooling + head. Times in seconds; ``params`` = trainable parameters (pooling + head)."""

    pooling: str
    accuracy: float
    best_epoch_accuracy: float
    epoch_accuracy: list[float]
    train_loss: list[float]
    train_seconds: float
    seconds_per_epoch: float
    params: int
    seed: int
    edge_density: float | None = None
    cpu_seconds_per_epoch: float | None = None  # process CPU time (robust to other jobs on a shared machine)

    def row(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("epoch_accuracy")
        d.pop("train_loss")
        return d


def graph_for(states: HiddenStates, tau: float, batch: int = 256) -> torch.Tensor:
    """Precomputed token graphs ``[N, L, L]`` (bool) of cached states at ``tau`` (they never change in training)."""
    parts = []
    for b in range(0, len(states), batch):
        h = states.hidden[b:b + batch].float()
        parts.append(token_graph(h, states.mask[b:b + batch], tau))
    return torch.cat(parts, 0)


def _forward(model: PooledClassifier, states: HiddenStates, idx: torch.Tensor, adj: torch.Tensor | None
             ) -> torch.Tensor:
    h, m = states.batch(idx)
    a = None if adj is None else adj[idx][:, : h.shape[1], : h.shape[1]]
    return model(h, m, a)


@torch.no_grad()
def predict(model: PooledClassifier, states: HiddenStates, adj: torch.Tensor | None = None, batch: int = 128
            ) -> torch.Tensor:
    """Class predictions ``[N]`` of a trained classifier on cached states."""
    model.eval()
    out = []
    for b in range(0, len(states), batch):
        idx = torch.arange(b, min(b + batch, len(states)))
        out.append(_forward(model, states, idx, adj).argmax(-1))
    return torch.cat(out)


def train_head(
    pooling: str,
    train: HiddenStates,
    y_train: torch.Tensor,
    evals: HiddenStates,
    y_eval: torch.Tensor,
    *,
    is_decoder: bool = False,
    glot: GlotConfig | None = None,
    cfg: TrainConfig | None = None,
    seed: int = 0,
    n_classes: int | None = None,
    graphs: tuple[torch.Tensor, torch.Tensor] | None = None,
    progress: Progress | None = None,
) -> tuple[PooledClassifier, HeadResult]:
    """Train ``pooling`` + a linear head with cross-entropy on cached states (the backbone is not touched).

    ``seed`` fixes the head's initialisation and the batch order. ``graphs`` = precomputed (train, eval) token graphs
    for GLOT (see :func:`graph_for`). Returns the model and a :class:`HeadResult` with accuracy on ``evals``.
    """
    glot = glot or GlotConfig()
    cfg = cfg or TrainConfig()
    n_classes = int(n_classes or int(max(int(y_train.max()), int(y_eval.max()))) + 1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = PooledClassifier(pooling, train.hidden.shape[-1], n_classes, is_decoder=is_decoder, config=glot)
    uses_graph = isinstance(model.pooler, GLOT) and glot.num_layers > 0
    if uses_graph and graphs is None:
        graphs = (graph_for(train, glot.tau), graph_for(evals, glot.tau))
    g_train, g_eval = graphs if uses_graph else (None, None)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    gen = torch.Generator().manual_seed(seed)
    accs, losses = [], []
    train_time = cpu_time = 0.0
    for epoch in range(cfg.epochs):
        model.train()
        t0, c0 = time.perf_counter(), time.process_time()
        perm = torch.randperm(len(train), generator=gen)
        total = 0.0
        for b in range(0, len(train), cfg.batch_size):
            idx = perm[b:b + cfg.batch_size]
            loss = F.cross_entropy(_forward(model, train, idx, g_train), y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        train_time += time.perf_counter() - t0
        cpu_time += time.process_time() - c0
        losses.append(total / len(train))
        accs.append(float((predict(model, evals, g_eval) == y_eval).float().mean()))
        report(progress, (epoch + 1) / cfg.epochs, f"{pooling}: epoch {epoch + 1}/{cfg.epochs}, eval acc {accs[-1]:.3f}")
    density = None
    if isinstance(model.pooler, GLOT):
        adj = g_eval if g_eval is not None else graph_for(evals, glot.tau)
        density = float(edge_density(adj, evals.mask[:, : adj.shape[1]]).mean())
    result = HeadResult(
        pooling=pooling, accuracy=accs[-1], best_epoch_accuracy=max(accs), epoch_accuracy=accs, train_loss=losses,
        train_seconds=train_time, seconds_per_epoch=train_time / cfg.epochs, params=count_trainable(model),
        seed=int(seed), edge_density=density, cpu_seconds_per_epoch=cpu_time / cfg.epochs,
    )
    model.eval()
    return model, result


# ================================================================================================ shipped heads
MADE_BY = "python -m backend.train glot"


def save_heads(models: dict[str, PooledClassifier], path: str | Path, *, config: dict[str, Any], command: str,
               data_seeds: dict[str, Any], quality: dict[str, Any], extra: dict[str, Any] | None = None) -> Path:
    """Store trained heads as one safetensors file through :func:`backend.weights.save` (keys
    ``<pooling>.<param>``). ``config`` rebuilds them: ``backbone, hidden_size, is_decoder, n_classes, poolings,
    glot_config, max_tokens``; ``data_seeds``: the stress-test split they were trained on; ``quality``: their eval
    accuracies."""
    state = {f"{name}.{k}": v for name, m in models.items() for k, v in m.state_dict().items()}
    return weights.save(path, state, config={**config, "poolings": list(models)}, command=command,
                        data_seeds=data_seeds, quality=quality, extra=extra)


def load_heads(path: str | Path, in_dim: int | None = None) -> tuple[dict[str, PooledClassifier], weights.WeightsMeta]:
    """Load heads written by :func:`save_heads` (through :func:`backend.weights.load`). Returns ``(models, meta)``."""
    tensors, meta = weights.load(path, made_by=MADE_BY)
    cfg = meta.config
    glot = GlotConfig(**cfg["glot_config"])
    models = {}
    for name in cfg["poolings"]:
        model = PooledClassifier(name, in_dim or int(cfg["hidden_size"]), int(cfg.get("n_classes", 2)),
                                 is_decoder=bool(cfg.get("is_decoder", False)), config=glot)
        prefix = f"{name}."
        model.load_state_dict({k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)})
        model.eval()
        models[name] = model
    return models, meta


def evaluate_heads(models: dict[str, PooledClassifier], states: HiddenStates, labels: list[int], tau: float
                   ) -> dict[str, float]:
    """Accuracy of each loaded head on cached states."""
    y = torch.tensor(labels)
    adj = graph_for(states, tau)
    return {name: float((predict(m, states, adj if POOLINGS[name].graph else None) == y).float().mean())
            for name, m in models.items()}


__all__ = ["MADE_BY", "HeadResult", "PooledClassifier", "TrainConfig", "count_trainable", "evaluate_heads", "graph_for",
           "load_heads", "predict", "save_heads", "train_head"]
