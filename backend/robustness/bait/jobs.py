"""BAIT as pure jobs: what the page, the CLI and the benchmark call.

- :func:`run_protect`: protect images (the user's, or a preset's test images) with every method at an epsilon, using
  the shipped protectors of a source; the protected images, their amplified perturbations and realised L-infinity
  norms (``bait protect`` and the page).
- :func:`run_grid`: the victim grid of the shipped evaluation log (``assets/bait_grid.json``) as per-cell means and
  95% bootstrap intervals over seeds, and optionally the re-evaluation of the shipped seed-0 victims on the clean test
  set (``bait grid`` and the page).

The configs are frozen dataclasses validated on construction (InputError saying what to change); results hold small
summaries and uint8 thumbnails, never models.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from ...weights import ASSETS

PRIOR_WEIGHTS = ASSETS / "bait_prior.safetensors"
PROTECTOR_WEIGHTS = ASSETS / "bait_protectors.safetensors"
VICTIM_WEIGHTS = ASSETS / "bait_victims.safetensors"
GRID_FILE = ASSETS / "bait_grid.json"
SHIPPED_SOURCE = "shapes"  # the source whose seed-0 victims ship
MADE_BY = "python -m backend.train bait"
MAX_SIDE = 256  # the user's image is scaled down to at most this side before protection
N_PRESET = 8  # test images a preset protects


@lru_cache(maxsize=1)
def load_prior() -> dict[str, Any]:
    """The shipped prior's state dict (``assets/bait_prior.safetensors``)."""
    from ... import weights

    state, _ = weights.load(PRIOR_WEIGHTS, made_by=MADE_BY)
    return state


@lru_cache(maxsize=4)
def load_protectors(source: str, seed: int = 0):  # noqa: ANN201 - experiment.Protectors (imports torch)
    """The shipped protectors of ``source`` trained with ``seed`` (0, the page's, or another seed of the grid): EMN
    surrogate, crafting model (BAIT's surrogate warm start), BAIT's generator and its ablation's."""
    from ... import weights
    from ...weights import WeightsError
    from .data import SOURCES
    from .experiment import Protectors

    source = SOURCES.key(source)
    state, meta = weights.load(PROTECTOR_WEIGHTS, made_by=MADE_BY)
    # Protectors' model fields in order, each built from its annotation (a string: Generator or SmallCNN); the
    # file's key of each is the field name.
    mods = {f.name: _module(f.type, meta.config) for f in fields(Protectors) if f.name != "logs"}
    pre = protector_prefix(source, seed)
    if not any(k.startswith(pre + name + ".") for name in mods for k in state):
        raise WeightsError(f"{PROTECTOR_WEIGHTS.name} has no protectors of {source} seed {seed}; seeds: "
                           f"{meta.config.get('seeds', [0])}.")
    for name, mod in mods.items():
        key = f"{pre}{name}."
        mod.load_state_dict({k[len(key):]: v for k, v in state.items() if k.startswith(key)})
        mod.eval()
    return Protectors(**mods)


def protector_prefix(source: str, seed: int) -> str:
    """The key prefix of a seed's protectors in ``bait_protectors.safetensors``: ``<source>.`` for seed 0 (the
    page's), ``<source>.seed<s>.`` for the grid's other seeds."""
    return f"{source}." if int(seed) == 0 else f"{source}.seed{int(seed)}."


def _module(annotation: str, config: dict[str, Any]):  # noqa: ANN202 - a torch module
    """An empty model for a :class:`~backend.robustness.bait.experiment.Protectors` field of that annotation."""
    from .generator import Generator
    from .nets import SmallCNN

    return Generator(width=int(config.get("width", 8))) if annotation == "Generator" else SmallCNN()


def grid_log() -> dict[str, Any]:
    """The shipped evaluation log of the victim grid (``assets/bait_grid.json``)."""
    import json

    from ...weights import WeightsError

    if not GRID_FILE.is_file():
        raise WeightsError(f"{GRID_FILE.name} is missing; make it with `{MADE_BY}`.")
    return json.loads(GRID_FILE.read_text())


# ----------------------------------------------------------------------------------------------------- protect
@dataclass(frozen=True)
class ProtectConfig:
    """Protect images with ``methods`` (registry names; empty = all) at ``eps`` (/255) using the shipped protectors
    of ``source``. ``label``: the class the user's image shows (needed by the label-driven methods; None = the
    crafting model's prediction). The defaults are the CLI's."""

    source: str = "shapes"
    eps: int = 8
    methods: tuple[str, ...] = ()
    label: int | None = None

    def __post_init__(self) -> None:
        from .data import N_CLASSES, SOURCES
        from .perturb import check_eps

        object.__setattr__(self, "source", SOURCES.key(self.source))
        check_eps(self.eps)
        from .experiment import METHODS

        object.__setattr__(self, "methods", METHODS.keys_of(self.methods) if self.methods else tuple(METHODS))
        if self.label is not None and (isinstance(self.label, bool) or not isinstance(self.label, int)
                                       or not 0 <= self.label < N_CLASSES):
            raise InputError(f"label must be a class index 0-{N_CLASSES - 1} or empty; got {self.label!r}.")


@dataclass
class ProtectResult:
    """Clean images uint8 ``[n, H, W, 3]``, their labels and where the labels came from (``true`` for a preset,
    ``given`` or ``predicted`` for an upload); per method the protected images, the perturbation amplified to the
    full grey range (``128 + 127 * delta / eps``) and a row of costs and norms."""

    source: str
    eps: int
    clean: np.ndarray
    labels: list[int]
    label_from: str
    class_names: list[str]
    protected: dict[str, np.ndarray] = field(default_factory=dict)
    amplified: dict[str, np.ndarray] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"source": self.source, "eps": self.eps, "images": int(self.clean.shape[0]),
                "size": list(self.clean.shape[1:3]), "labels": self.labels, "label_from": self.label_from,
                "rows": self.rows}


def prepare_image(image: Any) -> np.ndarray:
    """An RGB image (PIL or uint8 array ``[H, W, 3]``) -> uint8 ``[H, W, 3]`` scaled down to at most
    :data:`MAX_SIDE` px a side."""
    from PIL import Image

    img = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image, dtype=np.uint8))
    img = img.convert("RGB")
    if max(img.size) > MAX_SIDE:
        s = MAX_SIDE / max(img.size)
        img = img.resize((max(16, round(img.size[0] * s)), max(16, round(img.size[1] * s))), Image.BILINEAR)
    return np.asarray(img, dtype=np.uint8)


def run_protect(image: Any, config: ProtectConfig, progress: Progress | None = None,
                token: CancelToken | None = None) -> ProtectResult:
    """Protect ``image`` (PIL / uint8 ``[H, W, 3]``; None = the first :data:`N_PRESET` test images of the source)
    with every chosen method at ``config.eps``."""
    import time

    from .data import load_source
    from .experiment import METHODS, NEEDS_LABEL
    from .perturb import linf, to_float

    progress = checked(progress, token)
    prot = load_protectors(config.source)
    test = load_source(config.source, "test", N_PRESET)
    if image is None:
        clean, labels, label_from = test.images, [int(v) for v in test.labels], "true"
    else:
        clean = prepare_image(image)[None]
        if config.label is not None:
            labels, label_from = [int(config.label)], "given"
        else:
            import torch

            with torch.no_grad():
                labels = [int(prot.crafting(to_float(clean)).argmax(1)[0])]
            label_from = "predicted"
    res = ProtectResult(config.source, config.eps, clean, labels, label_from, list(test.class_names))
    y = np.asarray(labels, dtype=np.int64)
    for j, name in enumerate(config.methods):
        t = time.perf_counter()
        out = METHODS.get(name)(clean, y, prot, config.eps)
        sec = time.perf_counter() - t
        d = out.astype(np.int16) - clean.astype(np.int16)
        res.protected[name] = out
        res.amplified[name] = np.clip(128 + np.rint(127 * d / config.eps), 0, 255).astype(np.uint8)
        res.rows.append({"method": name, "label": METHODS.label(name), "kind": METHODS.kind(name),
                         "linf": linf(clean, out), "mean_abs": round(float(np.abs(d).mean()), 3),
                         "psnr_db": _psnr(clean, out), "needs_label": NEEDS_LABEL[name],
                         "seconds": round(sec, 3)})
        report(progress, (j + 1) / len(config.methods), f"{METHODS.label(name)}: L-inf {res.rows[-1]['linf']}/255")
    return res


def _psnr(a: np.ndarray, b: np.ndarray) -> float | None:
    mse = float(((a.astype(np.float64) - b.astype(np.float64)) ** 2).mean())
    return None if mse == 0 else round(float(10 * np.log10(255.0**2 / mse)), 2)


# -------------------------------------------------------------------------------------------------------- grid
@dataclass(frozen=True)
class GridConfig:
    """Read the shipped grid log; ``reevaluate``: also re-evaluate the shipped seed-0 victims on the first
    ``n_test`` clean test images of the shipped source (1-500)."""

    reevaluate: bool = False
    n_test: int = 500

    def __post_init__(self) -> None:
        if not 1 <= int(self.n_test) <= 500:
            raise InputError(f"n_test must be 1-500; got {self.n_test}.")


@dataclass
class GridResult:
    """``cells``: per (source, method, init) the seeds' clean test accuracies, their mean and a 95% bootstrap
    interval; ``settings``: the training log's settings and costs; ``head_start``: per source the clean-trained
    victims' accuracy from scratch and from the prior and their paired difference over seeds (95% t-interval);
    ``reevaluated``: per shipped victim the logged and the re-measured accuracy (on ``n_test`` images)."""

    cells: list[dict[str, Any]]
    settings: dict[str, Any]
    head_start: list[dict[str, Any]] = field(default_factory=list)
    reevaluated: list[dict[str, Any]] = field(default_factory=list)

    def accuracies(self, source: str, method: str, init: str) -> list[float]:
        for c in self.cells:
            if (c["source"], c["method"], c["init"]) == (source, method, init):
                return c["accuracies"]
        raise KeyError((source, method, init))

    def summary(self) -> dict[str, Any]:
        return {"cells": [{k: v for k, v in c.items() if k != "accuracies"} for c in self.cells],
                "head_start": self.head_start, "reevaluated": self.reevaluated, **self.settings}


def run_grid(config: GridConfig = GridConfig(), progress: Progress | None = None,
             token: CancelToken | None = None) -> GridResult:
    """The victim grid from the shipped log (and the re-evaluation of the shipped victims)."""
    from ...stats import paired_bootstrap, paired_ci
    from .experiment import METHODS

    progress = checked(progress, token)
    log = grid_log()
    cells: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for r in log["rows"]:
        cells.setdefault((r["source"], r["method"], r["init"]), []).append((r["seed"], r["test_accuracy"]))
    out = []
    for (src, m, init), pairs in cells.items():
        accs = [a for _, a in sorted(pairs)]
        ci = paired_bootstrap(np.mean, accs, n_boot=1000)
        out.append({"source": src, "method": m, "init": init, "mean": round(float(np.mean(accs)), 4),
                    "ci": [round(ci.low, 4), round(ci.high, 4)], "n": len(accs), "accuracies": accs})
    settings = {"eps": log["eps"], "seeds": log["seeds"], "train_seconds": log["seconds"],
                "sources": {s: {k: v for k, v in d.items() if not k.endswith("curve")}
                            for s, d in log["sources"].items()}}
    res = GridResult(out, settings)
    clean = METHODS.names("reference")[0]
    for src in log["sources"]:
        scratch, prior = res.accuracies(src, clean, "scratch"), res.accuracies(src, clean, "pretrained")
        ci = paired_ci(prior, scratch)
        res.head_start.append({"source": src, "scratch": round(float(np.mean(scratch)), 4),
                               "prior": round(float(np.mean(prior)), 4), "head_start": round(ci.mean, 4),
                               "ci": [round(ci.low, 4), round(ci.high, 4)], "seeds": ci.n})
    if config.reevaluate:
        res.reevaluated = reevaluate_victims(log, int(config.n_test), progress)
    return res


def reevaluate_victims(log: dict[str, Any], n_test: int = 500, progress: Progress | None = None
                       ) -> list[dict[str, Any]]:
    """Re-measure the shipped seed-0 victims' clean test accuracy on the first ``n_test`` test images."""
    from ... import weights
    from .data import load_source
    from .nets import SmallCNN
    from .perturb import accuracy

    state, _ = weights.load(VICTIM_WEIGHTS, made_by=MADE_BY)
    test = load_source(SHIPPED_SOURCE, "test", n_test)
    keys = sorted({".".join(k.split(".")[:3]) for k in state})
    logged = {f"{r['method']}.{r['init']}.{r['seed']}": r["test_accuracy"] for r in log["rows"]
              if r["source"] == SHIPPED_SOURCE}
    out = []
    for j, key in enumerate(keys):
        net = SmallCNN()
        net.load_state_dict({k[len(key) + 1:]: v for k, v in state.items() if k.startswith(key + ".")})
        out.append({"victim": key, "logged": logged.get(key), "measured": round(accuracy(net, test.images,
                                                                                        test.labels), 4),
                    "n_test": len(test)})
        report(progress, (j + 1) / len(keys), f"re-evaluated {key}")
    return out
