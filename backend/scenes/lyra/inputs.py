"""Lyra's inputs. It reads the user's first view through the shared ``image`` kind (the lab's image upload rules:
PNG, JPEG or WebP checked from the content, size limits stated in the page; the image is centre-cropped to a square
and resized to 32 x 32, with a note) and declares no input kind of its own (``KINDS = ()``).

``PRESETS``: the page's and the CLI's preset first views, name -> ``{"scene": index}`` of a held-out procedural scene
(:data:`backend.scenes.lyra.views.EVAL_SEEDS`; never seen in training, true views available for PSNR / SSIM).
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Held-out scene 0": {"scene": 0},
    "Held-out scene 3": {"scene": 3},
    "Held-out scene 7": {"scene": 7},
    "Held-out scene 12": {"scene": 12},
}


def preset_image(scene: int) -> Any:
    """The first view of held-out scene ``scene`` as a PIL image (32 x 32)."""
    from PIL import Image

    from .views import EVAL_SEEDS, SIZE, render_views

    rgb, _ = render_views(EVAL_SEEDS[int(scene)], [0.0], SIZE)
    return Image.fromarray((rgb[0] * 255 + 0.5).clip(0, 255).astype("uint8"))
