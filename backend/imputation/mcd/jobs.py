"""MCD imputation as a pure job: what the page, the CLI and the benchmark call.

- :func:`run_impute`: one stack (a preset name or a user's ``(12, H, W)`` array), every method of
  :data:`backend.imputation.mcd.evaluate.METHODS` that applies, per-channel Pearson r on the imputed channels, and the
  first panel's true and imputed maps (rounded) for the page's figures.

The config is a frozen dataclass validated on construction (InputError saying what to change); the result holds small
JSON-able summaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked
from . import evaluate as E
from . import tissue as T

MAX_SAMPLES = 32
MAX_STEPS = 200


@dataclass(frozen=True)
class ImputeConfig:
    """The observed channels (indices into :data:`backend.imputation.mcd.tissue.CHANNELS`, a list or ``"0,1,3"``),
    the posterior samples M averaged, the Heun sampler steps and the seed; the defaults are the CLI's (held-out
    pattern 0)."""

    observed: tuple[int, ...] | str = (0, 1, 3, 5, 7)
    samples: int = 4
    steps: int = 18
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= int(self.samples) <= MAX_SAMPLES:
            raise InputError(f"--samples must be 1 to {MAX_SAMPLES} (got {self.samples})")
        if not 1 <= int(self.steps) <= MAX_STEPS:
            raise InputError(f"--steps must be 1 to {MAX_STEPS} (got {self.steps})")
        object.__setattr__(self, "observed", tuple(E.parse_observed(self.observed)))
        for name in ("samples", "steps", "seed"):
            object.__setattr__(self, name, int(getattr(self, name)))


@dataclass
class ImputeResult:
    """The evaluation (per-channel r and seconds per method, no predictions), where the stack came from
    (``preset`` or ``upload``), its ``[C, H, W]``, and the first panel's maps: ``true[channel]`` and
    ``maps[method][channel]`` (H x W lists, standardised units, 3 decimals) over the imputed channels."""

    evaluation: E.EvalResult
    source: str
    shape: list[int]
    channels: list[str] = field(default_factory=list)
    true: dict[str, list] = field(default_factory=dict)
    maps: dict[str, dict[str, list]] = field(default_factory=dict)

    def summary(self, digits: int | None = 4) -> dict:
        """:meth:`backend.imputation.mcd.evaluate.EvalResult.summary` (``digits=None``: full precision)."""
        return self.evaluation.summary(digits)


def run_impute(stack: str | np.ndarray, config: ImputeConfig, progress: Progress | None = None,
               token: CancelToken | None = None) -> ImputeResult:
    """Impute the unobserved channels of ``stack`` (a preset name of :data:`backend.imputation.mcd.tissue.PRESETS`,
    or a ``(12, H, W)`` array) with every method that applies; the ``bayes`` ceiling needs a preset, the U-Nets the
    pattern they were trained for."""
    progress = checked(progress, token)
    z, mean, source = E.standardised_input(stack)
    res = E.evaluate(z, config.observed, mean=mean, n_samples=config.samples, steps=config.steps, seed=config.seed,
                     keep_preds=True, progress=progress, token=token)
    maps = {m: {T.CHANNELS[c]: np.round(p[0, c], 3).tolist() for c in res.missing}
            for m, p in res.preds.items() if m in E.METHODS and E.METHODS.kind(m) != "reference"}
    true = {T.CHANNELS[c]: np.round(z[0, c], 3).tolist() for c in res.missing}
    res.preds = {}
    return ImputeResult(res, source, list(z.shape[1:]), [T.CHANNELS[c] for c in res.missing], true, maps)
