"""The temporal-slowness page's inputs. It reads the user's image through the shared ``image`` kind (the lab's image
upload rules: PNG, JPEG, WebP, ... checked from the content, size limits stated in the page) and declares no input
kind of its own (``KINDS = ()``). Crop sides and DeltaT are settings, checked by the configs of :mod:`.jobs`.

``PRESETS``: the page's probe presets, name -> :class:`backend.scenes.slowness.jobs.ProbeConfig` settings.
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Quick: 3 seeds x 4 arms, 4 + 2 photos per instance": {"train_per_instance": 4, "test_per_instance": 2},
    "Standard: 3 seeds x 4 arms, 10 + 6 photos per instance": {"train_per_instance": 10, "test_per_instance": 6},
    "Large: 3 seeds x 4 arms, 20 + 12 photos per instance": {"train_per_instance": 20, "test_per_instance": 12},
}
