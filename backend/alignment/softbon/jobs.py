"""The Soft Best-of-N sweeps as pure jobs: what the page, the CLI and the benchmark call.

- :func:`run_random`: exact SBoN over an (N, beta) grid on a random discrete instance: expected true and selection
  reward, KL against Lemma 4.1, the best beta per N, and Theorem 5.2's regret terms per (N, beta) (``softbon sweep``
  and the page's random mode).
- :func:`run_text`: the same sweep over candidate answers, the proxy being the cosine similarity of a text encoder's
  embeddings to a reference answer, pi_ref uniform over the candidates (``softbon text`` and the page's text mode).

Configs are frozen dataclasses validated on construction (InputError saying what to change; the grid and the
instance are :class:`backend.alignment.softbon.softbon.SweepConfig` and ``InstanceConfig``); results are small
JSON-able summaries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, sub_progress
from .softbon import (
    Instance,
    InstanceConfig,
    SweepConfig,
    calibrate,
    make_instance,
    regret_table,
    sweep,
    text_instance,
)

MAX_CHARS = 2000  # characters of one candidate answer or of the reference

# The grids of the CLI and the page (the CLI takes any grid SweepConfig accepts).
NS = (1, 2, 4, 8, 16, 32, 64)
BETAS = (0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)
TEXT_BETAS = (0.0, 4.0, 16.0, 64.0)  # the page's text mode: plain sampling, three temperatures (and hard BoN)
K_CHOICES = (50, 100, 200, 500, 1000)
ALPHA_CHOICES = (0.1, 0.3, 1.0, 3.0)
TEXT_N_CHOICES = (1, 2, 4, 8, 16, 32)


def beta_key(beta: float) -> str:
    """``"inf"`` for hard BoN, else ``f"{beta:g}"`` (the keys of :meth:`TextResult.probs`)."""
    return "inf" if math.isinf(beta) else f"{beta:g}"


def parse_scores(text: str) -> tuple[float, ...] | None:
    """Optional true scores typed as comma-separated numbers (None when empty); InputError otherwise."""
    try:
        scores = tuple(float(v) for v in str(text).split(",") if v.strip())
    except ValueError:
        raise InputError("True scores must be numbers separated by commas.") from None
    return scores or None


@dataclass(frozen=True)
class RandomConfig:
    """A random instance (``instance``, drawn with ``seed``) and the grid swept on it (``sweep``); the defaults are
    the CLI's (3 % hackable items, the raw proxy)."""

    instance: InstanceConfig = InstanceConfig(hack_frac=0.03)
    sweep: SweepConfig = SweepConfig(ns=NS, betas=BETAS)
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.instance, InstanceConfig) or not isinstance(self.sweep, SweepConfig):
            raise InputError("RandomConfig takes an InstanceConfig and a SweepConfig.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"The seed must be a whole number >= 0; got {self.seed!r}.")


@dataclass(frozen=True)
class TextConfig:
    """Candidate answers scored against ``reference`` by the text encoder ``encoder`` (None: the embedded MiniLM; a
    local folder or a cached hub name otherwise); ``true_scores`` optional, one per candidate; ``sweep`` the grid."""

    reference: str
    sweep: SweepConfig = SweepConfig(ns=NS, betas=BETAS)
    true_scores: tuple[float, ...] | None = None
    encoder: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.sweep, SweepConfig):
            raise InputError("TextConfig takes a SweepConfig.")
        if not isinstance(self.reference, str) or not self.reference.strip():
            raise InputError("Give a reference answer: the proxy reward is each candidate's similarity to it.")
        if len(self.reference) > MAX_CHARS:
            raise InputError(f"The reference answer must be at most {MAX_CHARS} characters; it has "
                             f"{len(self.reference)}.")
        if self.true_scores is not None:
            scores = tuple(float(v) for v in self.true_scores)
            if not all(math.isfinite(v) for v in scores):
                raise InputError("True scores must be finite numbers.")
            object.__setattr__(self, "true_scores", scores or None)
        if self.encoder is not None:
            object.__setattr__(self, "encoder", str(self.encoder).strip() or None)


def _regret_at_max_n(regret: dict[int, list[dict[str, float]]], ns: list[int]) -> dict[str, dict[str, float]]:
    rows = regret.get(max(ns), [])
    return {f"beta={row['beta']:g}": {k: round(float(v), 6) for k, v in row.items() if k != "beta"} for row in rows}


@dataclass
class RandomResult:
    """``sweep``: :meth:`backend.alignment.softbon.softbon.SweepResult.to_dict`; ``regret``: ``{N: [{"beta",
    "regret", ...Theorem 5.2 terms}]}`` per finite beta > 0 (calibrated rewards); ``instance`` the instance's
    settings, ``hack_mass`` the reference mass of its hackable items."""

    sweep: dict[str, Any]
    regret: dict[int, list[dict[str, float]]]
    instance: dict[str, Any]
    seed: int
    reward: str
    hack_mass: float

    def regret_at_max_n(self) -> dict[str, dict[str, float]]:
        """The regret and its terms at the largest N, rounded to 6 digits, keyed ``beta=<b>``."""
        return _regret_at_max_n(self.regret, self.sweep["ns"])

    def to_json(self) -> dict[str, Any]:
        return {**self.sweep, "regret": self.regret, "seed": self.seed,
                "params": {**{k: self.instance[k] for k in ("k", "dirichlet_alpha", "noise", "hack_frac")},
                           "reward": self.reward},
                "hack_mass": self.hack_mass}


_GRIDS = ("sweep", "regret", "probs_at_max_n")  # the fields TextResult.to_json leaves out or reshapes


@dataclass
class TextResult:
    """The text sweep: ``labels`` the candidates, ``proxy`` their cosine to ``reference``, ``calibrated`` its CDF
    under the uniform pi_ref, ``true`` the user's scores (or None), ``encoder`` the encoder's source; ``sweep`` and
    ``regret`` as in :class:`RandomResult`; ``probs_at_max_n[j]`` the exact selection probabilities of the
    candidates at the largest N for ``sweep["betas"][j]``."""

    sweep: dict[str, Any]
    regret: dict[int, list[dict[str, float]]]
    labels: list[str]
    proxy: list[float]
    calibrated: list[float]
    true: list[float] | None
    reference: str
    encoder: str
    probs_at_max_n: list[list[float]] = field(default_factory=list)

    def probs(self) -> dict[str, list[float]]:
        """``{beta_key(beta): selection probabilities [K]}`` at the largest N."""
        return {beta_key(math.inf if b == "inf" else b): p
                for b, p in zip(self.sweep["betas"], self.probs_at_max_n, strict=True)}

    def regret_at_max_n(self) -> dict[str, dict[str, float]]:
        """The regret and its terms at the largest N (with true scores; else empty), as in :class:`RandomResult`."""
        return _regret_at_max_n(self.regret, self.sweep["ns"])

    def to_json(self) -> dict[str, Any]:
        """The page's summary: the candidates' fields, ``n`` (the largest N), ``probs`` and ``expected_true``."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _GRIDS}
        return {**out, "n": max(self.sweep["ns"]), "probs": self.probs(),
                "expected_true": self.sweep["expected_true_reward"]}


def _sweep(inst: Instance, grid: SweepConfig, progress: Progress | None):  # noqa: ANN202 - (SweepResult, regret)
    res = sweep(inst, grid, sub_progress(progress, 0.0, 0.8))
    regret = regret_table(inst, res)
    sub_progress(progress, 0.8, 1.0)(1.0, "regret terms")
    return res, regret


def run_random(config: RandomConfig, progress: Progress | None = None,
               token: CancelToken | None = None) -> RandomResult:
    """Exact SBoN over ``config.sweep`` on the random instance of ``config.instance`` drawn with ``config.seed``."""
    progress = checked(progress, token)
    inst = make_instance(config.instance, config.seed)
    res, regret = _sweep(inst, config.sweep, progress)
    return RandomResult(res.to_dict(), regret, asdict(config.instance), config.seed, config.sweep.reward,
                        float(inst.pi_ref[inst.hackable].sum()))


def run_text(candidates: Sequence[str], config: TextConfig, encoder: Any = None, progress: Progress | None = None,
             token: CancelToken | None = None) -> TextResult:
    """Exact SBoN over ``config.sweep`` on ``candidates`` (2-64 answers of at most 2,000 characters), the proxy
    being the cosine of ``encoder.embed`` (``[B, H]``, L2-normalised) to the reference; ``encoder`` None loads
    ``config.encoder``."""
    progress = checked(progress, token)
    if encoder is None:
        from ...models.text import load_text_encoder

        encoder = load_text_encoder(config.encoder)
    inst = text_instance(list(candidates), config.reference, lambda xs: encoder.embed(xs).numpy(),
                         true_scores=config.true_scores, max_chars=MAX_CHARS)
    res, regret = _sweep(inst, config.sweep, progress)
    return TextResult(res.to_dict(), regret, inst.labels, inst.proxy.tolist(),
                      calibrate(inst.proxy, inst.pi_ref).tolist(),
                      None if inst.true_reward is None else inst.true_reward.tolist(), config.reference,
                      str(encoder.source), [p.tolist() for p in res.policies[-1]])
