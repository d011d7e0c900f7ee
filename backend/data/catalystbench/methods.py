"""The registry of the four fine-tuning methods (:data:`METHODS`) and of the non-LM baseline (:data:`BASELINES`).

Each LM method is a :class:`LMMethod`: whether the adapter is shared across tasks and whether regression and
classification rows go to decoupled heads; calling it trains the method's units on cached states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...registry import Registry
from . import baselines
from . import fit as F


@dataclass(frozen=True)
class LMMethod:
    """``shared_adapter``: one LoRA for every task (else one per task); ``heads``: decoupled classification and
    regression MLPs read the last prompt state (else every answer is text from the LM head)."""

    shared_adapter: bool
    heads: bool

    def __call__(self, top: Any, bench: Any, enc: Any, settings: F.FitSettings, seed: int, progress: Any = None,
                 token: Any = None) -> dict[str, F.Unit]:
        return F.train_units(top, bench, enc, self.shared_adapter, self.heads, settings, seed, progress, token)


METHODS: Registry[LMMethod] = Registry("fine-tuning method")
METHODS.add("st", LMMethod(shared_adapter=False, heads=False), label="ST (single-task, text)", kind="baseline",
            about="one LoRA per task, every answer as text from the LM head")
METHODS.add("mst", LMMethod(shared_adapter=False, heads=True), label="MST (single-task, heads)", kind="ablation",
            about="one LoRA per task with the task's decoupled head")
METHODS.add("ft", LMMethod(shared_adapter=True, heads=False), label="FT (all tasks, text)", kind="baseline",
            about="one shared LoRA, every answer as text (numbers as text)")
METHODS.add("mft", LMMethod(shared_adapter=True, heads=True), label="MFT (all tasks, routed heads)", kind="ours",
            about="one shared LoRA, task-type token routing to classification / regression MLPs or the LM head")

BASELINES: Registry[Any] = Registry("non-LM baseline")
BASELINES.add("gb", baselines.gradient_boosting, label="gradient boosting + regex", kind="baseline",
              about="scikit-learn gradient boosting per task on the record's numbers; a regular expression for extraction")
