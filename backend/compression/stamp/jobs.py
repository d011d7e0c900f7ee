"""The jobs of STaMP: what the page and the CLI run. Each is
``run_<what>(inputs..., config, progress=None, token=None) -> dict`` with a frozen config that validates itself
(InputError with the same words for the page and the CLI).

- :func:`run_evaluate`: the held-out perplexity of a causal LM (SmolLM2-135M by default) with every chosen
  activation-quantization method of :data:`~.hooks.METHODS` at matched average bits, per-layer error against
  Theorem 1's bound, SQNR, and the energy concentration of the dense inputs (``stamp eval``, the page's run). A loaded
  model may be handed in (the page's cached one), else the job loads it by the config's name.
- :func:`paired_gain` / :func:`gain_table`: one method against its controls paired over the evaluated windows (the
  mean per-window NLL difference, a moving-block bootstrap interval, the perplexity ratio), what the page's
  comparison table and the claim tests report.
- :func:`run_synthetic`: Theorem 1's bound against the measured error and the error gain over plain per-token
  quantization on AR(1) sequences, for every sequence transform of :data:`~.stamp.TRANSFORMS` (``stamp synthetic``;
  no model).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from . import stamp as st
from .hooks import METHODS, EvalConfig, evaluate

# the page's method groups: the A4 rows (no feature transform, low bits: dense, A4, first-k, STaMP), the Hadamard
# rows, and the extra references (SmoothQuant, then A8)
A4_ROWS: tuple[str, ...] = tuple(m for m in METHODS if METHODS[m].feature == "none" and METHODS[m].bits != "high")
ROTATION_ROWS: tuple[str, ...] = tuple(m for m in METHODS if METHODS[m].feature == "rotation")
EXTRA_ROWS: tuple[str, ...] = (*(m for m in METHODS if METHODS[m].feature == "smooth"),
                               *(m for m in METHODS if METHODS[m].bits == "high"))


# the methods whose per-layer error is drawn against Theorem 1's bound: the baselines and ours with an orthonormal
# transform (not SmoothQuant's scales)
BOUND_ROWS: tuple[str, ...] = tuple(m for m in METHODS if METHODS.kind(m) in ("baseline", "ours")
                                    and METHODS[m].feature != "smooth")


def page_methods(rotation: bool, extra: bool) -> tuple[str, ...]:
    """The methods of the page's run: the A4 rows, the Hadamard rows if ``rotation``, the references if ``extra``."""
    return (*A4_ROWS, *(ROTATION_ROWS if rotation else ()), *(EXTRA_ROWS if extra else ()))


# the controls each of ours is compared with: the baseline, the sink rule alone (token 0 at the high bits) and the
# first k raw tokens at the high bits (the same average bits without the sequence transform)
# (the low-bit methods with the same feature transform and no sequence transform, in registry order)
CONTROLS: dict[str, tuple[str, ...]] = {
    ours: tuple(m for m in METHODS if METHODS[m].seq is None and METHODS[m].bits == "low"
                and METHODS[m].feature == METHODS[ours].feature)
    for ours in METHODS.names("ours")}
BLOCK_WINDOWS = 4  # consecutive windows of a text share a topic: the bootstrap resamples blocks of 4
COLLAPSE = 5.0  # a configuration whose perplexity is above 5x dense is a collapsed model


def paired_gain(rows: Sequence[Mapping[str, Any]], ours: str, control: str, name: str = "gain",
                block: int = BLOCK_WINDOWS) -> dict[str, Any]:
    """``ours`` against ``control`` over the same windows: ``name`` = the mean per-window NLL difference (control -
    ours; > 0: ours is better; the log of the perplexity ratio), ``name_ci`` its 95 % moving-block bootstrap interval
    (blocks of ``block`` consecutive windows), ``name_pairs`` the windows, ``name_ppl_ratio`` (control / ours) and
    ``name_ppl_ratio_range``. One window gives an infinite interval."""
    import numpy as np

    from ...stats import block_bootstrap_mean

    nll = {r["method"]: np.asarray(r["window_nll"], dtype=float) for r in rows}
    d = nll[control] - nll[ours]
    if d.size < 2:
        lo, hi, mean = -math.inf, math.inf, float(d.mean())
    else:
        ci = block_bootstrap_mean(d, block)
        lo, hi, mean = ci.low, ci.high, ci.mean
    return {name: mean, f"{name}_ci": [lo, hi], f"{name}_pairs": int(d.size), f"{name}_ppl_ratio": math.exp(mean),
            f"{name}_ppl_ratio_range": [math.exp(lo), math.exp(hi)]}


def gain_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (ours, control) pair present in ``rows``: both perplexities and average bits, the perplexity
    ratio control / ours with its interval over the windows, and whether each model collapsed (above ``COLLAPSE``
    times dense; a comparison between two collapsed models tells little)."""
    by = {r["method"]: r for r in rows}
    dense = next((r["ppl"] for r in rows if METHODS[r["method"]].bits == "none"), None)
    out = []
    for ours, controls in CONTROLS.items():
        for c in controls:
            if ours not in by or c not in by:
                continue
            g = paired_gain(rows, ours, c)
            lo, hi = g["gain_ppl_ratio_range"]
            both = dense is not None and min(by[ours]["ppl"], by[c]["ppl"]) > COLLAPSE * dense
            out.append({"ours": METHODS.label(ours), "control": METHODS.label(c), "ours ppl": by[ours]["ppl"],
                        "ours bits": by[ours]["avg_bits"], "control ppl": by[c]["ppl"],
                        "control bits": by[c]["avg_bits"], "ppl ratio control / ours": g["gain_ppl_ratio"],
                        "95 % interval": f"[{lo:.3g}, {hi:.3g}]", "windows": g["gain_pairs"],
                        "resolved": bool(lo > 1.0 or hi < 1.0), "both collapsed": both})
    return out


@dataclass(frozen=True)
class EvaluateConfig:
    """The methods and settings ``quant`` (:class:`~.hooks.EvalConfig`) on the Llama-family causal LM ``model``
    (None: the embedded SmolLM2-135M)."""

    quant: EvalConfig = field(default_factory=EvalConfig)
    model: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.quant, EvalConfig):
            raise InputError("quant must be an EvalConfig.")


def run_evaluate(text: str | None, config: EvaluateConfig, lm: Any = None, source: str | None = None,
                 progress: Progress | None = None, token: CancelToken | None = None) -> dict[str, Any]:
    """``text``: the user's text, its last 30 % held out (None: the built-in Python reference text; ``source``
    names it); ``lm``: the loaded causal LM (None: loaded from ``config.model``). Returns the
    :class:`~.hooks.StampResult` as a dict plus ``model`` (the model's source)."""
    progress = checked(progress, token)
    if lm is None:
        from ...models.lm import load_causal_lm

        lm = load_causal_lm(config.model)
    res = evaluate(lm.model, lm.tokenizer, text, config.quant, source=source, progress=progress)
    return {**res.to_dict(), "model": lm.source}


@dataclass(frozen=True)
class SyntheticConfig:
    """AR(1) sequences (4 samples of ``seqlen`` tokens x ``dim`` features, correlation ``rho``, seed ``seed``)
    quantized at ``bits`` with ``hp_tokens`` transformed rows at ``high_bits``."""

    seqlen: int = 256
    dim: int = 64
    rho: float = 0.99
    bits: int = 4
    high_bits: int = 8
    hp_tokens: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        st.check_bits(self.bits, "low bit-width")
        st.check_bits(self.high_bits, "high bit-width")
        if not 2 <= self.seqlen <= 4096 or not 1 <= self.dim <= 4096:
            raise InputError(f"The sequences must have 2-4096 tokens and 1-4096 features; got {self.seqlen} x "
                             f"{self.dim}.")
        if not -1.0 < float(self.rho) < 1.0:
            raise InputError(f"rho must be in (-1, 1); got {self.rho}.")
        if not 0 <= self.hp_tokens <= self.seqlen:
            raise InputError(f"The high-precision tokens must be 0-{self.seqlen}; got {self.hp_tokens}.")
        if self.seed < 0:
            raise InputError(f"The seed must be at least 0; got {self.seed}.")


def run_synthetic(config: SyntheticConfig, progress: Progress | None = None,
                  token: CancelToken | None = None) -> dict[str, Any]:
    """Per transform that exists at ``config.seqlen``: the error, its gain over plain per-token quantization at the
    low bits, the largest ratio to Theorem 1's per-sample bound (and whether it holds everywhere), the share of the
    energy in the first eighth of the rows, the average bits."""
    progress = checked(progress, token)
    c = config
    x = st.ar1_sequence(c.seqlen, c.dim, c.rho, c.seed, batch=4).double()
    plain = float((st.quantize_tokens(x, c.bits) - x).pow(2).sum())
    rows = []
    names = [n for n in st.TRANSFORMS if st.TRANSFORMS[n].fits(c.seqlen)]
    for i, name in enumerate(names):
        o = st.stamp_quantize(x, st.QuantSpec(name, c.bits, c.high_bits, c.hp_tokens, 0))
        err = (o.x_hat - x).pow(2).sum((-1, -2))
        bound = st.theorem1_bound(o.y, o.bits)
        rows.append({"transform": name, "label": st.TRANSFORMS.label(name), "mse": float(err.sum()) / x.numel(),
                     "gain_over_plain": plain / max(float(err.sum()), 1e-300),
                     "bound_ratio_max": float((err / bound).max()), "bound_holds": bool((err <= bound).all()),
                     "energy_first_eighth": st.energy_share(o.y, 1 / 8),
                     "avg_bits": st.average_bits(o.bits)})
        report(progress, (i + 1) / len(names), name)
    return {"method": "stamp", "seqlen": c.seqlen, "dim": c.dim, "rho": c.rho, "plain_mse": plain / x.numel(),
            "rows": rows}


__all__ = ["A4_ROWS", "BLOCK_WINDOWS", "BOUND_ROWS", "COLLAPSE", "CONTROLS", "EXTRA_ROWS", "ROTATION_ROWS",
           "EvaluateConfig", "SyntheticConfig", "gain_table", "page_methods", "paired_gain", "run_evaluate",
           "run_synthetic"]
