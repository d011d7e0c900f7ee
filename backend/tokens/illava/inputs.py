"""iLLaVA's inputs. It reads the shared ``image`` kind of ``backend/io`` (the page's upload and ``illava run --image
FILE``; resized to the encoder's 224 x 224) and declares no kind of its own (``KINDS = ()``).

``PRESETS``: the images offered without an upload, label -> held-out scene seed (:func:`.scenes.make_scene`; never
trained on); the page adds a few photographs from scikit-image beside them.
"""

from __future__ import annotations

from typing import Any

from .scenes import HELDOUT_SEED0

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, int] = {f"Scene {i + 1} (held-out)": HELDOUT_SEED0 + i for i in range(4)}

__all__ = ["KINDS", "PRESETS"]
