"""Decision-pretrained transformer with a permutation-invariant context and a rectified-flow action head.

Papers: "Vintix II: Decision Pre-Trained Transformer is a Scalable In-Context Reinforcement Learner" (dunnolab) and
DPT, Lee et al., "Supervised Pretraining Can Learn In-Context Reinforcement Learning" (NeurIPS 2023, arXiv 2306.14892).

What is implemented: the DPT objective (maximise ``log pi(a*_tau | query, D)`` for tasks ``tau`` of a prior, an
unordered context ``D`` of (observation, action, reward) tuples from a noisy demonstrator and ``a*`` the task's
optimal action), Vintix II's model layout: BOS + query + context tokens, no positional encodings, per-family MLP
encoders of the context and query tokens and per-family decoders (a discrete head for the K-armed bandits and the
dark room, a continuous head from ``heads.HEADS`` for the 1-D continuous bandits), and the loss at every prefix
length ``l = 0..L`` (all L + 1) in one forward pass. A small nanoGPT-style trunk (pre-LayerNorm blocks, 2 layers,
d = 64, 4 heads).

Permutation invariance (exact, by the attention mask). The sequence is ``[BOS, c_1..c_L, q_0..q_L]``: ``q_l`` is a
copy of the query token that reads the prefix ``c_1..c_l``. The mask lets

* BOS attend to BOS only,
* every context token ``c_i`` attend to BOS and to itself only,
* every query copy ``q_l`` attend to BOS, to ``c_1..c_l`` and to itself.

So a context token's hidden state is a function of that token alone (no positions, no other context token), and the
query's hidden state is a function of the SET of context tokens it sees (attention is a softmax-weighted sum over
them). Shuffling the context within a prefix leaves every output unchanged up to float summation order. The next
observation is dropped from the tuples (Vintix II).

Left out: Vintix II's scale (928M parameters, 209 tasks, Meta-World / MuJoCo data), its group of continuous
observation encoders for many environments and the offline expert prompts; here three procedural families
(``tasks.py``) at CPU scale.

Shapes: ``context`` (B, L, F_family), ``query`` (B, Q_family) -> ``hidden`` (B, L + 1, d) with ``all_prefixes`` (the
query copy of every prefix length), else (B, d) for the full context. ``logits`` (B, ..., A) with invalid actions set
to ``-inf``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .heads import HEADS, make_head
from .tasks import CONTEXT_FEATURES, N_ACTIONS, QUERY_FEATURES, Batch


@dataclass
class DPTConfig:
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4
    mlp_ratio: int = 4
    max_context: int = 64
    head: str = "flow"  # continuous head: flow | gaussian | mixture
    head_hidden: int = 128  # Gaussian and mixture heads
    flow_hidden: int = 256
    flow_layers: int = 3
    x_freq: int = 8  # Fourier features of the flow head's noisy action
    flow_steps: int = 16  # M, Heun steps
    n_freq: int = 16
    flow_draws: int = 8  # (x_0, t) pairs per target in the flow loss
    components: int = 5

    def to_dict(self) -> dict:
        return asdict(self)


class Block(nn.Module):
    def __init__(self, cfg: DPTConfig):
        super().__init__()
        d = cfg.d_model
        self.n_head = cfg.n_head
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, cfg.mlp_ratio * d), nn.GELU(), nn.Linear(cfg.mlp_ratio * d, d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.n_head, d // self.n_head).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


def invariant_mask(length: int, all_prefixes: bool = True) -> torch.Tensor:
    """Boolean (T, T) mask, True = may attend, for ``[BOS, c_1..c_L, q_0..q_L]`` (or ``[BOS, c_1..c_L, q]``)."""
    nq = length + 1 if all_prefixes else 1
    t = 1 + length + nq
    m = torch.zeros(t, t, dtype=torch.bool)
    m[:, 0] = True  # everyone sees BOS
    idx = torch.arange(t)
    m[idx, idx] = True  # and itself
    for j in range(nq):
        seen = j if all_prefixes else length
        m[1 + length + j, 1 : 1 + seen] = True
    return m


class DPT(nn.Module):
    def __init__(self, cfg: DPTConfig | None = None):
        super().__init__()
        self.cfg = cfg = cfg or DPTConfig()
        d = cfg.d_model
        self.bos = nn.Parameter(torch.randn(d) * 0.02)
        self.ctx_enc = nn.ModuleDict(
            {f: nn.Sequential(nn.Linear(n, d), nn.GELU(), nn.Linear(d, d)) for f, n in CONTEXT_FEATURES.items()}
        )
        self.query_enc = nn.ModuleDict({f: nn.Linear(n, d) for f, n in QUERY_FEATURES.items()})
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.discrete = nn.ModuleDict({f: nn.Linear(d, n) for f, n in N_ACTIONS.items()})
        self.cont_head = make_head(
            cfg.head,
            d,
            hidden=cfg.flow_hidden if HEADS.kind(cfg.head) == "ours" else cfg.head_hidden,
            layers=cfg.flow_layers,
            x_freq=cfg.x_freq,
            n_freq=cfg.n_freq,
            steps=cfg.flow_steps,
            draws=cfg.flow_draws,
            components=cfg.components,
        )

    def hidden(self, family: str, context: torch.Tensor, query: torch.Tensor, all_prefixes: bool = True):
        """(B, L + 1, d) hidden states of the query copies (prefix lengths 0..L), or (B, d) for the whole context."""
        b, length, _ = context.shape
        c = self.ctx_enc[family](context)
        q = self.query_enc[family](query)[:, None, :]
        nq = length + 1 if all_prefixes else 1
        x = torch.cat([self.bos.expand(b, 1, -1), c, q.expand(-1, nq, -1)], 1)
        mask = invariant_mask(length, all_prefixes)
        for blk in self.blocks:
            x = blk(x, mask)
        h = self.ln_f(x[:, 1 + length :])
        return h if all_prefixes else h[:, 0]

    def logits(self, family: str, h: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        z = self.discrete[family](h)
        if mask is not None:
            m = mask if z.dim() == mask.dim() else mask[:, None, :]
            z = z.masked_fill(~m, float("-inf"))
        return z

    def loss(self, batch: Batch) -> torch.Tensor:
        """The DPT loss averaged over the batch and over all L + 1 prefix lengths."""
        h = self.hidden(batch.family, batch.context, batch.query)  # (B, L+1, d)
        b, n, d = h.shape
        if batch.family == "cont":
            return self.cont_head.loss(h.reshape(b * n, d), batch.target[:, None].expand(b, n).reshape(-1))
        z = self.logits(batch.family, h, batch.mask)
        return F.cross_entropy(z.reshape(b * n, -1), batch.target[:, None].expand(b, n).reshape(-1))

    @torch.no_grad()
    def action_probs(
        self,
        family: str,
        context: torch.Tensor,
        query: torch.Tensor,
        mask: torch.Tensor | None = None,
        all_prefixes: bool = False,
    ) -> torch.Tensor:
        """Discrete policy: (B, A) for the whole context, (B, L + 1, A) with ``all_prefixes``."""
        return self.logits(family, self.hidden(family, context, query, all_prefixes), mask).softmax(-1)

    @torch.no_grad()
    def sample_actions(
        self,
        context: torch.Tensor,
        n: int,
        generator: torch.Generator | None = None,
        all_prefixes: bool = False,
        lengths: list[int] | None = None,
    ) -> torch.Tensor:
        """Continuous actions for the ``cont`` family: (B, n) given the whole context; with ``all_prefixes`` (B, L + 1,
        n) for every prefix length, or (B, len(lengths), n) for the prefix lengths ``lengths`` only."""
        b = context.shape[0]
        q = torch.ones(b, QUERY_FEATURES["cont"])
        if not all_prefixes:
            return self.cont_head.sample(self.hidden("cont", context, q, False), n, generator=generator)
        h = self.hidden("cont", context, q, True)
        if lengths is not None:
            h = h[:, list(lengths)]
        return self.cont_head.sample(h.reshape(-1, h.shape[-1]), n, generator=generator).reshape(b, -1, n)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
