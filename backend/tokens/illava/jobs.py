"""The pure entry points of iLLaVA: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_analysis`: one image and question answered with and without a reduction plan, every step's records on
  the patch grid, tokens per layer, multiply-adds and prefill times (``illava run``; the page's answer).
- :func:`run_eval`: accuracy of one plan and of the unreduced model on held-out scene questions (``illava eval``).
- :func:`run_sweep`: accuracy, tokens kept and prefill time of every method at several budgets (``illava sweep``;
  the page's sweep).
- :func:`run_diagnose`: why iLLaVA's encoder stage costs the counting answers (``illava diagnose``).

Each takes a frozen config that checks itself (:class:`backend.errors.InputError`), so the page and the CLI refuse the
same settings with the same words, and ``vlm``: an already loaded :class:`.tiny_vlm.TinyVLM` (None: the shipped one,
with the config's ``projector`` file where it has one). The plan settings (:class:`PlanConfig`) are checked against
the tiny VLM's shape: 12 encoder blocks, 30 LM layers, 256 image tokens.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from .evaluation import IMAGE_POSITIONS, SWEEP_KEEPS, SWEEP_METHODS, Analysis
from .merging import canonical, get_method
from .plan import DEFAULT_LLM_LAYER, DEFAULT_SPLIT, DEFAULT_VIT_LAYERS, ReductionPlan, plan_for_budget

#: The tiny VLM's shape (DINOv2 ViT-S/14 at 224 px, SmolLM2-135M), which the configs check plans against.
ENCODER_BLOCKS, LM_LAYERS, IMAGE_TOKENS = 12, 30, 256
MAX_SCENES = 1000


def _ints(values: Any, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be whole numbers; got {values!r}.") from None


def _share(value: float, what: str) -> float:
    if not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{what} must be in [0, 1]; got {value}.")
    return float(value)


def _scenes(n: int, start: int) -> None:
    if not 1 <= int(n) <= MAX_SCENES:
        raise InputError(f"The number of held-out scenes must be between 1 and {MAX_SCENES}; got {n}.")
    if int(start) < 0:
        raise InputError(f"The first held-out scene index must be >= 0; got {start}.")


@dataclass(frozen=True)
class PlanConfig:
    """A reduction plan of the tiny VLM.

    With ``keep`` (share of the 256 image tokens kept): the method's default placement for that budget
    (:func:`.plan.plan_for_budget`): ``split`` of the removal over ``vit_layers`` (no encoder blocks: all of it in the
    LLM), the rest before LLM layer ``llm_layer``. Without ``keep``: explicit steps, ``r`` tokens removed at each of
    ``vit_layers`` (only for a method that runs in the encoder) and ``llm_r`` at each of ``llm_layers``. ``m`` and
    ``n_recycled``: the paper variant's neighbours per recycled token and its number of recycled tokens; ``seed``: the
    random baseline's generator."""

    method: str = "illava_code"
    keep: float | None = None
    split: float = DEFAULT_SPLIT
    vit_layers: tuple[int, ...] = DEFAULT_VIT_LAYERS
    r: int = 32
    llm_layers: tuple[int, ...] = ()
    llm_r: int = 0
    llm_layer: int = DEFAULT_LLM_LAYER
    m: int = 5
    n_recycled: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "method", canonical(self.method))
        object.__setattr__(self, "vit_layers", _ints(self.vit_layers, "The encoder merge blocks"))
        object.__setattr__(self, "llm_layers", _ints(self.llm_layers, "The LLM reduction layers"))
        if self.keep is not None:
            object.__setattr__(self, "keep", _share(self.keep, "The share of image tokens to keep"))
        object.__setattr__(self, "split", _share(self.split, "The encoder share of the reduction"))
        if self.n_recycled is not None and int(self.n_recycled) < 1:
            raise InputError(f"The number of recycling tokens must be at least 1; got {self.n_recycled}.")
        self.plan().validate(ENCODER_BLOCKS, LM_LAYERS, IMAGE_TOKENS)

    def plan(self, n_tokens: int = IMAGE_TOKENS) -> ReductionPlan:
        """The :class:`.plan.ReductionPlan` of these settings for ``n_tokens`` image tokens."""
        if self.keep is not None:
            plan = plan_for_budget(self.method, self.keep, n_tokens, split=self.split if self.vit_layers else 0.0,
                                   vit_layers=self.vit_layers, llm_layer=int(self.llm_layer), seed=int(self.seed))
            return replace(plan, m=int(self.m), n_recycled=self.n_recycled)
        vit_layers = self.vit_layers if "vit" in get_method(self.method).stages else ()
        return ReductionPlan(self.method, vit_layers=vit_layers, vit_r=int(self.r) if vit_layers else 0,
                             llm_layers=self.llm_layers, llm_r=int(self.llm_r) if self.llm_layers else 0,
                             m=int(self.m), n_recycled=self.n_recycled, seed=int(self.seed))


@dataclass(frozen=True)
class AnalysisConfig(PlanConfig):
    """One image and question: the plan, ``repeats`` timed prefill runs of each path (median), and the projector
    file (None: the shipped one) when the job loads the model."""

    repeats: int = 3
    projector: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= int(self.repeats) <= 50:
            raise InputError(f"The timed repeats must be between 1 and 50; got {self.repeats}.")


@dataclass(frozen=True)
class EvalConfig(PlanConfig):
    """Accuracy of the plan on ``scenes`` held-out scenes from index ``start``; ``positions``: the LM position ids of
    the reduced image tokens (``"sequence"``, as the released code feeds them, or the ``"source"`` diagnostic)."""

    scenes: int = 100
    start: int = 0
    positions: str = "sequence"
    projector: str | None = None

    def __post_init__(self) -> None:
        from ...registry import choose

        super().__post_init__()
        _scenes(self.scenes, self.start)
        object.__setattr__(self, "positions", choose(self.positions, IMAGE_POSITIONS, "image_positions"))


@dataclass(frozen=True)
class SweepConfig:
    """Every method of ``methods`` at each budget of ``keeps`` (shares of the 256 image tokens kept), plus the
    unreduced model, on ``scenes`` held-out scenes from index ``start``; ``repeats`` timed requests per plan."""

    scenes: int = 40
    keeps: tuple[float, ...] = SWEEP_KEEPS
    methods: tuple[str, ...] = SWEEP_METHODS
    repeats: int = 3
    start: int = 0

    def __post_init__(self) -> None:
        _scenes(self.scenes, self.start)
        keeps = tuple(_share(k, "Each budget (share of image tokens kept)") for k in self.keeps)
        methods = tuple(canonical(m) for m in self.methods)
        if not keeps or not methods:
            raise InputError("The sweep needs at least one budget and one method.")
        if not 1 <= int(self.repeats) <= 50:
            raise InputError(f"The timed repeats must be between 1 and 50; got {self.repeats}.")
        for m in methods:
            for k in keeps:
                plan_for_budget(m, k, IMAGE_TOKENS).validate(ENCODER_BLOCKS, LM_LAYERS, IMAGE_TOKENS)
        object.__setattr__(self, "keeps", keeps)
        object.__setattr__(self, "methods", methods)


@dataclass(frozen=True)
class DiagnoseConfig:
    """The counting diagnosis on ``scenes`` held-out scenes from index ``start`` at ``keep`` of the image tokens."""

    scenes: int = 36
    keep: float = 1 / 3
    start: int = 0
    projector: str | None = None

    def __post_init__(self) -> None:
        _scenes(self.scenes, self.start)
        if not 0.0 < float(self.keep) <= 1.0:
            raise InputError(f"The share of image tokens to keep must be in (0, 1]; got {self.keep}.")


def _vlm(vlm: Any, projector: str | None = None) -> Any:
    if vlm is not None:
        return vlm
    from .projector import PROJECTOR_FILE
    from .tiny_vlm import TinyVLM

    return TinyVLM.load(projector or PROJECTOR_FILE)


def run_analysis(image: Any, question: str, config: AnalysisConfig, vlm: Any = None,
                 progress: Progress | None = None, token: CancelToken | None = None) -> Analysis:
    """``question`` about ``image`` (a PIL image; resized to the encoder's 224 px) with and without the plan: an
    :class:`.evaluation.Analysis` (answers, step records, tokens per layer, costs, prefill times)."""
    from .evaluation import analyze

    progress = checked(progress, token)
    vlm = _vlm(vlm, config.projector)
    return analyze(vlm, image, question, config.plan(vlm.n_patches), repeats=int(config.repeats), progress=progress)


def run_eval(config: EvalConfig, vlm: Any = None, progress: Progress | None = None,
             token: CancelToken | None = None) -> dict[str, Any]:
    """Accuracy of the plan and of the unreduced model on the same held-out questions: ``{unreduced, reduced,
    accuracy_drop_points}`` (the two :meth:`.evaluation.EvalResult.to_dict`)."""
    from .evaluation import evaluate
    from .scenes import scenes

    progress = checked(progress, token)
    vlm = _vlm(vlm, config.projector)
    plan = config.plan(vlm.n_patches)
    data = scenes(int(config.scenes), "heldout", start=int(config.start))
    base = evaluate(vlm, data, progress=lambda f, m="": report(progress, 0.5 * f, m))
    res = base
    if plan.reduces():
        res = evaluate(vlm, data, plan, image_positions=config.positions,
                       progress=lambda f, m="": report(progress, 0.5 + 0.5 * f, m))
    report(progress, 1.0, "done")
    return {"unreduced": base.to_dict(), "reduced": res.to_dict(),
            "accuracy_drop_points": round(100 * (base.accuracy - res.accuracy), 2)}


def run_sweep(config: SweepConfig, vlm: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None) -> dict[str, Any]:
    """Rows of accuracy vs tokens kept vs prefill time (:func:`.evaluation.sweep`) and the machine they were timed
    on: ``{scenes, machine, rows}``."""
    import torch

    from .evaluation import sweep

    progress = checked(progress, token)
    vlm = _vlm(vlm)
    rows = sweep(vlm, n_scenes=int(config.scenes), keeps=config.keeps, methods=config.methods,
                 time_repeats=int(config.repeats), start=int(config.start), progress=progress)
    machine = (f"{platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} with "
               f"{torch.get_num_threads()} thread(s), median of {config.repeats} timed requests")
    return {"scenes": int(config.scenes), "machine": machine, "rows": rows}


def run_diagnose(config: DiagnoseConfig, vlm: Any = None, progress: Progress | None = None,
                 token: CancelToken | None = None) -> dict[str, Any]:
    """Ranking signals per encoder block, object tokens kept per merge and the counting controls
    (:func:`.diagnosis.diagnose`)."""
    from .diagnosis import diagnose

    progress = checked(progress, token)
    vlm = _vlm(vlm, config.projector)
    return diagnose(vlm, n_scenes=int(config.scenes), keep=float(config.keep), start=int(config.start),
                    progress=progress)


__all__ = [
    "ENCODER_BLOCKS", "IMAGE_TOKENS", "LM_LAYERS", "AnalysisConfig", "DiagnoseConfig", "EvalConfig", "PlanConfig",
    "SweepConfig", "run_analysis", "run_diagnose", "run_eval", "run_sweep",
]
