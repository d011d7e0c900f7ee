"""The settings of dual randomized smoothing: training of the experts and the variance estimator, and CERTIFY's
budget. Frozen dataclasses checked on construction (InputError saying what to change); torch-free, so the page builds
them without loading the models' code."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError

MAX_SIGMAS = 8
MAX_N = 200_000
MAX_N0 = 10_000


@dataclass(frozen=True)
class TrainConfig:
    """Training of the experts (one per sigma) and of the variance estimator, checked on construction (InputError).

    ``sigmas``: the set Sigma; ``sigma_e``: the estimator's smoothing level (None = max Sigma, the paper's
    sigma_e >= max Sigma); ``label_samples``: noise samples per sigma for the estimator's soft labels (paper: 100);
    ``lam``, ``eta``, ``copies``: consistency regularisation (weight of the KL term, of the entropy term, number of
    noisy copies).
    """

    sigmas: tuple[float, ...] = (0.12, 0.25, 0.5, 1.0)
    sigma_e: float | None = None
    hidden: int = 32
    depth: int = 2
    expert_steps: int = 800
    estimator_steps: int = 1200
    batch: int = 256
    lr: float = 5e-3
    label_samples: int = 100
    label_alpha: float = 0.001
    lam: float = 2.0
    eta: float = 0.5
    copies: int = 2
    finetune_steps: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigmas", tuple(self.sigmas))
        if not self.sigmas:
            raise InputError("Pick at least one noise level.")
        if min(self.sigmas) <= 0 or len(set(self.sigmas)) != len(self.sigmas):
            raise InputError("Sigma must be a set of distinct positive noise levels.")
        if len(self.sigmas) > MAX_SIGMAS:
            raise InputError(f"At most {MAX_SIGMAS} noise levels are supported.")
        if self.resolved_sigma_e() < max(self.sigmas):
            raise InputError("sigma_e must be at least max(Sigma) (the paper's condition).")
        if self.finetune_steps < 0:
            raise InputError("The number of fine-tuning steps must be >= 0.")

    def resolved_sigma_e(self) -> float:
        return float(self.sigma_e if self.sigma_e is not None else max(self.sigmas))


@dataclass(frozen=True)
class CertifyConfig:
    """CERTIFY's budget: ``n0`` selection samples, ``n`` estimation samples, failure probability ``alpha`` (the paper:
    n = 10,000, alpha = 0.001; dual RS spends alpha/2 per stage); checked on construction (InputError)."""

    n0: int = 100
    n: int = 10_000
    alpha: float = 0.001
    batch_rows: int = 1 << 18

    def __post_init__(self) -> None:
        if self.n0 < 1 or self.n < 1 or not 0 < self.alpha < 1:
            raise InputError("CERTIFY needs n0 >= 1, n >= 1 and 0 < alpha < 1.")
        if self.n > MAX_N or self.n0 > MAX_N0:
            raise InputError("Keep n <= 200,000 and n0 <= 10,000 samples per point on this machine.")
