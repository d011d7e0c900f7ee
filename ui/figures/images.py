"""Images inside plotly figures. ``go.Image(z=array)`` sends every pixel as a JSON number (a 1,000 x 800 RGB mosaic
is megabytes the browser must parse); :func:`png_image` sends the same picture as one PNG data URI, a few hundred kB,
with the same pixel coordinates on the axes."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import plotly.graph_objects as go


def png_uri(picture: np.ndarray) -> str:
    """uint8 ``[H, W, 3]`` (or ``[H, W]``) -> ``data:image/png;base64,...``."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(picture, dtype=np.uint8)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def png_image(picture: np.ndarray, **kwargs: Any) -> go.Image:
    """A ``go.Image`` trace of ``picture`` (uint8 ``[H, W, 3]``) carried as a PNG; ``kwargs`` go to ``go.Image``."""
    return go.Image(source=png_uri(picture), **kwargs)
