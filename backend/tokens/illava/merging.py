"""Token reduction for vision transformers and vision-language models: iLLaVA, ToMe, FastV, random dropping.

Paper: "An Image is Worth Fewer Than 1/3 Input Tokens in Large Multimodal Models" (iLLaVA), Hu, Gao, Shang, Wan, Feng.
ICLR 2026, arXiv 2412.06263 (OpenReview svKk3PkjZn); official code github.com/hulianyuyy/iLLaVA. Training-free.
Baselines: ToMe, "Token Merging: Your ViT But Faster", Bolya et al., ICLR 2023, arXiv 2210.09461
(github.com/facebookresearch/ToMe); FastV, "An Image is Worth 1/2 Tokens After Layer 2", Chen et al., ECCV 2024,
arXiv 2403.06764 (github.com/pkunlp-icler/FastV). This file is our own implementation of their algorithms.

This module holds only pure tensor functions (the way ToMe keeps ``merge.py`` apart from its model patches); the
model loops that call them sit in :mod:`.patch`. Every function takes a :class:`TokenSet` (tokens plus
the bookkeeping that travels with them) and returns a smaller one and a :class:`MergeInfo`:

- ``illava_code``: the released code's rule. Take the ``r + 1`` tokens with the lowest importance; their weighted
  average with fixed rank weights ``(r+1, r, ..., 1) / sum`` (largest on the least important token, 1 on the most
  important member of the group) is written into the group's most important member, the other ``r`` are dropped.
  Survivors keep their order.
- ``illava_paper``: the paper's informative + recycling tokens, with the details of the released code's
  implementation of it (mode 3, the default of the current github release). Keep ``P = N - r`` tokens: ``P_i``
  informative tokens (top importance), bit-identical, and ``P_c = max(1, round(0.05 P))`` recycling tokens (the next
  ones by importance); each recycling token ``c`` absorbs its ``M = 5`` most similar discarded tokens (dot product
  of the hidden states) by an attention-weighted average, ``c <- (c + sum_j softmax(<c, x_j> / sqrt(d))_j x_j) / 2``.
  Survivors keep their original order.
- ``tome``: bipartite soft matching. Metric = keys averaged over heads, L2-normalised; A = even, B = odd positions;
  cosine scores A B^T with protected rows (class token) at -inf; each a keeps its best b; the r best edges merge
  (several a may share one b) by a size-weighted average; output ``[unmerged A (original order), B]``; sizes add
  (the caller adds ``log(size)`` to attention logits: proportional attention). ``r`` is capped at half the tokens.
- ``fastv``: keep the ``N - r`` most important tokens, drop the rest (no recycling). Ties go to the lower index.
- ``random``: drop ``r`` tokens chosen uniformly at random (explicit generator).
- ``none``: identity.

"Importance" is the mean attention a token receives (head- and query-averaged, the ViT stage: ``S_avg``), or the
head-averaged attention from the last text token (the LLM stage, as in FastV and the iLLaVA code). Protected tokens
(a class token, text tokens) never enter the candidate set: pass them as the ``protected`` prefix of the TokenSet.

Provenance: ``source [B, N, N0]`` (0/1) says which original patches each token's content comes from (merges OR the
rows; for the merging methods the rows partition the original patches); ``pos [B, N]`` is the original index of the
token that physically survives (the code's ``source_indice``; the LLM keeps it as the position id); ``size [B, N]`` is
the number of original tokens merged into each token (ToMe's size).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ...errors import InputError
from ...registry import Registry

PC_RATIO = 0.05  # released code (mode 3): recycling tokens are 5% of the kept tokens, at least one


# =========================================================================================================== state
@dataclass
class TokenSet:
    """Tokens and their bookkeeping.

    ``x [B, N, C]``; ``size [B, N]`` float (original tokens per token); ``source [B, N, N0]`` float 0/1;
    ``pos [B, N]`` long (original index of the surviving token); ``protected``: the first ``protected`` tokens
    (class token, text prefix) are never merged or dropped.
    """

    x: torch.Tensor
    size: torch.Tensor
    source: torch.Tensor
    pos: torch.Tensor
    protected: int = 0

    @classmethod
    def fresh(cls, x: torch.Tensor, protected: int = 0) -> TokenSet:
        """A TokenSet at the start: sizes 1, identity sources, positions 0..N-1."""
        b, n, _ = x.shape
        eye = torch.eye(n, dtype=x.dtype, device=x.device).expand(b, n, n).clone()
        pos = torch.arange(n, device=x.device).expand(b, n).clone()
        return cls(x=x, size=torch.ones(b, n, dtype=x.dtype, device=x.device), source=eye, pos=pos,
                   protected=protected)

    @property
    def n(self) -> int:
        return int(self.x.shape[1])

    @property
    def mergeable(self) -> int:
        return self.n - self.protected

    def gather(self, idx: torch.Tensor) -> TokenSet:
        """Keep tokens ``idx [B, K]`` (indices into the current tokens), in that order."""
        return _gather_set(self, idx)


@dataclass
class MergeInfo:
    """What one reduction step did (per batch element).

    ``scores [B, N]``: the ranking signal over the input tokens (NaN where unused, e.g. random);
    ``group [B, N]``: for each input token, the output token that now holds it (-1: dropped);
    ``removed``: tokens removed.
    """

    scores: torch.Tensor
    group: torch.Tensor
    removed: int


def _bidx(t: torch.Tensor) -> torch.Tensor:
    return torch.arange(t.shape[0], device=t.device)[:, None]


def _gather_set(ts: TokenSet, idx: torch.Tensor) -> TokenSet:
    b = _bidx(idx)
    return TokenSet(x=ts.x[b, idx], size=ts.size[b, idx], source=ts.source[b, idx], pos=ts.pos[b, idx],
                    protected=ts.protected)


def _check_r(ts: TokenSet, r: int, what: str = "This step") -> int:
    """Validate ``r``: at least one mergeable token must survive (otherwise the budget removes every token)."""
    r = int(r)
    if r < 0:
        raise InputError(f"r must be >= 0 (tokens removed per step); got {r}.")
    if r > ts.mergeable - 1:
        raise InputError(
            f"{what} would remove {r} of {ts.mergeable} image tokens: that budget removes every token. "
            "Use a smaller r per layer or fewer merge layers."
        )
    return r


def _group_from_keep(n: int, keep: torch.Tensor) -> torch.Tensor:
    """group [B, n]: position of each kept token in ``keep [B, K]``, -1 for the others."""
    b = keep.shape[0]
    group = torch.full((b, n), -1, dtype=torch.long, device=keep.device)
    group[_bidx(keep), keep] = torch.arange(keep.shape[1], device=keep.device).expand_as(keep)
    return group


def _lowest(scores: torch.Tensor, k: int) -> torch.Tensor:
    """Indices of the ``k`` lowest scores, ascending by score; ties go to the lower index (stable)."""
    order = torch.sort(scores, dim=-1, stable=True).indices
    return order[:, :k]


def _highest(scores: torch.Tensor, k: int) -> torch.Tensor:
    """Indices of the ``k`` highest scores, descending by score; ties go to the lower index (stable)."""
    order = torch.sort(-scores, dim=-1, stable=True).indices
    return order[:, :k]


# ========================================================================================================= methods
def no_reduction(ts: TokenSet, r: int = 0, **_: object) -> tuple[TokenSet, MergeInfo]:
    """Identity (the unreduced model)."""
    b, n = ts.x.shape[:2]
    nan = torch.full((b, n), float("nan"), device=ts.x.device)
    return ts, MergeInfo(scores=nan, group=torch.arange(n, device=ts.x.device).expand(b, n).clone(), removed=0)


def illava_code_merge(ts: TokenSet, r: int, *, scores: torch.Tensor, **_: object) -> tuple[TokenSet, MergeInfo]:
    """The released iLLaVA merge (one recycled token per step).

    ``scores [B, N]``: importance of every token (protected ones ignored). The ``r + 1`` least important mergeable
    tokens ``g_0 (lowest) ... g_r (highest)`` are averaged with weights ``(r+1, ..., 1) / sum`` into ``g_r``'s slot;
    ``g_0 ... g_{r-1}`` are dropped. Survivors keep their order. ``r = 0`` is the identity. Returns ``N - r`` tokens.
    """
    r = _check_r(ts, r, what="iLLaVA (code) merge")
    if r == 0:
        return no_reduction(ts)
    p = ts.protected
    s = scores[:, p:].float()
    grp = _lowest(s, r + 1) + p  # [B, r+1] ascending importance
    b = _bidx(grp)
    w = torch.arange(r + 1, 0, -1, dtype=ts.x.dtype, device=ts.x.device)
    w = w / w.sum()  # (r+1, ..., 1) / sum: the least attended token weighs most
    merged = torch.einsum("g,bgc->bc", w, ts.x[b, grp])
    target = grp[:, -1]  # the group's most important member keeps its slot
    bsz = ts.x.shape[0]
    dropped = torch.zeros(ts.x.shape[:2], dtype=torch.bool, device=ts.x.device)
    dropped[b, grp[:, :-1]] = True
    keep = (~dropped).nonzero()[:, 1].view(bsz, -1)  # row-major: per row ascending = original order
    out = _gather_set(ts, keep)  # fresh tensors: the merged slot is written into them, the input stays untouched
    group = _group_from_keep(ts.n, keep)
    rows = torch.arange(bsz, device=ts.x.device)
    slot = group[rows, target]  # where the target sits among the survivors
    out.x[rows, slot] = merged
    out.size[rows, slot] = ts.size[b, grp].sum(-1)
    out.source[rows, slot] = ts.source[b, grp].amax(1)
    group[b, grp] = slot[:, None]
    return out, MergeInfo(scores=scores.float(), group=group, removed=r)


def illava_paper_merge(
    ts: TokenSet,
    r: int,
    *,
    scores: torch.Tensor,
    metric: torch.Tensor | None = None,
    m: int = 5,
    n_recycled: int | None = None,
    pc_ratio: float = PC_RATIO,
    **_: object,
) -> tuple[TokenSet, MergeInfo]:
    """The paper's iLLaVA merge (informative tokens ``P_v^i`` kept, recycling tokens ``P_v^c`` absorb the rest), with
    the details of the released code's implementation of it (mode 3, the current default of github
    hulianyuyy/iLLaVA).

    ``scores [B, N]`` importance; ``metric [B, N, c]`` the features compared (default: the tokens themselves, as the
    code compares hidden states); ``m``: discarded tokens each recycling token absorbs (M = 5); ``n_recycled``
    (P_c): default ``max(1, round(pc_ratio * P))`` with ``P = N - r`` kept tokens and ``pc_ratio = 0.05``.

    Rule: sort by importance; the top ``P - P_c`` are informative (bit-identical), the next ``P_c`` are recycling
    tokens, the last ``r`` are discarded. Each recycling token ``c`` takes the ``M`` discarded tokens with the largest
    dot product ``<c, x_j>``, weights them by ``softmax(<c, x_j> / sqrt(d))`` (an attention step with ``c`` as the
    query) and becomes ``(c + sum_j w_j x_j) / 2``: a convex combination. Survivors keep their original order.
    Discarded tokens that no recycling token picks are lost (their patches leave ``source``); one picked by several
    recycling tokens feeds each of them. Returns ``N - r`` tokens.
    """
    r = _check_r(ts, r, what="iLLaVA (paper) merge")
    if r == 0:
        return no_reduction(ts)
    p, n = ts.protected, ts.n
    keep_n = ts.mergeable - r
    m = max(1, min(int(m), r))
    pc = int(n_recycled) if n_recycled is not None else max(1, round(pc_ratio * keep_n))
    pc = max(1, min(pc, keep_n))
    pi = keep_n - pc
    order = _highest(scores[:, p:].float(), ts.mergeable) + p  # descending importance
    centres, discarded = order[:, pi:keep_n], order[:, keep_n:]
    b = _bidx(order)
    feats = metric if metric is not None else ts.x
    fc, fd = feats[b, centres], feats[b, discarded]
    sim = torch.einsum("bkc,bdc->bkd", fc, fd)  # [B, Pc, r] dot products
    top, pick = sim.topk(m, dim=-1)  # [B, Pc, M] the M most similar discarded tokens of each recycling token
    w = (top / math.sqrt(fd.shape[-1])).softmax(-1).to(ts.x.dtype)  # [B, Pc, M]
    members = torch.gather(discarded[:, None, :].expand(-1, pc, -1), 2, pick)  # [B, Pc, M] token indices
    bb = torch.arange(order.shape[0], device=order.device)[:, None, None]
    rec_x = 0.5 * ts.x[b, centres] + 0.5 * torch.einsum("bkm,bkmc->bkc", w, ts.x[bb, members])
    keep = torch.cat([torch.arange(p, device=order.device).expand(order.shape[0], p),
                      order[:, :keep_n].sort(dim=1).values], 1)  # protected, then survivors in original order
    out = _gather_set(ts, keep)
    group = _group_from_keep(n, keep)
    slot = torch.gather(group, 1, centres)  # [B, Pc] where each recycling token sits among the survivors
    bs = _bidx(slot)
    out.x[bs, slot] = rec_x
    out.size[bs, slot] = ts.size[b, centres] + ts.size[bb, members].sum(-1)
    out.source[bs, slot] = torch.maximum(ts.source[b, centres], ts.source[bb, members].amax(2))
    for k in range(pc):  # absorbed tokens point at their (first) recycling token
        mem = members[:, k]
        cur = group[_bidx(mem), mem]
        group[_bidx(mem), mem] = torch.where(cur < 0, slot[:, k : k + 1].expand_as(cur), cur)
    return out, MergeInfo(scores=scores.float(), group=group, removed=r)


def tome_merge(ts: TokenSet, r: int, *, metric: torch.Tensor, **_: object) -> tuple[TokenSet, MergeInfo]:
    """ToMe bipartite soft matching with size tracking (one step).

    ``metric [B, N, c]``: keys averaged over heads. Protected tokens (the class token) stay unmerged. ``r`` is capped
    at half the tokens (``min(r, (N - protected) // 2)``). Size-weighted average: the sums ``sum(size * x)`` and
    ``sum(size)`` are unchanged. Output ``[unmerged A in original order, all B]``.
    """
    r = int(r)
    if r < 0:
        raise InputError(f"r must be >= 0 (tokens removed per step); got {r}.")
    p, n = ts.protected, ts.n
    r = min(r, (n - p) // 2)
    if r <= 0:
        return no_reduction(ts)
    met = metric.float()
    met = met / met.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    a_idx = torch.arange(0, n, 2, device=met.device)
    b_idx = torch.arange(1, n, 2, device=met.device)
    scores = met[:, a_idx] @ met[:, b_idx].transpose(1, 2)  # [B, Na, Nb]
    prot_a = a_idx < p
    scores[:, prot_a, :] = -math.inf
    scores[:, :, b_idx < p] = -math.inf  # a protected token in B (p > 1) absorbs nothing
    node_max, node_idx = scores.max(dim=-1)  # best b for each a
    edge = torch.sort(-node_max, dim=-1, stable=True).indices  # descending similarity
    src = edge[:, :r]  # A tokens that merge (indices into A)
    unm = edge[:, r:].sort(dim=-1).values  # unmerged A, original order (class token first)
    dst = torch.gather(node_idx, 1, src)  # their B partners (indices into B)
    bsz, c = ts.x.shape[0], ts.x.shape[-1]
    xa, xb = ts.x[:, a_idx], ts.x[:, b_idx]
    sa, sb = ts.size[:, a_idx], ts.size[:, b_idx]
    srca, srcb = ts.source[:, a_idx], ts.source[:, b_idx]
    bi = _bidx(src)
    wsum = (xb * sb[..., None]).scatter_add(1, dst[..., None].expand(-1, -1, c), (xa * sa[..., None])[bi, src])
    size_b = sb.scatter_add(1, dst, sa[bi, src])
    x_b = wsum / size_b[..., None]
    n0 = ts.source.shape[-1]
    src_b = srcb.scatter_reduce(1, dst[..., None].expand(-1, -1, n0), srca[bi, src], reduce="amax")
    ua = _bidx(unm)
    out = TokenSet(
        x=torch.cat([xa[ua, unm], x_b], 1),
        size=torch.cat([sa[ua, unm], size_b], 1),
        source=torch.cat([srca[ua, unm], src_b], 1),
        pos=torch.cat([ts.pos[:, a_idx][ua, unm], ts.pos[:, b_idx]], 1),
        protected=p,
    )
    group = torch.empty(bsz, n, dtype=torch.long, device=met.device)
    nu = unm.shape[1]
    group[ua, a_idx[unm]] = torch.arange(nu, device=met.device).expand_as(unm)
    group[:, b_idx] = nu + torch.arange(len(b_idx), device=met.device)
    group[bi, a_idx[src]] = nu + dst
    full = torch.full((bsz, n), float("nan"), device=met.device)
    full[:, a_idx] = node_max.masked_fill(~torch.isfinite(node_max), float("nan"))
    return out, MergeInfo(scores=full, group=group, removed=r)


def fastv_prune(ts: TokenSet, r: int, *, scores: torch.Tensor, **_: object) -> tuple[TokenSet, MergeInfo]:
    """FastV: keep the ``N - r`` most important mergeable tokens (ties: lower index first), original order."""
    r = _check_r(ts, r, what="FastV pruning")
    if r == 0:
        return no_reduction(ts)
    p = ts.protected
    top = _highest(scores[:, p:].float(), ts.mergeable - r) + p
    keep = torch.cat([torch.arange(p, device=top.device).expand(top.shape[0], p), top.sort(dim=1).values], 1)
    return ts.gather(keep), MergeInfo(scores=scores.float(), group=_group_from_keep(ts.n, keep), removed=r)


def random_drop(ts: TokenSet, r: int, *, generator: torch.Generator | None = None, **_: object
                ) -> tuple[TokenSet, MergeInfo]:
    """Drop ``r`` mergeable tokens uniformly at random (``generator`` for determinism; one draw for the whole
    batch), original order kept."""
    r = _check_r(ts, r, what="Random dropping")
    if r == 0:
        return no_reduction(ts)
    p, b = ts.protected, ts.x.shape[0]
    # one draw shared by the batch: the requests of one call (e.g. several questions about one image) drop the same
    # tokens, so batched and one-by-one runs agree; callers vary the seed per image
    rnd = torch.rand(ts.mergeable, generator=generator).to(ts.x.device).expand(b, -1)
    top = _highest(rnd, ts.mergeable - r) + p
    keep = torch.cat([torch.arange(p, device=top.device).expand(b, p), top.sort(dim=1).values], 1)
    nan = torch.full((b, ts.n), float("nan"), device=ts.x.device)
    return ts.gather(keep), MergeInfo(scores=nan, group=_group_from_keep(ts.n, keep), removed=r)


# ========================================================================================================= registry
#: Where :func:`.plan.plan_for_budget` places a method's budget: nowhere (the unreduced model),
#: split between encoder blocks and one LLM layer, spread over every encoder block, or all at one LLM layer.
NOWHERE, SPLIT, EVERY_BLOCK, LLM_LAYER = "nowhere", "split", "every_block", "llm_layer"


@dataclass(frozen=True)
class Reducer:
    """A reduction method and what the model loops and the plans need to know about it: its function (the entry is
    called like it), the signal it ranks by (``"attention"``: importance scores, ``"keys"``: ToMe's metric,
    ``"generator"``: the plan's seeded random generator, ``"nothing"``), the stages it may run in (``"vit"``, ``"llm"``), whether dropped content is folded into
    kept tokens, its source, where a budget is placed (:data:`SPLIT`, ...) and whether one step removes at most half
    the tokens (ToMe's bipartite cap)."""

    name: str
    fn: Callable[..., tuple[TokenSet, MergeInfo]]
    needs: str
    stages: tuple[str, ...]
    merges: bool
    citation: str
    placement: str = SPLIT
    halves: bool = False

    def __call__(self, ts: TokenSet, r: int, **kwargs: object) -> tuple[TokenSet, MergeInfo]:
        return self.fn(ts, r, **kwargs)

    @property
    def reduces(self) -> bool:
        """False for the unreduced model: a plan of it has no steps."""
        return self.placement != NOWHERE


METHODS: Registry[Reducer] = Registry("reduction method")
for _name, _fn, _needs, _stages, _merges, _cite, _place, _label, _kind, _color, _about in (
    ("none", no_reduction, "nothing", ("vit", "llm"), False, "unreduced model", NOWHERE, "Unreduced", "reference",
     "#444444", "No reduction"),
    ("illava_code", illava_code_merge, "attention", ("vit", "llm"), True, "arXiv 2412.06263, github hulianyuyy/iLLaVA",
     SPLIT, "iLLaVA (code)", "ours", "#d62728", "iLLaVA (released code: one recycled token)"),
    ("illava_paper", illava_paper_merge, "attention", ("vit", "llm"), True, "arXiv 2412.06263", SPLIT,
     "iLLaVA (paper)", "ours", "#ff7f0e", "iLLaVA (paper: informative + recycled tokens, M neighbours)"),
    ("tome", tome_merge, "keys", ("vit",), True, "arXiv 2210.09461", EVERY_BLOCK, "ToMe", "baseline", "#1f77b4",
     "ToMe bipartite soft matching"),
    ("fastv", fastv_prune, "attention", ("llm",), False, "arXiv 2403.06764", LLM_LAYER, "FastV", "baseline",
     "#2ca02c", "FastV attention pruning"),
    ("random", random_drop, "generator", ("vit", "llm"), False, "design baseline", SPLIT, "Random drop", "baseline",
     "#9467bd", "Random dropping"),
):
    METHODS.add(_name, Reducer(_name, _fn, _needs, _stages, _merges, _cite, _place, halves=_fn is tome_merge),
                label=_label, kind=_kind, color=_color, about=_about)
ALIASES = {"illava": "illava_code"}


def canonical(name: str) -> str:
    """The registered name of ``name`` (case-insensitive; ``illava`` = ``illava_code``); InputError listing the valid
    names otherwise."""
    key = str(name).strip().lower()
    return METHODS.key(ALIASES.get(key, key))


def get_method(name: str) -> Reducer:
    """The :class:`Reducer` called ``name`` (see :func:`canonical`)."""
    return METHODS[canonical(name)]


def reduce_tokens(name: str, ts: TokenSet, r: int, **kwargs: object) -> tuple[TokenSet, MergeInfo]:
    """Apply method ``name`` to ``ts`` removing ``r`` tokens (kwargs: scores, metric, generator, m, n_recycled)."""
    return get_method(name)(ts, r, **kwargs)


__all__ = [
    "ALIASES", "EVERY_BLOCK", "LLM_LAYER", "METHODS", "MergeInfo", "NOWHERE", "Reducer", "SPLIT", "TokenSet",
    "canonical", "fastv_prune", "get_method", "illava_code_merge", "illava_paper_merge", "no_reduction", "random_drop", "reduce_tokens", "tome_merge",
]
