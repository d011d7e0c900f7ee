"""GLOT: sentence vectors by pooling over a token graph of a frozen language model.

Paper: "Towards Improved Sentence Representations using Token Graphs", Mantri, Schönlieb, Lähner, Eliasof. ICLR 2026,
arXiv 2603.03389 (OpenReview stMX9KBhUI). Official code: github.com/ipsitmantri/GLOT (``main.py``,
``diagnostic_stress_test.py``); this is our own dense, pure-torch reimplementation of its algorithm.

Algorithm (per text, on the last hidden states ``H [L, d]`` of a frozen backbone and its attention mask):

1. Graph over the valid tokens: ``S_ij = cos(h_i, h_j)``, ``A_ij = 1`` iff ``S_ij > tau`` (strict). Self-loops are kept
   (the diagonal passes for tau < 1 and the GAT layer adds them anyway). The released code gives every edge the constant
   attribute 1, which cannot change a GAT softmax, so the graph is unweighted here and the unused edge projection of
   ``GATConv(edge_dim=1)`` is left out.
2. ``K`` single-head GAT layers, each followed by ReLU: ``g_i = W u_i``, ``e_ij = LeakyReLU_0.2(a_dst.g_i + a_src.g_j)``
   for ``j`` in ``N(i)`` (self included), ``alpha_ij = softmax_j e_ij``, ``u'_i = sum_j alpha_ij g_j + b``.
   Implemented densely: attention logits on ``[B, L, L]`` masked by ``A`` (no graph library).
3. Jumping knowledge "cat": ``U = [H, H_1, ..., H_K]`` of width ``d + K * hidden`` (also "max" / "mean" as in the code).
4. Readout (AdaPool form): ``m_i = v^T tanh(W_r u_i + b)`` with scorer width ``max(128, D // 2)``, ``pi = softmax(m)``
   over the valid tokens, ``z = sum_i pi_i u_i``.
5. A linear task head on ``z`` (cross-entropy).

The backbone's hidden states are computed once and cached (:func:`encode`), so training touches only the pooling and the
head. Left out: the GCN/GIN/GINE alternatives of the code (the paper's runs use GAT), the STS-B/MTEB heads (no GLUE or
MTEB data offline), multi-head attention and dropout (the released layer is single-head without dropout).

Defaults (:class:`GlotConfig`) are the CPU miniature of the spec: K = 2, GAT hidden 64, tau 0.6, JK "cat". The paper's
stress test uses K = 4, hidden 64, tau 0.6 (``PAPER_STRESS``); its GLUE runs K = 2, hidden 256, tau 0.8 (``PAPER_GLUE``).
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import InputError
from ..runtime import Progress, report, sub_progress
from . import stress
from .stress import LabelledTexts, graph_effect, parse_labelled_csv, split_indices  # noqa: F401 - re-exported
from .pooling import POOLINGS, AttentionReadout, Pooled, build_pooler, masked_max, masked_mean

# ================================================================================================== the method
@dataclass(frozen=True)
class GlotConfig:
    """GLOT's pooling settings. ``scorer_hidden=None`` = the released rule ``max(128, D // 2)``."""

    num_layers: int = 2  # K, the number of GAT layers
    gat_hidden: int = 64
    tau: float = 0.6  # cosine threshold of the token graph (strict: an edge when cos > tau)
    jk: str = "cat"  # jumping knowledge: "cat" | "max" | "mean"
    negative_slope: float = 0.2
    scorer_hidden: int | None = None

    def __post_init__(self) -> None:
        if self.num_layers < 0 or self.num_layers > 8:
            raise InputError(f"K (GAT layers) must be between 0 and 8; got {self.num_layers}.")
        if not 1 <= self.gat_hidden <= 1024:
            raise InputError(f"The GAT hidden size must be between 1 and 1024; got {self.gat_hidden}.")
        if not -1.0 <= self.tau <= 1.0:
            raise InputError(f"tau is a cosine threshold in [-1, 1]; got {self.tau}.")
        if self.jk not in ("cat", "max", "mean"):
            raise InputError(f"Unknown jumping-knowledge mode '{self.jk}'. Valid modes: cat, max, mean.")
        if self.jk != "cat" and self.num_layers == 0:
            raise InputError("JK 'max'/'mean' needs at least one GAT layer (K >= 1).")


PAPER_STRESS = GlotConfig(num_layers=4, gat_hidden=64, tau=0.6)
PAPER_GLUE = GlotConfig(num_layers=2, gat_hidden=256, tau=0.8)


def cosine_matrix(hidden: torch.Tensor) -> torch.Tensor:
    """``[B, L, d] -> [B, L, L]`` cosine similarities of the token states."""
    x = F.normalize(hidden.float(), dim=-1, eps=1e-8)
    return x @ x.transpose(1, 2)


def token_graph(hidden: torch.Tensor, mask: torch.Tensor, tau: float) -> torch.Tensor:
    """The binary token graph ``A [B, L, L]`` (bool): ``cos(h_i, h_j) > tau`` between valid tokens, self-loops on every
    valid token, nothing on padding. Symmetric; the edge count is non-increasing in ``tau``."""
    valid = mask.bool()
    pair = valid.unsqueeze(2) & valid.unsqueeze(1)
    adj = (cosine_matrix(hidden) > tau) & pair
    eye = torch.eye(hidden.shape[1], dtype=torch.bool, device=hidden.device).unsqueeze(0)
    return adj | (eye & valid.unsqueeze(2))


def edge_density(adj: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B]``: the fraction of ordered pairs ``i != j`` of valid tokens that are linked (self-loops not counted)."""
    n = mask.bool().sum(1).float()
    eye = torch.eye(adj.shape[1], dtype=torch.bool, device=adj.device).unsqueeze(0)
    edges = (adj & ~eye).sum((1, 2)).float()
    return edges / (n * (n - 1)).clamp_min(1.0)


class DenseGATLayer(nn.Module):
    """One single-head GAT layer on a dense adjacency (GATConv semantics: shared linear map, attention vectors for the
    target and the source node, LeakyReLU, softmax over the neighbours including the node itself, output bias).

    ``u [B, L, d_in], adj [B, L, L] (bool, self-loops included) -> [B, L, d_out]``. Rows of padding (no neighbour)
    give the bias only; they are masked out downstream.
    """

    def __init__(self, in_dim: int, out_dim: int, negative_slope: float = 0.2) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.att_src = nn.Parameter(torch.empty(out_dim))
        self.att_dst = nn.Parameter(torch.empty(out_dim))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.negative_slope = negative_slope
        nn.init.xavier_uniform_(self.lin.weight)
        bound = math.sqrt(6.0 / (1 + out_dim))  # glorot on a [1, out_dim] attention vector, as in the code
        nn.init.uniform_(self.att_src, -bound, bound)
        nn.init.uniform_(self.att_dst, -bound, bound)

    def attention(self, g: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        """``alpha [B, L, L]``: row i = attention of target i over its neighbours j (0 off the graph)."""
        logits = (g @ self.att_dst).unsqueeze(2) + (g @ self.att_src).unsqueeze(1)
        logits = F.leaky_relu(logits, self.negative_slope).masked_fill(~adj, float("-inf"))
        alpha = torch.softmax(logits, dim=-1)
        return torch.nan_to_num(alpha, nan=0.0)  # padding rows have no neighbour at all

    def forward(self, u: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        g = self.lin(u)
        return self.attention(g, adj) @ g + self.bias


class GLOT(nn.Module):
    """GLOT pooling: token graph -> K GAT layers with ReLU -> jumping knowledge -> attention readout.

    ``forward(hidden [B, L, d], mask [B, L], adj=None) -> Pooled(z [B, D], weights [B, L])`` with ``D = d + K * hidden``
    for JK "cat" (``hidden`` for "max"/"mean"). ``adj`` may be passed precomputed (it depends only on the frozen states
    and tau); else it is built from ``hidden`` with ``config.tau``.
    """

    def __init__(self, in_dim: int, config: GlotConfig | None = None) -> None:
        super().__init__()
        self.config = cfg = config or GlotConfig()
        self.in_dim = in_dim
        dims = [in_dim] + [cfg.gat_hidden] * cfg.num_layers
        self.convs = nn.ModuleList(DenseGATLayer(a, b, cfg.negative_slope) for a, b in zip(dims[:-1], dims[1:]))
        self.out_dim = in_dim + cfg.num_layers * cfg.gat_hidden if cfg.jk == "cat" else cfg.gat_hidden
        self.readout = AttentionReadout(self.out_dim, cfg.scorer_hidden)

    def refine(self, hidden: torch.Tensor, mask: torch.Tensor, adj: torch.Tensor | None = None) -> torch.Tensor:
        """The token features ``U [B, L, D]`` fed to the readout (input and every GAT layer, combined by JK)."""
        if adj is None:
            adj = token_graph(hidden, mask, self.config.tau)
        states = [hidden]
        h = hidden
        for conv in self.convs:
            h = F.relu(conv(h, adj))
            states.append(h)
        if self.config.jk == "cat":
            return torch.cat(states, dim=-1)
        stacked = torch.stack(states[1:], dim=-1)
        return stacked.amax(-1) if self.config.jk == "max" else stacked.mean(-1)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, adj: torch.Tensor | None = None) -> Pooled:
        return self.readout(self.refine(hidden, mask, adj), mask)


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


# ============================================================================================ frozen backbones
DECODER_TYPES = {"gpt2", "gptj", "gpt_neo", "gpt_neox", "llama", "mistral", "qwen2", "qwen3", "phi", "phi3", "gemma",
                 "gemma2", "gemma3", "falcon", "mpt", "olmo", "smollm3", "opt", "bloom"}
BACKBONES = ("minilm", "smollm2")


@dataclass
class Backbone:
    """A frozen model that turns texts into token states. ``is_decoder``: CLS pooling takes the last valid token."""

    key: str
    tokenizer: Any
    model: Any  # the base transformer (no LM head)
    is_decoder: bool
    source: str

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def num_parameters(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))


def is_decoder_config(config: Any) -> bool:
    if getattr(config, "is_decoder", False) or getattr(config, "model_type", "") in DECODER_TYPES:
        return True
    return any("CausalLM" in a for a in (getattr(config, "architectures", None) or []))


def wrap_backbone(obj: Any, key: str, is_decoder: bool | None = None) -> Backbone:
    """Wrap a loaded ``TextEncoder`` / ``CausalLM`` of :mod:`backend.models` (or anything with ``.tokenizer`` and
    ``.model``) as a frozen :class:`Backbone`. The tokenizer gets a pad token (EOS) and right padding if it lacks them."""
    model = getattr(obj.model, "base_model", obj.model)
    dec = is_decoder_config(obj.model.config) if is_decoder is None else is_decoder
    tok = obj.tokenizer
    if tok.pad_token is None:
        if tok.eos_token is None:
            raise InputError(f"The tokenizer of {key} has neither a pad nor an end-of-text token; it cannot batch texts.")
        tok.pad_token = tok.eos_token
    tok.padding_side = "right"
    model.eval()  # frozen: states are computed under inference_mode; LoRA works on a copy
    return Backbone(key=key, tokenizer=tok, model=model, is_decoder=dec, source=str(getattr(obj, "source", key)))


def backbone_kind(name: str | None) -> str:
    """Which loader of :mod:`backend.models` serves ``name``: ``minilm`` (encoders) or ``smollm2`` (decoders).
    Reads only the config (``InputError`` when the model is not found offline)."""
    name = (name or "minilm").strip()
    if name in BACKBONES:
        return name
    from ..models._common import resolve_source

    folder = resolve_source(name, "backbone")
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as err:  # noqa: BLE001
        raise InputError(f"Could not read the config of '{name}': {str(err).splitlines()[0][:200]}") from err
    return "smollm2" if is_decoder_config(config) else "minilm"


_LOADED: OrderedDict[str, Backbone] = OrderedDict()


def load_backbone(name: str | None = "minilm") -> Backbone:
    """``minilm`` (default, encoder), ``smollm2`` (decoder) or a local folder / cached hub name of any transformers
    model (encoder or decoder, detected from its config). Raises :class:`InputError` when it cannot be loaded.
    The last two backbones stay loaded in-process (CLI runs, tests); pages pass their cached models instead."""
    from .. import models

    name = (name or "minilm").strip()
    if name in _LOADED:
        _LOADED.move_to_end(name)
        return _LOADED[name]
    kind = backbone_kind(name)
    if name in BACKBONES:
        bb = wrap_backbone(models.load(name), name)
    else:
        bb = wrap_backbone(models.load(kind, name), name, is_decoder=kind == "smollm2")
    _LOADED[name] = bb
    while len(_LOADED) > 2:
        _LOADED.popitem(last=False)
    return bb


@dataclass
class HiddenStates:
    """Cached token states of a list of texts: ``hidden [N, L, d]`` (float16), ``mask [N, L]`` (bool),
    ``input_ids [N, L]`` (int32), ``seconds`` spent in the backbone."""

    hidden: torch.Tensor
    mask: torch.Tensor
    input_ids: torch.Tensor
    seconds: float
    backbone: str
    truncated: int = 0  # texts longer than max_tokens (cut)

    def __len__(self) -> int:
        return int(self.hidden.shape[0])

    def batch(self, idx: torch.Tensor | slice) -> tuple[torch.Tensor, torch.Tensor]:
        """Float32 states and mask of the rows ``idx``, cropped to their longest text."""
        mask = self.mask[idx]
        length = max(1, int(mask.sum(1).max()))
        return self.hidden[idx, :length].float(), mask[:, :length]

    @property
    def nbytes(self) -> int:
        return int(self.hidden.numel() * 2 + self.mask.numel() + self.input_ids.numel() * 4)


_CACHE: OrderedDict[tuple, HiddenStates] = OrderedDict()


def cache_limit_bytes() -> int:
    """The bound of the in-process hidden-state cache (``$METHOD_LAB_GLOT_CACHE_MB``, default 1500 MB)."""
    try:
        return int(float(os.environ.get("METHOD_LAB_GLOT_CACHE_MB", "1500")) * 2**20)
    except ValueError:
        return 1500 * 2**20


def clear_cache() -> None:
    _CACHE.clear()


def _texts_key(texts: list[str]) -> str:
    h = hashlib.sha1()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _disk_path(states_dir: str, backbone: Backbone, max_tokens: int, texts_key: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in backbone.key)[-60:]
    return os.path.join(states_dir, f"{safe}_{int(max_tokens)}_{texts_key[:20]}.pt")


def _save_states(states: HiddenStates, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"hidden": states.hidden, "mask": states.mask, "input_ids": states.input_ids,
                "seconds": torch.tensor(states.seconds), "truncated": torch.tensor(states.truncated)}, tmp)
    os.replace(tmp, path)


def _load_states(path: str, backbone: Backbone) -> HiddenStates:
    d = torch.load(path, map_location="cpu", weights_only=True)
    return HiddenStates(d["hidden"], d["mask"], d["input_ids"], float(d["seconds"]), backbone.key, int(d["truncated"]))


def encode(backbone: Backbone, texts: list[str], max_tokens: int = 160, batch_size: int = 32,
           progress: Progress | None = None, use_cache: bool = True, states_dir: str | None = None) -> HiddenStates:
    """Run the frozen backbone once over ``texts`` (sorted by length into batches) and keep the last hidden states.

    Results are cached in-process by (backbone, max_tokens, texts), least recently used first out, within
    :func:`cache_limit_bytes`. ``max_tokens`` includes special tokens (160 keeps every 128-word stress text whole).
    ``states_dir`` (training scripts only) also keeps them on disk, keyed by backbone, max_tokens and the texts' sha1;
    they are read back with ``torch.load(weights_only=True)``.
    """
    if not texts:
        raise InputError("No texts to encode.")
    tkey = _texts_key(texts)
    key = (backbone.key, id(backbone.model), int(max_tokens), tkey)
    if use_cache and key in _CACHE:
        _CACHE.move_to_end(key)
        report(progress, 1.0, "hidden states from the cache")
        return _CACHE[key]
    disk = _disk_path(states_dir, backbone, max_tokens, tkey) if states_dir else None
    if disk and os.path.isfile(disk):
        states = _load_states(disk, backbone)
        report(progress, 1.0, "hidden states from disk")
        if use_cache:
            _CACHE[key] = states
        return states
    tok = backbone.tokenizer
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunks: list[tuple[list[int], torch.Tensor, torch.Tensor]] = []
    truncated = 0
    start = time.perf_counter()
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            rows = order[b:b + batch_size]
            enc = tok([texts[i] for i in rows], padding=True, truncation=True, max_length=int(max_tokens),
                      return_tensors="pt", return_overflowing_tokens=False)
            full = tok([texts[i] for i in rows], truncation=False, add_special_tokens=True)["input_ids"]
            truncated += sum(len(x) > max_tokens for x in full)
            out = backbone.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])
            chunks.append((rows, out.last_hidden_state.to(torch.float16), enc["attention_mask"].bool(),
                           enc["input_ids"].to(torch.int32)))
            report(progress, (b + len(rows)) / len(order), f"{backbone.key}: {b + len(rows)}/{len(order)} texts")
    seconds = time.perf_counter() - start
    length = max(c[1].shape[1] for c in chunks)
    n, d = len(texts), chunks[0][1].shape[-1]
    hidden = torch.zeros(n, length, d, dtype=torch.float16)
    mask = torch.zeros(n, length, dtype=torch.bool)
    ids = torch.full((n, length), int(tok.pad_token_id or 0), dtype=torch.int32)
    for rows, h, m, i in chunks:
        idx = torch.tensor(rows)
        hidden[idx, : h.shape[1]] = h
        mask[idx, : m.shape[1]] = m
        ids[idx, : i.shape[1]] = i
    states = HiddenStates(hidden, mask, ids, seconds, backbone.key, truncated)
    if disk:
        _save_states(states, disk)
    if use_cache:
        _CACHE[key] = states
        while _CACHE and sum(s.nbytes for s in _CACHE.values()) > cache_limit_bytes() and len(_CACHE) > 1:
            _CACHE.popitem(last=False)
    return states


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


# ================================================================================================ stress test
@dataclass(frozen=True)
class StressConfig:
    """One stress-test run: ``variant`` (released | hard | relational), distractor ``ratios``, needle ``position``,
    split sizes, poolings, head seeds (the data are fixed by ``data_seed``), and the bag-of-words controls."""

    variant: str = "hard"
    ratios: tuple[float, ...] = (0.9,)
    position: str = "random"
    n_train: int = stress.N_TRAIN
    n_eval: int = stress.N_EVAL
    poolings: tuple[str, ...] = POOLINGS
    seeds: tuple[int, ...] = (0,)
    data_seed: int = 0
    max_tokens: int = 160
    bow: bool = True

    def __post_init__(self) -> None:
        if self.variant not in stress.VARIANTS:
            raise InputError(f"Unknown variant '{self.variant}'. Valid variants: {', '.join(stress.VARIANTS)}.")
        bad = [p for p in self.poolings if p not in POOLINGS]
        if bad or not self.poolings:
            raise InputError(f"Unknown pooling(s) {bad}. Valid poolings: {', '.join(POOLINGS)}.")
        if not self.ratios or not self.seeds:
            raise InputError("Pick at least one distractor ratio and one seed.")
        if not 8 <= self.n_train <= 20_000 or not 8 <= self.n_eval <= 20_000:
            raise InputError("Train and eval sizes must be between 8 and 20000 texts.")


@dataclass
class ExampleView:
    """Everything the page draws for one eval text (numpy, small): tokens, needle flags, the graph at tau and its
    density, readout weights of GLOT and AdaPool, and the augmented cosine-similarity matrix (tokens + pooled vectors)."""

    text: str
    label: int
    tokens: list[str]
    needle: list[bool]
    adjacency: np.ndarray
    density: float
    tau: float
    weights: dict[str, list[float]]
    similarity: np.ndarray
    sim_labels: list[str]


@dataclass
class StressResult:
    rows: list[dict[str, Any]]
    bow: list[dict[str, Any]]
    encode_seconds: float
    config: dict[str, Any]
    glot_config: dict[str, Any]
    train_config: dict[str, Any]
    backbone: str
    backbone_params: int
    example: ExampleView | None = None
    models: dict[str, PooledClassifier] = field(default_factory=dict, repr=False)

    def summary(self) -> list[dict[str, Any]]:
        """Mean and std of accuracy over seeds per (ratio, pooling), plus the bag-of-words rows."""
        out = []
        keys = sorted({(r["ratio"], r["pooling"]) for r in self.rows}, key=lambda k: (k[0], POOLINGS.index(k[1])))
        for ratio, pooling in keys:
            rs = [r for r in self.rows if r["ratio"] == ratio and r["pooling"] == pooling]
            acc = np.array([r["accuracy"] for r in rs])
            out.append({"ratio": ratio, "method": pooling, "accuracy": float(acc.mean()),
                        "accuracy_std": float(acc.std()), "seeds": len(rs), "params": rs[0]["params"],
                        "seconds_per_epoch": float(np.mean([r["seconds_per_epoch"] for r in rs])),
                        "edge_density": rs[0].get("edge_density")})
        for b in self.bow:
            out.append({"ratio": b["ratio"], "method": b["name"], "accuracy": b["accuracy"], "accuracy_std": 0.0,
                        "seeds": 1, "params": b["n_features"] + 1, "seconds_per_epoch": b["seconds"],
                        "edge_density": None})
        return out

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("models", "example")}
        d["summary"] = self.summary()
        return d


def _needle_tokens(tokenizer: Any, text: str, words: list[int], max_tokens: int) -> tuple[list[str], list[bool]]:
    """Token strings of ``text`` (as the backbone sees it) and, per token, whether it overlaps a needle word."""
    spans, pos = [], 0
    for w in text.split(" "):
        spans.append((pos, pos + len(w)))
        pos += len(w) + 1
    marks = [spans[i] for i in words if i < len(spans)]
    enc = tokenizer(text, truncation=True, max_length=max_tokens, return_offsets_mapping=True)
    toks = tokenizer.convert_ids_to_tokens(enc["input_ids"])
    flags = [any(s < b and a < e for a, b in marks) and e > s for s, e in enc["offset_mapping"]]
    return [str(t) for t in toks], flags


def example_view(backbone: Backbone, states: HiddenStates, index: int, text: str, label: int, needle_words: list[int],
                 models: dict[str, PooledClassifier], tau: float, max_tokens: int = 160) -> ExampleView:
    """The visual summary of eval text ``index``: see :class:`ExampleView`. GLOT's pooled vector in the heatmap is the
    input block of its JK output (``sum_i pi_i h_i``, in token space), so it is comparable with the tokens."""
    h, m = states.batch(torch.tensor([index]))
    n = int(m.sum())
    tokens, needle = _needle_tokens(backbone.tokenizer, text, needle_words, max_tokens)
    tokens, needle = tokens[:n], needle[:n]
    adj = token_graph(h, m, tau)
    weights: dict[str, list[float]] = {}
    pooled: dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for name, model in models.items():
            out = model.pool(h, m)
            if out.weights is not None:
                weights[name] = out.weights[0, :n].tolist()
            pooled[name] = out.z[0, : h.shape[-1]]
    vecs = [h[0, :n]]
    labels = list(tokens)
    cls_vec = h[0, n - 1] if backbone.is_decoder else h[0, 0]
    extra = {"[CLS]" if not backbone.is_decoder else "[LAST]": cls_vec, "[MEAN]": masked_mean(h, m)[0],
             "[MAX]": masked_max(h, m)[0]}
    for name in ("adapool", "glot"):
        if name in pooled:
            extra[f"[{name.upper()}]"] = pooled[name]
    for k, v in extra.items():
        vecs.append(v.unsqueeze(0))
        labels.append(k)
    sim = cosine_matrix(torch.cat(vecs, 0).unsqueeze(0))[0].numpy()
    return ExampleView(text=text, label=int(label), tokens=tokens, needle=needle,
                       adjacency=adj[0, :n, :n].numpy().astype(np.uint8), density=float(edge_density(adj, m)[0]),
                       tau=float(tau), weights=weights, similarity=sim.astype(np.float32), sim_labels=labels)


def run_stress(
    cfg: StressConfig | None = None,
    glot: GlotConfig | None = None,
    train_cfg: TrainConfig | None = None,
    backbone: Backbone | str | None = "minilm",
    progress: Progress | None = None,
    keep_models: bool = False,
    example: bool = True,
    states_dir: str | None = None,
) -> StressResult:
    """The stress-test sweep: for each ratio, generate the splits, cache the backbone states once, train every pooling
    for every seed, and run the bag-of-words controls (unigram and unigram + word pairs).

    The models of the last ratio and first seed are kept when ``keep_models`` (and used for the example view).
    """
    cfg = cfg or StressConfig()
    glot = glot or GlotConfig()
    train_cfg = train_cfg or TrainConfig()
    bb = backbone if isinstance(backbone, Backbone) else load_backbone(backbone)
    rows: list[dict[str, Any]] = []
    bow_rows: list[dict[str, Any]] = []
    encode_s = 0.0
    jobs = len(cfg.ratios)
    models: dict[str, PooledClassifier] = {}
    view = None
    for r_i, ratio in enumerate(cfg.ratios):
        base = r_i / jobs
        train_d, eval_d = stress.splits(cfg.variant, ratio, cfg.position, cfg.data_seed, cfg.n_train, cfg.n_eval)
        enc_p = sub_progress(progress, base, base + 0.5 / jobs)
        split = len(train_d) / (len(train_d) + len(eval_d))
        tr = encode(bb, train_d.texts, cfg.max_tokens, progress=sub_progress(enc_p, 0, split), states_dir=states_dir)
        ev = encode(bb, eval_d.texts, cfg.max_tokens, progress=sub_progress(enc_p, split, 1), states_dir=states_dir)
        encode_s += tr.seconds + ev.seconds
        y_tr, y_ev = torch.tensor(train_d.labels), torch.tensor(eval_d.labels)
        graphs = (graph_for(tr, glot.tau), graph_for(ev, glot.tau)) if "glot" in cfg.poolings else None
        n_fit = len(cfg.poolings) * len(cfg.seeds)
        k = 0
        for seed in cfg.seeds:
            for pooling in cfg.poolings:
                p = sub_progress(progress, base + (0.5 + 0.5 * k / n_fit) / jobs,
                                 base + (0.5 + 0.5 * (k + 1) / n_fit) / jobs)
                model, res = train_head(pooling, tr, y_tr, ev, y_ev, is_decoder=bb.is_decoder, glot=glot,
                                        cfg=train_cfg, seed=seed, n_classes=2, graphs=graphs, progress=p)
                rows.append({"variant": cfg.variant, "ratio": float(ratio), **res.row(),
                             "epoch_accuracy": res.epoch_accuracy})
                if seed == cfg.seeds[0] and r_i == jobs - 1:
                    models[pooling] = model
                k += 1
        if cfg.bow:
            for ng in (1, 2):
                b = stress.bag_of_words(train_d.texts, train_d.labels, eval_d.texts, eval_d.labels, ngrams=ng)
                bow_rows.append({"ratio": float(ratio), **asdict(b)})
        if example and r_i == jobs - 1:
            s = eval_d.samples[0]
            view = example_view(bb, ev, 0, s.text, s.label, list(s.needle_words),
                                {k2: v for k2, v in models.items() if k2 in ("adapool", "glot")}, glot.tau,
                                cfg.max_tokens)
    report(progress, 1.0, "done")
    return StressResult(rows=rows, bow=bow_rows, encode_seconds=encode_s, config=asdict(cfg), glot_config=asdict(glot),
                        train_config=asdict(train_cfg), backbone=bb.key, backbone_params=bb.num_parameters(),
                        example=view, models=models if keep_models else {})


# ============================================================================================ user CSV training
def train_on_texts(
    data: LabelledTexts,
    poolings: tuple[str, ...] = POOLINGS,
    glot: GlotConfig | None = None,
    train_cfg: TrainConfig | None = None,
    backbone: Backbone | str | None = "minilm",
    seed: int = 0,
    max_tokens: int = 128,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train every pooling on the user's labelled texts (stratified 75/25 split with ``seed``) plus the bag-of-words
    controls; returns a JSON-able dict with one row per method."""
    glot = glot or GlotConfig()
    train_cfg = train_cfg or TrainConfig()
    bb = backbone if isinstance(backbone, Backbone) else load_backbone(backbone)
    tr_i, ev_i = split_indices(data.labels, 0.25, seed)
    if not ev_i:
        raise InputError("Every class needs at least two rows so that one can be held out for evaluation.")
    texts_tr = [data.texts[i] for i in tr_i]
    texts_ev = [data.texts[i] for i in ev_i]
    y_tr = torch.tensor([data.labels[i] for i in tr_i])
    y_ev = torch.tensor([data.labels[i] for i in ev_i])
    tr = encode(bb, texts_tr, max_tokens, progress=sub_progress(progress, 0, 0.35))
    ev = encode(bb, texts_ev, max_tokens, progress=sub_progress(progress, 0.35, 0.5))
    rows = []
    for k, pooling in enumerate(poolings):
        p = sub_progress(progress, 0.5 + 0.5 * k / len(poolings), 0.5 + 0.5 * (k + 1) / len(poolings))
        _, res = train_head(pooling, tr, y_tr, ev, y_ev, is_decoder=bb.is_decoder, glot=glot, cfg=train_cfg,
                            seed=seed, n_classes=len(data.classes), progress=p)
        rows.append({"method": pooling, **res.row(), "epoch_accuracy": res.epoch_accuracy})
    for ng in (1, 2):
        b = stress.bag_of_words(texts_tr, y_tr.tolist(), texts_ev, y_ev.tolist(), ngrams=ng, seed=seed)
        rows.append({"method": b.name, "pooling": b.name, "accuracy": b.accuracy, "params": b.n_features + 1,
                     "train_seconds": b.seconds})
    report(progress, 1.0, "done")
    majority = float(np.bincount(y_ev.numpy()).max() / len(y_ev))
    return {"rows": rows, "n_train": len(tr_i), "n_eval": len(ev_i), "classes": data.classes,
            "majority_baseline": majority, "encode_seconds": tr.seconds + ev.seconds, "backbone": bb.key,
            "truncated_texts": tr.truncated + ev.truncated, "glot_config": asdict(glot),
            "train_config": asdict(train_cfg)}


# ========================================================================================= LoRA fine-tuning reference
@dataclass
class LoraResult:
    """LoRA on the backbone + a linear head on the pooled vector (``peft``). ``seconds_per_epoch`` is measured over the
    steps run and scaled to a full epoch when ``max_steps`` cut it short (``extrapolated``)."""

    accuracy: float | None
    trainable_params: int
    backbone_params: int
    seconds_per_step: float
    seconds_per_epoch: float
    steps: int
    steps_per_epoch: int
    epochs: float
    extrapolated: bool
    rank: int
    pooling: str
    target_modules: list[str]
    cpu_seconds_per_step: float | None = None  # process CPU time (robust to other jobs on a shared machine)
    cpu_seconds_per_epoch: float | None = None


def lora_targets(model: nn.Module) -> list[str]:
    """The linear layers LoRA adapts: BERT's query/key/value/dense (as in the paper's commented configuration), or a
    Llama-style model's attention and MLP projections."""
    names = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    for group in (["query", "key", "value", "dense"],
                  ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                  ["c_attn", "c_proj", "c_fc"]):
        hit = [g for g in group if g in names]
        if hit:
            return hit
    raise InputError("No known linear-layer names for LoRA in this backbone.")


def lora_reference(
    backbone: Backbone,
    train_texts: list[str],
    y_train: list[int],
    eval_texts: list[str] | None,
    y_eval: list[int] | None,
    *,
    rank: int = 64,
    alpha: int = 64,
    dropout: float = 0.1,
    lr: float = 5e-4,
    epochs: int = 1,
    batch_size: int = 16,
    max_tokens: int = 160,
    max_steps: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> LoraResult:
    """Fine-tune a copy of the backbone with LoRA (r=64, alpha=64, dropout 0.1 as in the paper's configuration) and a
    linear head on the mean-pooled (encoder) or last-token (decoder) state. The shared backbone is not modified.
    With ``max_steps`` only that many steps run (timing only; accuracy is then None unless ``eval_texts`` are given)."""
    from peft import LoraConfig, get_peft_model

    n_classes = int(max(y_train)) + 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        base = copy.deepcopy(backbone.model)
        for p in base.parameters():
            p.requires_grad_(False)
        targets = lora_targets(base)
        peft_model = get_peft_model(base, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout,
                                                     target_modules=targets, bias="none"))
        head = nn.Linear(backbone.hidden_size, n_classes)
    pooling = "cls" if backbone.is_decoder else "mean"
    pooler = build_pooler(pooling, backbone.hidden_size, is_decoder=backbone.is_decoder)
    params = [p for p in peft_model.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=lr)
    tok = backbone.tokenizer
    y = torch.tensor(y_train)
    gen = torch.Generator().manual_seed(seed)
    steps_per_epoch = math.ceil(len(train_texts) / batch_size)
    total_steps = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    step, step_time, step_cpu = 0, 0.0, 0.0

    def logits(texts: list[str]) -> torch.Tensor:
        enc = tok(texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="pt")
        hid = peft_model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
        return head(pooler(hid, enc["attention_mask"]).z)

    while step < total_steps:
        perm = torch.randperm(len(train_texts), generator=gen)
        peft_model.train()
        for b in range(0, len(train_texts), batch_size):
            if step >= total_steps:
                break
            idx = perm[b:b + batch_size]
            t0, c0 = time.perf_counter(), time.process_time()
            loss = F.cross_entropy(logits([train_texts[i] for i in idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step_time += time.perf_counter() - t0
            step_cpu += time.process_time() - c0
            step += 1
            report(progress, 0.9 * step / total_steps, f"LoRA step {step}/{total_steps}, loss {float(loss.detach()):.3f}")
    acc = None
    if eval_texts and y_eval is not None:
        peft_model.eval()
        preds = []
        with torch.no_grad():
            for b in range(0, len(eval_texts), 32):
                preds.append(logits(eval_texts[b:b + 32]).argmax(-1))
        acc = float((torch.cat(preds) == torch.tensor(y_eval)).float().mean())
    report(progress, 1.0, "LoRA done")
    per_step = step_time / max(step, 1)
    cpu_step = step_cpu / max(step, 1)
    trainable = int(sum(p.numel() for p in params))
    return LoraResult(accuracy=acc, trainable_params=trainable, backbone_params=backbone.num_parameters(),
                      seconds_per_step=per_step, seconds_per_epoch=per_step * steps_per_epoch, steps=step,
                      steps_per_epoch=steps_per_epoch, epochs=step / steps_per_epoch,
                      extrapolated=step < steps_per_epoch * epochs, rank=rank, pooling=pooling,
                      target_modules=targets, cpu_seconds_per_step=cpu_step,
                      cpu_seconds_per_epoch=cpu_step * steps_per_epoch)


# ================================================================================================ shipped heads
def save_heads(models: dict[str, PooledClassifier], path: str, meta: dict[str, Any]) -> None:
    """Store trained heads as one safetensors file (keys ``<pooling>.<param>``; settings in the metadata)."""
    import json

    from safetensors.torch import save_file

    state = {f"{name}.{k}": v.detach().contiguous() for name, m in models.items() for k, v in m.state_dict().items()}
    save_file(state, path, metadata={"meta": json.dumps(meta)})


def load_heads(path: str, in_dim: int | None = None) -> tuple[dict[str, PooledClassifier], dict[str, Any]]:
    """Load heads written by :func:`save_heads` (safetensors only). Returns ``(models, meta)``."""
    import json

    from safetensors import safe_open

    with safe_open(path, framework="pt") as f:
        meta = json.loads(f.metadata()["meta"])
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    glot = GlotConfig(**meta["glot_config"])
    models = {}
    for name in meta["poolings"]:
        model = PooledClassifier(name, in_dim or int(meta["hidden_size"]), int(meta.get("n_classes", 2)),
                                 is_decoder=bool(meta.get("is_decoder", False)), config=glot)
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
    return {name: float((predict(m, states, adj if name == "glot" else None) == y).float().mean())
            for name, m in models.items()}


__all__ = [
    "PAPER_GLUE", "PAPER_STRESS", "GLOT", "Backbone", "DenseGATLayer", "GlotConfig", "HeadResult", "HiddenStates",
    "LoraResult", "PooledClassifier", "StressConfig", "StressResult", "TrainConfig", "encode", "edge_density",
    "evaluate_heads", "example_view", "graph_effect", "load_backbone", "load_heads", "lora_reference",
    "parse_labelled_csv", "run_stress", "save_heads", "token_graph", "train_head", "train_on_texts", "wrap_backbone",
]
