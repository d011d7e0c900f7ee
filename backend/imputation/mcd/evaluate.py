"""The MCD method table and evaluation: every method on the same panels and observed pattern, per-channel r.

| name | what | source |
|------|------|--------|
| ``mcd`` | MCD any-subset diffusion, mean of M posterior samples (ours) | :mod:`.mcd` |
| ``mcd_single`` | MCD, one posterior sample (ours) | :mod:`.mcd` |
| ``regressor`` | the deterministic masked regressor: MCD's network and masking, MSE, one pass | :mod:`.mcd` |
| ``most_correlated`` | the observed channel of largest training |r|, affinely mapped | :mod:`.baselines` |
| ``ridge`` | per-pixel ridge regression from the observed channels | :mod:`.baselines` |
| ``ridge_ms`` | ridge on the observed channels blurred at sigma 0, 1, 2, 4 px | :mod:`.baselines` |
| ``unet`` | a U-Net regressor trained per (pattern, target), for the patterns of ``UNET_PATTERNS`` | :mod:`.baselines` |
| ``bayes`` | the generator's noise-free mean (ceiling; synthetic panels only) | :mod:`.tissue` |

Shapes: panels ``x`` (N, C, H, W) in intensity units; the evaluation works on standardised panels.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path

import numpy as np

from backend.errors import InputError
from backend.registry import Registry

from . import baselines as B
from . import mcd as M
from . import tissue as T

ASSETS = Path(__file__).resolve().parents[3] / "assets"
TISSUE_FILE = ASSETS / "mcd_tissue.safetensors"
CELLS_FILE = ASSETS / "mcd_cells.safetensors"
UNET_FILE = ASSETS / "mcd_unet.safetensors"
REGRESSOR_FILE = ASSETS / "mcd_regressor.safetensors"
# trained with the group rule (``--apart``): the far-pattern claim's MCD and masked regressor
TISSUE_APART_FILE = ASSETS / "mcd_tissue_apart.safetensors"
REGRESSOR_APART_FILE = ASSETS / "mcd_regressor_apart.safetensors"
WEIGHTS = {"tissue": (TISSUE_FILE, REGRESSOR_FILE, ""), "tissue_apart": (TISSUE_APART_FILE, REGRESSOR_APART_FILE,
                                                                          " --apart")}
CELLS_BASELINES_FILE = ASSETS / "mcd_cells_baselines.safetensors"

# observation patterns the claims evaluate besides the held-out ones: drawn in training, and a sparse one
SEEN_PATTERNS: tuple[tuple[int, ...], ...] = ((3, 4, 8, 9),)
SPARSE_PATTERN: tuple[int, ...] = (0, 5)
# the patterns with shipped per-target U-Nets (in training order)
UNET_PATTERNS: tuple[tuple[int, ...], ...] = (*M.HELDOUT_PATTERNS, *SEEN_PATTERNS, SPARSE_PATTERN, *M.FAR_PATTERNS)


def pattern_key(observed: Sequence[int]) -> str:
    """``(0, 1, 3)`` -> ``"0-1-3"`` (the U-Net file's key of a pattern)."""
    return "-".join(str(int(o)) for o in sorted(set(observed)))


@lru_cache(maxsize=3)
def load_model(which: str = "tissue") -> tuple[M.MCD, M.Standardiser, dict]:
    """The shipped MCD model (``tissue`` 32 x 32 panels, ``tissue_apart`` the same trained with the group rule, or
    ``cells`` H = W = 1 vectors) and its standardiser."""
    from backend import weights

    path, _, flag = WEIGHTS.get(which, (CELLS_FILE, None, ""))
    meta = weights.read_meta(path)
    model = M.MCD(M.config_from(meta.config))
    part = "cells" if path == CELLS_FILE else "tissue"
    weights.load_into(model, path, made_by=f"python -m backend.train mcd --part {part}{flag}")
    return model, M.Standardiser(meta.extra["mean"], meta.extra["std"]), meta.quality


def standardised_input(src: str | np.ndarray) -> tuple[np.ndarray, np.ndarray | None, str]:
    """A preset name or a user's ``(C, H, W)`` stack -> ``(z (1, C, H, W), noise-free z or None, "preset"|"upload")``.

    Presets use the training panels' standardiser; a user's stack is z-scored per channel with its own statistics
    (its units differ from the synthetic panels')."""
    if isinstance(src, str):
        _, std, _ = load_model("tissue")
        p = T.preset(src)
        return std.fwd(p.x), std.fwd(p.mean), "preset"
    x = np.asarray(src, np.float32)[None]
    return M.Standardiser.fit(x).fwd(x), None, "upload"


def _unets_from(state: dict, prefix: str, n_in: int, widths: tuple[int, ...]) -> dict[int, B.UNetRegressor]:
    models = {}
    for t in sorted({int(k[len(prefix):].split(".")[0][1:]) for k in state if k.startswith(prefix)}):
        net = B.UNetRegressor(n_in, widths)
        head = f"{prefix}t{t}."
        net.load_state_dict({k[len(head):]: v.float() for k, v in state.items() if k.startswith(head)})
        models[t] = net.eval()
    return models


@lru_cache(maxsize=1)
def load_unets() -> dict[str, dict[int, B.UNetRegressor]]:
    """The shipped per-target U-Net regressors: ``{pattern_key: {target: model}}`` (see :data:`UNET_PATTERNS`)."""
    from backend import weights

    state, meta = weights.load(UNET_FILE, made_by="python -m backend.train mcd --part unet")
    widths = tuple(meta.config["widths"])
    return {key: _unets_from(state, f"p{key}.", len(key.split("-")), widths) for key in meta.config["patterns"]}


@lru_cache(maxsize=3)
def load_regressor(which: str = "tissue") -> M.MaskedRegressor:
    """The shipped deterministic masked regressor (``tissue`` panels, ``tissue_apart`` from the model trained with
    the group rule, or ``cells`` vectors)."""
    from backend import weights

    if which in WEIGHTS:
        _, path, flag = WEIGHTS[which]
        state, meta = weights.load(path, made_by=f"python -m backend.train mcd --part regressor{flag}")
        cfg = meta.config
    else:
        state, meta = weights.load(CELLS_BASELINES_FILE, made_by="python -m backend.train mcd --part cellsbase")
        cfg = meta.config["regressor"]
        state = {k[4:]: v for k, v in state.items() if k.startswith("reg.")}
    model = M.MaskedRegressor(M.config_from(cfg))
    model.load_state_dict({k: v.float() for k, v in state.items()})
    return model.eval()


@lru_cache(maxsize=1)
def load_cell_unets() -> tuple[dict[int, B.UNetRegressor], tuple[int, ...]]:
    """The per-target regressor networks on per-cell vectors and the pattern they were trained for."""
    from backend import weights

    state, meta = weights.load(CELLS_BASELINES_FILE, made_by="python -m backend.train mcd --part cellsbase")
    obs = tuple(meta.config["unet"]["observed"])
    return _unets_from(state, "unet.", len(obs), tuple(meta.config["unet"]["widths"])), obs


@lru_cache(maxsize=1)
def train_z() -> np.ndarray:
    """The first 300 training panels, standardised with the shipped model's statistics."""
    _, std, _ = load_model("tissue")
    return std.fwd(T.generate(300, T.TRAIN_SEED).x).astype(np.float32)


@lru_cache(maxsize=1)
def train_cov() -> np.ndarray:
    """Pixel covariance of the first 300 training panels."""
    return B.pixel_cov(train_z())


@lru_cache(maxsize=1)
def train_msr() -> B.MultiScaleRidge:
    """The multi-scale ridge's moments over the first 300 training panels."""
    return B.MultiScaleRidge.fit(train_z())


def parse_observed(text: str | Sequence[int], channels: int = T.C) -> list[int]:
    """``"0,1,2"`` (or a list) -> sorted distinct indices, checked: 1 to C-1 observed channels in range."""
    try:
        obs = [int(v) for v in text.split(",") if v.strip()] if isinstance(text, str) else [int(v) for v in text]
    except ValueError:
        raise InputError(f"--observed must be comma-separated channel indices such as 0,1,2; got {text!r}") from None
    bad = [o for o in obs if not 0 <= o < channels]
    if bad:
        raise InputError(f"observed channel(s) {bad} out of range; indices run 0..{channels - 1}")
    obs = sorted(set(obs))
    if not obs or len(obs) >= channels:
        raise InputError(f"observe between 1 and {channels - 1} channels (got {len(obs)}); the rest are imputed")
    return obs


# --------------------------------------------------------------------------------------------------- the methods
@dataclass
class Panels:
    """One evaluation's inputs, shared by the methods: standardised panels ``z`` (N, C, H, W), the observed channels,
    the noise-free mean (or None) and the MCD sampler settings; the MCD samples (M, N, C, H, W) are drawn once, for
    both MCD entries, and their seconds kept."""

    z: np.ndarray
    observed: list[int]
    mean: np.ndarray | None
    n_samples: int
    steps: int
    seed: int
    weights: str = "tissue"  # the panels' MCD and regressor: "tissue" or "tissue_apart" (see WEIGHTS)
    samples: np.ndarray | None = None
    sampling_s: float = 0.0

    @property
    def which(self) -> str:
        """The weights for these inputs: ``weights`` for panels, ``cells`` for H = W = 1 vectors."""
        return self.weights if self.z.shape[-1] > 1 else "cells"

    def mcd_samples(self) -> np.ndarray:
        if self.samples is None:
            t0 = time.perf_counter()
            model, _, _ = load_model(self.which)
            self.samples = M.impute(model, self.z, self.observed, n_samples=self.n_samples, steps=self.steps,
                                    seed=self.seed)
            self.sampling_s = time.perf_counter() - t0
        return self.samples


Imputer = Callable[[], np.ndarray]


def _mcd_mean(run: Panels) -> np.ndarray:
    return run.mcd_samples().mean(0)


def _mcd_first(run: Panels) -> np.ndarray:
    return run.mcd_samples()[0]


def mcd(run: Panels) -> Imputer:
    """MCD, the mean of M posterior samples."""
    return partial(_mcd_mean, run)


def mcd_single(run: Panels) -> Imputer:
    """MCD, one posterior sample (the first of the M drawn)."""
    return partial(_mcd_first, run)


def _regress(run: Panels) -> np.ndarray:
    return M.regress(load_regressor(run.which), run.z, run.observed)


def regressor(run: Panels) -> Imputer:
    """The deterministic masked regressor: the same network and masking as MCD, MSE, one forward pass."""
    return partial(_regress, run)


def most_correlated(run: Panels) -> Imputer:
    return partial(B.most_correlated, run.z, run.observed, train_cov())


def ridge(run: Panels) -> Imputer:
    return partial(B.ridge, run.z, run.observed, train_cov())


def ridge_ms(run: Panels) -> Imputer | None:
    """Ridge on the observed channels at several blur scales; None for H = W = 1 vectors (no neighbourhood)."""
    return None if run.z.shape[-1] * run.z.shape[-2] == 1 else partial(train_msr().predict, run.z, run.observed)


def unet(run: Panels) -> Imputer | None:
    """The per-target U-Nets; None unless the observed pattern is one they were trained for (that is their cost)."""
    if run.z.shape[-1] * run.z.shape[-2] == 1:
        nets, obs = load_cell_unets()
        return partial(B.unet_predict, nets, run.z, run.observed) if tuple(run.observed) == obs else None
    nets = load_unets().get(pattern_key(run.observed))
    return None if nets is None else partial(B.unet_predict, nets, run.z, run.observed)


def bayes(run: Panels) -> Imputer | None:
    """The generator's noise-free mean; None when it is unknown (a user's stack)."""
    return None if run.mean is None else partial(np.asarray, run.mean)


# Each entry maps the evaluation's inputs to a prediction thunk (N, C, H, W), or None where it does not apply; the
# thunk is what is timed.
METHODS: Registry[Callable[[Panels], Imputer | None]] = Registry("imputation method")
METHODS.add("mcd", mcd, label="MCD, mean of M samples (ours)", kind="ours", color="#d62728")
METHODS.add("mcd_single", mcd_single, label="MCD, one sample (ours)", kind="ours", color="#ff9896")
METHODS.add("regressor", regressor, label="Masked regressor (same network, MSE)", kind="ablation", color="#9467bd")
METHODS.add("most_correlated", most_correlated, label="Most correlated observed channel", kind="baseline")
METHODS.add("ridge", ridge, label="Per-pixel ridge", kind="baseline")
METHODS.add("ridge_ms", ridge_ms, label="Multi-scale ridge", kind="baseline")
METHODS.add("unet", unet, label="U-Net per target", kind="baseline")
METHODS.add("bayes", bayes, label="Bayes ceiling (generator mean)", kind="reference", color="#7f7f7f")


@dataclass
class EvalResult:
    observed: list[int]
    missing: list[int]
    r: dict[str, dict[int, float]]  # method -> channel -> mean per-image Pearson r
    seconds: dict[str, float]
    heldout: bool
    n_images: int
    preds: dict[str, np.ndarray] = field(default_factory=dict)  # method -> (N, C, H, W) standardised
    r_image: dict[str, list[float]] = field(default_factory=dict)  # method -> per image: mean r over the channels
    distance: int = 0  # Hamming distance of the pattern to the nearest pattern drawn in training

    def mean_r(self, method: str) -> float:
        return float(np.mean(list(self.r[method].values())))

    def ranking(self) -> list[str]:
        """The methods that predict from the observed channels (no ceiling), best mean r first."""
        names = [m for m in self.r if METHODS.kind(m) != "reference"]
        return sorted(names, key=self.mean_r, reverse=True)

    def versus_best(self) -> dict:
        """MCD (mean of M) against the best other method of this run: the best's name, MCD's rank among the
        predicting methods, and the paired difference over the imputed channels (``backend.stats.paired_ci``)."""
        from backend.stats import paired_ci

        rank = self.ranking()
        ours = next(m for m in METHODS if METHODS.kind(m) == "ours")  # the first entry: MCD, mean of M samples
        others = [m for m in rank if METHODS.kind(m) != "ours"]
        if ours not in self.r or not others:
            return {}
        best = others[0]
        ci = paired_ci([self.r[ours][c] for c in self.missing], [self.r[best][c] for c in self.missing])
        return {"best": rank[0], "best_other": best, "mcd_rank": rank.index(ours) + 1, "methods": len(rank),
                "gain": float(ci.mean), "gain_ci": [float(ci.low), float(ci.high)], "pairs": int(ci.n),
                "resolved": bool(ci.resolved)}

    def summary(self, digits: int | None = 4) -> dict:
        """JSON-able summary; ``digits=None`` keeps full precision (the CLI)."""

        def rd(v: float) -> float:
            return float(v) if digits is None else round(float(v), digits)

        return {"observed": self.observed, "missing": self.missing, "heldout_pattern": self.heldout,
                "distance_to_training": self.distance, "n_images": self.n_images, "ranking": self.ranking(),
                "versus_best": {k: (rd(v) if isinstance(v, float) else [rd(x) for x in v] if isinstance(v, list) else v)
                                for k, v in self.versus_best().items()},
                "mean_r": {k: rd(self.mean_r(k)) for k in self.r},
                "per_channel_r": {k: {T.CHANNELS[c]: rd(v) for c, v in d.items()} for k, d in self.r.items()},
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


def evaluate(z: np.ndarray, observed: Sequence[int], methods: Sequence[str] | None = None, *,
             mean: np.ndarray | None = None, n_samples: int = 4, steps: int = 18, seed: int = 0,
             keep_preds: bool = False, weights: str = "tissue", progress=None, token=None) -> EvalResult:
    """Run ``methods`` (default: all of :data:`METHODS`) on standardised panels ``z`` (N, C, H, W) with ``observed``
    channels given; ``mean`` (the generator's noise-free mean, standardised) enables the ``bayes`` ceiling. A method
    that does not apply to these inputs (``bayes`` without ``mean``, ``unet`` for another pattern) is left out.
    ``weights``: the MCD and regressor weights of panels (:data:`WEIGHTS`)."""
    from backend.runtime import report

    obs = parse_observed(list(observed), z.shape[1])
    mis = [c for c in range(z.shape[1]) if c not in obs]
    names = [METHODS.key(n) for n in methods] if methods is not None else METHODS.names()
    run = Panels(z, obs, mean, n_samples, steps, seed, weights)
    plan = {n: fn for n in names if (fn := METHODS.get(n)(run)) is not None}
    r, secs, preds, r_img = {}, {}, {}, {}
    for i, (name, fn) in enumerate(plan.items()):
        if token is not None:
            token.check()
        report(progress, i / len(plan), f"running {METHODS.label(name)}")
        t0 = time.perf_counter()
        fresh = run.samples is None
        p = fn()
        if fresh and run.samples is not None:
            secs["mcd_sampling"] = run.sampling_s
            preds["mcd_samples"] = run.samples
        secs[name] = time.perf_counter() - t0
        r[name] = T.per_channel_r(p, z, mis)
        r_img[name] = T.per_image_r(p, z, mis).mean(1).tolist()
        if keep_preds:
            preds[name] = p
    report(progress, 1.0, "done")
    if not keep_preds:
        preds = {}
    model, _, _ = load_model(run.which)
    dist = M.distance_to_training(obs, model.cfg)
    return EvalResult(obs, mis, r, secs, dist > 0, len(z), preds, r_img, dist)
