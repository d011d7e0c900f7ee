"""The motion page's inputs. It reads an image (the shared ``image`` kind of ``backend/io``: the lab's upload
rules) and declares no input kind of its own (``KINDS = ()``).

``PRESETS``: the page's preset scenes, name -> :class:`backend.forecast.nextmotion.jobs.SampleConfig` settings
(held-out seeds, never seen in training: training uses seeds below 2000).
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Ball on a peak (left or right?)": {"kind": "peak", "scene_seed": 200_000},
    "Square on its corner (tips which way?)": {"kind": "corner", "scene_seed": 200_001},
    "Falling blocks and balls": {"kind": "drop", "scene_seed": 250_002},
    "Ball or block on a ramp": {"kind": "ramp", "scene_seed": 250_003},
}
