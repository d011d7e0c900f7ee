"""Bias transfer on the planted corpus: the settings, the shipped dual encoders and the fit of model bias on data bias.

A setting is the base corpus (attribute noise 0.1, no confounding, no amplification) with one limiting factor raised:
attribute ``noise``, age ``confound`` or reporting ``amplify`` (:mod:`backend.data.laionaudit.planted`), each at
three strengths (the first is the base), plus the ``shuffled`` control. Every setting is trained with the seeds
:data:`SEEDS` (the seed draws the corpus sample and the model's initialisation and batches); the encoders of one
setting ship in ``assets/laionaudit_<setting>.safetensors`` (tensors ``seed<k>.<name>``), written by
``python -m backend.train laionaudit``.

Per seed: data bias (the female share among single-gender captions mentioning each concept, counted by the audit of
:mod:`backend.data.laionaudit.audit`), model bias ``d(c)`` (:func:`backend.data.laionaudit.dual.model_bias` on
:func:`backend.data.laionaudit.planted.evaluation_set`) and the least-squares fit with its R^2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import Registry, choose
from ...runtime import ASSETS
from .planted import CONCEPTS, PlantedConfig

SEEDS = (0, 1, 2)
#: the limiting factors and their strengths (the first strength is the base corpus's)
FACTORS: dict[str, tuple[float, ...]] = {
    "noise": (0.1, 0.5, 0.8),
    "confound": (0.0, 1.0, 2.0),
    "amplify": (1.0, 3.0, 9.0),
}
FACTOR_LABELS = {"noise": "attribute noise", "confound": "age confounding", "amplify": "reporting amplification",
                 "shuffled": "shuffled captions (control)"}
#: the base corpus of every setting (sizes of the shipped training runs)
BASE = PlantedConfig(images=20000, mention=0.3, noise=0.1, confound=0.0, amplify=1.0, visible=0.5)


@dataclass(frozen=True)
class Setting:
    """One trained setting: its name (the asset suffix), the factor raised, its strength and the corpus config."""

    name: str
    factor: str
    strength: float
    config: PlantedConfig

    @property
    def path(self) -> Any:
        return ASSETS / f"laionaudit_{self.name}.safetensors"


def _settings() -> dict[str, Setting]:
    out = {"base": Setting("base", "base", 0.0, BASE)}
    for factor, strengths in FACTORS.items():
        for s in strengths[1:]:
            name = f"{factor}_{s:g}".replace(".", "p")
            out[name] = Setting(name, factor, s, replace(BASE, **{factor: s}))
    out["shuffled"] = Setting("shuffled", "shuffled", 1.0, replace(BASE, shuffle=True))
    return out


SETTINGS: dict[str, Setting] = _settings()


def setting(name: str) -> Setting:
    """The setting called ``name``; unknown names raise InputError listing the valid ones."""
    return SETTINGS[choose(name, tuple(SETTINGS), "setting")]


def ladder(factor: str) -> list[tuple[float, str]]:
    """``[(strength, setting name)]`` of one factor, from the base upwards."""
    factor = choose(factor, tuple(FACTORS), "factor")
    names = ["base"] + [n for n, s in SETTINGS.items() if s.factor == factor]
    return [(FACTORS[factor][0] if n == "base" else SETTINGS[n].strength, n) for n in names]


def corpus_config(name: str, seed: int) -> PlantedConfig:
    """The corpus that seed ``seed`` of setting ``name`` was trained on."""
    return replace(setting(name).config, seed=seed)


@dataclass(frozen=True)
class ConceptCounts:
    """Caption counts per concept ``[C]``: single-female ``nf``, single-male ``nm``, any caption ``nc``, female
    (any) ``ncf``; corpus totals ``n``, ``tf`` (female captions), ``sf`` / ``sm`` (single-gender captions)."""

    nf: np.ndarray
    nm: np.ndarray
    nc: np.ndarray
    ncf: np.ndarray
    n: int
    tf: int
    sf: int
    sm: int


def female_share(c: ConceptCounts) -> np.ndarray:
    """The paper's data bias: the female share among single-gender captions mentioning the concept."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c.nf + c.nm > 0, c.nf / np.maximum(c.nf + c.nm, 1), np.nan)


def log_odds(c: ConceptCounts) -> np.ndarray:
    """log((nf + 0.5) / (nm + 0.5)): the share on the logit scale (a baseline measure of data bias)."""
    return np.log((c.nf + 0.5) / (c.nm + 0.5))


def pmi_female(c: ConceptCounts) -> np.ndarray:
    """PMI(female, concept) over all captions (the audit's association; a baseline measure of data bias)."""
    from .audit import pmi

    return pmi(c.ncf, c.tf, c.nc, c.n)


MEASURES: Registry[Callable[[ConceptCounts], np.ndarray]] = Registry("data-bias measure")
MEASURES.add("single_gender_share", female_share, label="female share (paper)", kind="ours")
MEASURES.add("log_odds", log_odds, label="log odds female : male", kind="baseline")
MEASURES.add("pmi_with_female", pmi_female, label="PMI(female, concept)", kind="baseline")


def concept_counts(captions: list[str], concepts: list[str]) -> ConceptCounts:
    """The :class:`ConceptCounts` of ``concepts`` in ``captions`` (one counting pass of the audit)."""
    from .audit import Counts
    from .lexicon import GENDER_GROUPS, IDENTITY

    fw, mw = IDENTITY[GENDER_GROUPS[0]], IDENTITY[GENDER_GROUPS[1]]
    cnt = Counts(captions, concepts, fw, mw)
    f, m = cnt.any_of(fw), cnt.any_of(mw)
    x = cnt.matrix(concepts)

    def col(mask: np.ndarray) -> np.ndarray:
        return np.asarray(x.T @ mask.astype(np.int64)).ravel()

    return ConceptCounts(col(f & ~m), col(m & ~f), np.asarray(x.sum(0)).ravel(), col(f), cnt.n, int(f.sum()),
                         int((f & ~m).sum()), int((m & ~f).sum()))


@lru_cache(maxsize=64)
def data_counts(name: str, seed: int) -> ConceptCounts:
    """The concept counts of the captions seed ``seed`` of setting ``name`` was trained on (captions only: no image
    is rendered)."""
    from .planted import sample

    caps = sample(corpus_config(name, seed), render_images=False).captions
    return concept_counts(caps, list(CONCEPTS))


def data_bias(name: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(female share [C], single-gender caption count [C])`` of that corpus."""
    c = data_counts(name, seed)
    return female_share(c), c.nf + c.nm


@lru_cache(maxsize=1)
def evaluation() -> tuple[np.ndarray, np.ndarray]:
    from .planted import evaluation_set

    return evaluation_set()


def load_models(name: str) -> dict[int, Any]:
    """The shipped encoders of setting ``name``: ``{seed: DualEncoder}``."""
    from ... import weights
    from .dual import DualConfig, DualEncoder

    s = setting(name)
    if not s.path.is_file():
        raise InputError(f"The encoders of setting {name!r} are missing: run `python -m backend.train laionaudit`.")
    tensors, meta = weights.load(s.path, made_by="python -m backend.train laionaudit")
    cfg = DualConfig(**{k: v for k, v in meta.config.get("dual", {}).items() if k in DualConfig.__dataclass_fields__})
    out = {}
    for seed in sorted({int(k.split(".", 1)[0][4:]) for k in tensors}):
        m = DualEncoder(cfg)
        pre = f"seed{seed}."
        m.load_state_dict({k[len(pre):]: v.float() for k, v in tensors.items() if k.startswith(pre)})
        out[seed] = m.eval()
    return out


def evaluate(name: str, models: dict[int, Any] | None = None) -> dict[str, Any]:
    """Data bias, model bias and the linear fit per seed of setting ``name`` (``models`` default: the shipped)."""
    from .dual import linear_fit, model_bias
    from .planted import prompts

    models = models if models is not None else load_models(name)
    ev, fem = evaluation()
    seeds = []
    for seed, m in sorted(models.items()):
        counts = data_counts(name, seed)
        db, n = data_bias(name, seed)
        d = model_bias(m, prompts(), ev, fem)
        fit = linear_fit(db, d)
        others = {k: round(linear_fit(MEASURES.get(k)(counts), d)["r2"], 5) for k in MEASURES}
        seeds.append({"seed": seed, "data_bias": [round(float(x), 5) for x in db],
                      "single_gender_captions": [int(x) for x in n],
                      "model_bias": [round(float(x), 5) for x in d], **{k: round(v, 5) for k, v in fit.items()},
                      "r2_by_measure": others})
    r2 = np.array([s["r2"] for s in seeds])
    s = SETTINGS[name]
    by_measure = {k: round(float(np.mean([row["r2_by_measure"][k] for row in seeds])), 5) for k in MEASURES}
    return {"setting": name, "factor": s.factor, "strength": s.strength, "config": s.config.to_dict(),
            "seeds": seeds, "r2_mean": round(float(r2.mean()), 5), "r2_min": round(float(r2.min()), 5),
            "r2_max": round(float(r2.max()), 5), "r2_mean_by_measure": by_measure}
