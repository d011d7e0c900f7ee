"""Bridge blocks and the bridged causal LM.

A batch of hidden states of N parallel samples of B prompts is one tensor [B, N, S, D] (prompts x samples x positions
x width). A transformer mixes along S (causal self-attention) and along D (the feed-forward layers); a Bridge block
mixes along N: after each decoder layer's feed-forward residual, every sample attends to the N samples of its own
prompt at the same position (a N x N attention per prompt, position and head; no positional encoding, so the block is
permutation-equivariant along N and works at any width; no cache: it reads only the current position, so the next
tokens stay conditionally independent given the states and sampling stays parallel).

How a sample's attention to itself enters: the attention weights a_ij are a softmax over all N samples (itself
included), and the message is ``sum_j a_ij (v_j - v_i)``: each sample receives what the others hold that it lacks.
Its own value cancels, so

- at width 1 (a_ii = 1) the message is exactly 0 and the model is the base model;
- N identical states (the shared prompt) exchange nothing, so the prompt's states equal the base model's;
- keys of other prompts are never seen (the attention is per prompt) and keys of finished rows (a ``<pad>`` input or
  attention mask 0) are masked; a sample always sees itself, so a softmax is never empty.

``h <- h + W_o(message)`` with W_o initialised to zero: at initialisation the model is the base model at every width.

- :class:`BridgeConfig` (heads, head width), :class:`BridgeBlock` ``(h [G, N, S, D], valid [G, N, S]) -> [G, N, S, D]``.
- :class:`BridgedLM` wraps a transformers Llama causal LM (the tiny reasoner's): a forward hook after every decoder
  layer adds its block's output. Mixing is on only inside ``with model.grouped(n, rows)``: a call whose batch has
  ``rows`` = B n rows (group-major: rows b n .. b n + n - 1 are prompt b's, the sampling engine's and GRPO's layout)
  is mixed in groups of n; any other call (the engine's prefill of the B prompts) runs the base model, which is the
  same thing for identical prompt states. ``bridge=False`` builds the same wrapper without blocks (the independent
  arm).
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from ...errors import InputError


@dataclass(frozen=True)
class BridgeConfig:
    """A Bridge block's attention: ``heads`` heads of ``head_dim`` each (the paper adds 2.8-5.1 % parameters; the
    default adds about 3.9 % to the tiny reasoner)."""

    heads: int = 2
    head_dim: int = 12
    eps: float = 1e-6

    def __post_init__(self) -> None:
        if not 1 <= self.heads <= 16 or not 1 <= self.head_dim <= 256:
            raise InputError(f"Bridge heads must be 1-16 and head_dim 1-256; got {self.heads}, {self.head_dim}.")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class BridgeBlock(nn.Module):
    """Attention across the N samples of each prompt at the same position (see the module docstring)."""

    def __init__(self, hidden: int, config: BridgeConfig):
        super().__init__()
        inner = config.heads * config.head_dim
        self.heads, self.head_dim = config.heads, config.head_dim
        self.norm = nn.RMSNorm(hidden, eps=config.eps)
        self.q = nn.Linear(hidden, inner, bias=False)
        self.k = nn.Linear(hidden, inner, bias=False)
        self.v = nn.Linear(hidden, inner, bias=False)
        self.o = nn.Linear(inner, hidden, bias=False)
        nn.init.zeros_(self.o.weight)

    def forward(self, h: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``h`` [G, N, S, D] (G prompts, N samples), ``valid`` [G, N, S] bool (None = all) -> the update [G, N, S, D]."""
        G, N, S, D = h.shape
        x = self.norm(h)

        def split(t: torch.Tensor) -> torch.Tensor:  # [G, N, S, H*d] -> [G, S, H, N, d]
            return t.view(G, N, S, self.heads, self.head_dim).permute(0, 2, 3, 1, 4)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)          # [G, S, H, N(i), N(j)]
        if valid is not None:
            keys = valid.permute(0, 2, 1)[:, :, None, None, :]                # [G, S, 1, 1, N(j)]
            eye = torch.eye(N, dtype=torch.bool, device=h.device)
            scores = scores.masked_fill(~(keys | eye), float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        msg = attn @ v - v                                                     # sum_j a_ij (v_j - v_i)
        if valid is not None:
            msg = msg * valid.permute(0, 2, 1)[:, :, None, :, None].to(msg.dtype)
        msg = msg.permute(0, 3, 1, 2, 4).reshape(G, N, S, self.heads * self.head_dim)
        return self.o(msg)


class BridgedLM(nn.Module):
    """A copy of a transformers Llama causal LM with a Bridge block after every decoder layer (``bridge=True``) or
    without (``bridge=False``: the same interface, the base model). ``pad_id`` marks finished rows."""

    def __init__(self, base: Any, pad_id: int, config: BridgeConfig | None = None, bridge: bool = True,
                 copy_base: bool = True):
        super().__init__()
        self.base = copy.deepcopy(base) if copy_base else base
        self.pad_id = int(pad_id)
        self.bridge_config = config or BridgeConfig()
        layers = self.base.model.layers
        hidden = int(self.base.config.hidden_size)
        self.blocks = nn.ModuleList([BridgeBlock(hidden, self.bridge_config) for _ in layers]) if bridge else None
        self._groups: tuple[int, int] | None = None
        self._valid: torch.Tensor | None = None
        if bridge:
            for i, layer in enumerate(layers):
                layer.register_forward_hook(self._hook(i))

    @property
    def config(self) -> Any:
        return self.base.config

    @property
    def has_bridge(self) -> bool:
        return self.blocks is not None

    def get_input_embeddings(self) -> Any:
        return self.base.get_input_embeddings()

    def bridge_parameters(self) -> int:
        return sum(p.numel() for p in self.blocks.parameters()) if self.blocks is not None else 0

    def base_parameters(self) -> int:
        return sum(p.numel() for p in self.base.parameters())

    @contextlib.contextmanager
    def grouped(self, n: int, rows: int) -> Iterator[None]:
        """Mix calls whose batch has ``rows`` rows in groups of ``n`` consecutive rows (``rows`` a multiple of n)."""
        if n < 1 or rows % n:
            raise InputError(f"{rows} rows cannot be split into groups of {n} samples.")
        old, self._groups = self._groups, (int(n), int(rows))
        try:
            yield
        finally:
            self._groups = old

    def _hook(self, i: int) -> Any:
        def hook(module: Any, args: Any, output: Any) -> Any:
            g = self._groups
            h = output[0] if isinstance(output, tuple) else output
            if g is None or g[0] == 1 or h.shape[0] != g[1]:
                return None
            n = g[0]
            R, S, D = h.shape
            valid = None if self._valid is None else self._valid.view(R // n, n, S)
            new = h + self.blocks[i](h.view(R // n, n, S, D), valid).view(R, S, D)
            return (new, *output[1:]) if isinstance(output, tuple) else new
        return hook

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, **kw: Any) -> Any:
        valid = input_ids != self.pad_id
        if attention_mask is not None:
            valid = valid & attention_mask[:, -input_ids.shape[1]:].bool()
        self._valid = valid
        try:
            return self.base(input_ids=input_ids, attention_mask=attention_mask, **kw)
        finally:
            self._valid = None

    def trainable_state(self, base_names: tuple[str, ...]) -> dict[str, torch.Tensor]:
        """The tensors a checkpoint ships: the named base tensors and every Bridge block's."""
        state = {k: v for k, v in self.state_dict().items() if k.startswith("blocks.")}
        full = self.base.state_dict()
        for name in base_names:
            state[f"base.{name}"] = full[name]
        return state


def bridged_from_reasoner(reasoner: Any, config: BridgeConfig | None = None, bridge: bool = True) -> BridgedLM:
    """A :class:`BridgedLM` over a copy of the tiny reasoner's model (the reasoner itself is left unchanged)."""
    m = BridgedLM(reasoner.model, reasoner.tokenizer.pad_token_id, config, bridge)
    m.eval()
    return m
