"""The shipped checkpoints of both arms and the training log (``python -m backend.train bridge``).

``assets/bridge_checkpoints.safetensors`` holds, per trained arm (:class:`Arm`) and seed, only the tensors
training changed: :data:`TRAIN_BASE` (the last decoder layer's feed-forward output projection, trained in both arms)
and, for the Bridge arm, its blocks; keys ``<arm>.s<seed>.<name>``. :func:`load_arm` rebuilds a model (an :class:`Arm` is called with the reasoner and seed): the shipped
tiny reasoner with those tensors put back. ``assets/bridge_log.json`` holds the held-out accuracy against rollout
tokens of every run and the final per-problem evaluation at :data:`WIDTHS` (and the untrained base's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...errors import InputError
from ...runtime import ASSETS
from ..tasks import HARD_OPS

CHECKPOINTS = ASSETS / "bridge_checkpoints.safetensors"
LOG_FILE = ASSETS / "bridge_log.json"
COMMAND = "python -m backend.train bridge"
TRAIN_BASE = ("model.layers.3.mlp.down_proj.weight",)
WIDTHS = (1, 2, 4, 8)
EVAL_SEED = 7
TRAIN_WIDTH = 4
LOG_PROBLEMS = 24  # held-out problems of the log's final evaluation
#: Operations per problem of every Bridge training and evaluation problem (the grammar's hard half).
OPS = HARD_OPS


def eval_problems(n: int = 24) -> list[Any]:
    """The held-out problems of the final evaluation: ``grammar`` split, :data:`OPS` operations, generator seed 2024
    (the training problems use seeds 100 and 200-202)."""
    from ..tasks import generate

    return generate(n, "grammar", seed=2024, steps=OPS)


@lru_cache(maxsize=1)
def _tensors() -> tuple[dict[str, Any], dict[str, Any]]:
    from ... import weights

    if not CHECKPOINTS.is_file():
        raise InputError(f"The Bridge checkpoints are missing: run `{COMMAND}`.")
    tensors, meta = weights.load(CHECKPOINTS, made_by=COMMAND)
    return tensors, meta.config


def read_log() -> dict[str, Any]:
    """The training log (a clear message when it is missing)."""
    if not LOG_FILE.is_file():
        raise InputError(f"The Bridge training log is missing: run `{COMMAND}`.")
    return json.loads(LOG_FILE.read_text())


def seeds() -> list[int]:
    return [int(s) for s in _tensors()[1].get("seeds", [0])]


@dataclass(frozen=True)
class Arm:
    """A generation mode's model: a trained arm of the checkpoint file (``key``, its prefix there and in the log),
    with or without Bridge blocks, or the untrained base model (``key`` None). ``arm(reasoner, seed)`` builds it."""

    key: str | None
    bridge: bool

    @property
    def trained(self) -> bool:
        return self.key is not None

    def run_key(self, seed: int) -> str:
        """The arm's run of training seed ``seed`` in the log."""
        return f"{self.key}_s{int(seed)}"

    def __call__(self, reasoner: Any, seed: int = 0) -> Any:
        return load_arm(reasoner, self, seed)


def load_arm(reasoner: Any, arm: Arm, seed: int = 0) -> Any:
    """The model of ``arm`` and training seed ``seed``: a :class:`BridgedLM` over a copy of ``reasoner``'s model with
    the arm's trained tensors put back (the untrained base model for an arm without ``key``)."""
    from .model import BridgeConfig, bridged_from_reasoner

    if not arm.trained:
        return bridged_from_reasoner(reasoner, bridge=False)
    tensors, config = _tensors()
    if int(seed) not in seeds():
        raise InputError(f"No checkpoint for seed {seed}; the shipped seeds are {seeds()}.")
    model = bridged_from_reasoner(reasoner, BridgeConfig(**config.get("bridge", {})), bridge=arm.bridge)
    prefix = f"{arm.key}.s{int(seed)}."
    state = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
    missing = [k for k in state if k not in model.state_dict()]
    if missing or not state:
        raise InputError(f"The Bridge checkpoint file does not match the model (keys {missing[:3]}): rerun `{COMMAND}`.")
    model.load_state_dict(state, strict=False)
    model.eval()
    return model
