"""Long-context decode situations for timing Tactic beyond SmolLM2's 8,192 positions (paper: Zhu et al., "Tactic",
ICLR 2026, arXiv 2502.12216), with the attention sparsity of SmolLM2's real attention.

SmolLM2-135M has 8,192 positions, so quality is measured on its real keys up to 8K, and the 16K-128K timings use
keys whose sparsity follows the measured profile:

- :func:`need_profile`: per (layer, head) the tokens the exact top-P set needs (median over the last ``n_queries``
  positions of each prefix length) on real captured attention, at several lengths (1K ... 8K);
- :func:`extrapolate`: a power law need(T) = c T^alpha per (layer, head), fitted by least squares in log-log over the
  measured lengths, evaluated at the target lengths (clamped to [1, T]);
- :func:`head_targets`: the timed layer's query heads take the means of Hq equal groups of the sorted (layer, head)
  extrapolated needs, so the mean over the heads is the mean over the model;
- :func:`synthetic_cache`: keys and values drawn from a Gaussian with the mean and covariance of a real layer's
  keys (values), the real first token kept at position 0 (the attention sink); no planted structure, no peaked keys;
- :func:`benchmark_speed`: the decode-speed table ``benchmarks/tactic.py`` recorded, read back for the page;
- :func:`calibrate`: each query head is the real query of that layer scaled by a factor found by bisection so that
  the exact top-P set at length T needs the head's target number of tokens.

Shapes: captured q (Hq, T, d), k, v (Hkv, T, d); profiles (L, Hq, n_lengths).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch


def oracle_need(z: torch.Tensor, p: float) -> torch.Tensor:
    """Tokens of the exact top-P set for logits ``z`` (..., T) (-inf = invisible): the smallest count whose
    descending softmax mass reaches ``p``."""
    w = torch.softmax(z.double(), -1).sort(-1, descending=True).values.cumsum(-1)
    need = torch.searchsorted(w, torch.full((*w.shape[:-1], 1), p, dtype=w.dtype))[..., 0] + 1
    return need.clamp(max=z.shape[-1])


def need_profile(captured: dict[int, dict[str, torch.Tensor]], lengths: Sequence[int], n_queries: int = 8,
                 p: float = 0.9) -> torch.Tensor:
    """(L, Hq, len(lengths)) median exact top-P need of the queries at positions [n - n_queries, n) over their
    causal prefixes, for each prefix length n of ``lengths``; layers in sorted order."""
    out = []
    for layer in sorted(captured):
        c = captured[layer]
        q, k = c["q"], c["k"]
        g = q.shape[0] // k.shape[0]
        d = q.shape[-1]
        per_len = []
        for n in lengths:
            pos = torch.arange(n - n_queries, n)
            z = torch.einsum("hqd,htd->hqt", q[:, n - n_queries:n].float(),
                             k[:, :n].float().repeat_interleave(g, 0)) / math.sqrt(d)
            z = z.masked_fill(torch.arange(n)[None, None] > pos[None, :, None], float("-inf"))
            per_len.append(oracle_need(z, p).double().median(-1).values)
        out.append(torch.stack(per_len, -1))
    return torch.stack(out)


def extrapolate(profile: torch.Tensor, lengths: Sequence[int], targets: Sequence[int]
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """Least-squares power law per (layer, head) in log-log; returns (needs (L, Hq, len(targets)) clamped to
    [1, T], exponents alpha (L, Hq))."""
    x = torch.log(torch.tensor([float(n) for n in lengths], dtype=torch.float64))
    y = torch.log(profile.double().clamp(min=1.0))
    xm = x.mean()
    alpha = ((x - xm) * (y - y.mean(-1, keepdim=True))).sum(-1) / ((x - xm) ** 2).sum()
    c = y.mean(-1) - alpha * xm
    t = torch.tensor([float(n) for n in targets], dtype=torch.float64)
    need = torch.exp(c[..., None] + alpha[..., None] * torch.log(t))
    return torch.minimum(need.clamp(min=1.0), t), alpha


def head_targets(needs: torch.Tensor, heads: int) -> torch.Tensor:
    """All (layer, head) values of ``needs`` (L, Hq) sorted and cut into ``heads`` equal groups; each head takes
    its group's mean, so the heads' mean is the model's mean (the heavy flat heads of the first layer included):
    (heads,)."""
    x = needs.double().flatten().sort().values
    return torch.stack([grp.mean() for grp in x.tensor_split(heads)])


def gaussian_like(x: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """``n`` rows drawn from the Gaussian with the mean and covariance of the rows of ``x`` (m, d)."""
    mu = x.double().mean(0)
    xc = x.double() - mu
    cov = xc.T @ xc / max(1, x.shape[0] - 1) + 1e-6 * torch.eye(x.shape[1], dtype=torch.float64)
    chol = torch.linalg.cholesky(cov)
    e = torch.randn(n, x.shape[1], generator=generator, dtype=torch.float64)
    return (mu + e @ chol.T).float()


def synthetic_cache(k: torch.Tensor, v: torch.Tensor, t: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A ``t``-token cache (Hkv, t, d) per KV head Gaussian like the real ``k``, ``v`` (Hkv, T, d) from token 1 on,
    with the real first token (the sink) at position 0."""
    g = torch.Generator().manual_seed(int(seed))
    ks = torch.stack([torch.cat([k[h, :1].float(), gaussian_like(k[h, 1:], t - 1, g)]) for h in range(k.shape[0])])
    vs = torch.stack([torch.cat([v[h, :1].float(), gaussian_like(v[h, 1:], t - 1, g)]) for h in range(v.shape[0])])
    return ks.contiguous(), vs.contiguous()


def calibrate(q: torch.Tensor, k: torch.Tensor, targets: torch.Tensor, p: float = 0.9, iters: int = 40
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Scale each query head ``q`` (Hq, d) so that its exact top-P need over ``k`` (Hkv, T, d) is ``targets``
    (Hq,); bisection on the log scale. Returns (scaled q (Hq, d), achieved needs (Hq,))."""
    hq, d = q.shape
    g = hq // k.shape[0]
    z0 = torch.stack([k[h // g].float() @ q[h].float() for h in range(hq)]) / math.sqrt(d)  # (Hq, T)
    lo = torch.full((hq,), -6.0, dtype=torch.float64)
    hi = torch.full((hq,), 4.0, dtype=torch.float64)
    tgt = targets.double()
    for _ in range(iters):
        mid = (lo + hi) / 2
        need = oracle_need(z0 * torch.exp(mid)[:, None].float(), p).double()
        more = need > tgt  # too flat: sharpen
        lo = torch.where(more, mid, lo)
        hi = torch.where(more, hi, mid)
    scale = torch.exp((lo + hi) / 2)
    qs = q.float() * scale[:, None].float()
    return qs, oracle_need(z0 * scale[:, None].float(), p)


BENCHMARK_RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "tactic.md"


def _x(cell: str) -> float:
    return float(cell.strip("*").rstrip("x").split(";")[0].replace(",", ""))


def benchmark_speed(path: Path | None = None) -> dict[str, Any]:
    """The decode-speed table of ``benchmarks/results/tactic.md`` (section 3, written by ``benchmarks/tactic.py``):
    ``{"rows": [{"tokens", "ratio" (median of paired full / Tactic step ratios), "full_ms", "tactic_ms", "bytes"
    (bytes read / full), "amortised" (with the prefill spread over the generated tokens), "load"}], "crossover"
    (the first length from which every ratio exceeds 1, None if none), "machine", "date"}``; ``{}`` when the file or the table
    is missing."""
    path = BENCHMARK_RESULTS if path is None else path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    head = {k: line.split(":", 1)[1].strip() for line in text.splitlines()
            for k in ("Machine", "Date") if line.startswith(f"- {k}:")}
    rows = []
    for line in text.split("## 3.", 1)[-1].splitlines() if "## 3." in text else []:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or not cells[0].replace(",", "").isdigit():
            continue
        rows.append({"tokens": int(cells[0].replace(",", "")), "ratio": _x(cells[1]), "full_ms": _x(cells[2]),
                     "tactic_ms": _x(cells[3]), "bytes": _x(cells[8]), "amortised": _x(cells[14]),
                     "load": cells[15]})
    if not rows:
        return {}
    cross = next((r["tokens"] for i, r in enumerate(rows) if all(x["ratio"] > 1.0 for x in rows[i:])), None)
    return {"rows": rows, "crossover": cross, "machine": head.get("Machine", ""), "date": head.get("Date", "")}
