"""The inputs of Vintix II / DPT: the ``bandit_task`` kind (a user's task as a small CSV), its examples, and the named
tasks the page and the CLI offer instead of one (``--task``).

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``bandit_task`` | ``backend.icrl.vintix.taskfile.read_task_csv`` | CSV ``mean`` / ``center,width[,height]`` / ``a,r`` | 256 KB, 2-10 arms, 1-3 peaks or 8-2,001 curve points | vintix page; ``vintix run --task-file`` |

``PRESETS``: the named tasks, name -> :class:`Preset` (a label and a function ``seed -> task`` drawing from a prior
of ``tasks``, the held-out priors unless the label says otherwise):

| name | label | what |
|------|-------|------|
| ``bimodal`` | Two equal peaks (held-out prior) | two equal, narrow reward peaks on [-1, 1] |
| ``unimodal`` | One peak (training prior) | one reward peak of the training prior |
| ``karm`` | K-armed bandit (held-out prior) | K = 3-10 arms, means clip(N(0.5, 0.2^2), 0, 1) |
| ``darkroom`` | Dark room (held-out goals) | the 5 goals of the 5x5 room never seen in training |

Import-light: numpy and the task module load when a task is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...io.registry import InputKind, declare
from ...registry import choose

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="bandit_task",
        what="a bandit task",
        decoder="backend.icrl.vintix.taskfile:read_task_csv",
        extensions=("csv", "txt"),
        max_bytes=256 * 1024,
        limits="UTF-8 CSV with a header: mean (2-10 arm means), center,width[,height] (1-3 peaks) or a,r (8-2,001 "
               "points of a reward curve on [-1, 1]); at most 256 KB",
        family="csv",
    ),
)


# ------------------------------------------------------------------------------------------------ named tasks
def bimodal(seed: int = 0) -> Any:
    """Two equal, narrow peaks (the held-out continuous prior)."""
    import numpy as np

    from .tasks import draw_cont

    return draw_cont(np.random.default_rng(seed), heldout=True)


def unimodal(seed: int = 0) -> Any:
    """One peak of the training prior."""
    import numpy as np

    from .tasks import draw_cont

    return draw_cont(np.random.default_rng(seed), heldout=False, peaks=1)


def karm(seed: int = 0) -> Any:
    """A K-armed Gaussian bandit of the held-out prior."""
    import numpy as np

    from .tasks import draw_karm

    return draw_karm(np.random.default_rng(seed), heldout=True)


def darkroom(seed: int = 0) -> Any:  # noqa: ARG001 - the held-out goals are fixed
    """The dark room on its held-out goals."""
    from .tasks import DarkRoomTask

    return DarkRoomTask()


@dataclass(frozen=True)
class Preset:
    """A named task: its label on the page and ``make(seed) -> task``."""

    label: str
    make: Callable[[int], Any]


PRESETS: dict[str, Preset] = {
    "bimodal": Preset("Two equal peaks (held-out prior)", bimodal),
    "unimodal": Preset("One peak (training prior)", unimodal),
    "karm": Preset("K-armed bandit (held-out prior)", karm),
    "darkroom": Preset("Dark room (held-out goals)", darkroom),
}


def preset_key(name: str) -> str:
    """``name`` as a key of :data:`PRESETS` (case ignored); InputError listing the valid names otherwise."""
    return choose(name, PRESETS, "task")


def make_task(name: str, seed: int = 0) -> Any:
    """The named task drawn from ``seed``."""
    return PRESETS[preset_key(name)].make(seed)


# ------------------------------------------------------------------------------------------------ examples
def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def bandit_task(seed: int = 0) -> bytes:
    """Five arm means of a K-armed bandit task (``mean`` column)."""
    import numpy as np

    return _lines(["mean"] + [f"{m:.3f}" for m in np.random.default_rng(seed).uniform(0.1, 0.9, 5)])


def bandit_task_odd() -> dict[str, bytes]:
    """Valid-but-odd task files: CRLF line ends, a byte-order mark, peaks, a reward curve, two arms, a formula-like
    cell."""
    import numpy as np

    curve = ["a,r"] + [f"{a:.3f},{np.exp(-(a - 0.3) ** 2 / 0.02):.4f}" for a in np.linspace(-1, 1, 41)]
    return {"crlf.csv": _lines(bandit_task(1).decode().splitlines(), crlf=True),
            "bom.csv": b"\xef\xbb\xbf" + bandit_task(2),
            "peaks.csv": _lines(["center,width,height", "-0.5,0.08,0.8", "0.5,0.08,0.8"]),
            "curve.csv": _lines(curve), "two_arms.csv": _lines(["mean", "0", "1"]),
            "formula.csv": _lines(["mean", "=1+1", "0.5"])}


__all__ = ["KINDS", "PRESETS", "Preset", "bandit_task", "bandit_task_odd", "bimodal", "darkroom", "karm", "make_task", "preset_key", "unimodal"]
