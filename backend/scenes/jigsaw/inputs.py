"""The Visual Jigsaw page's inputs. It reads the user's image through the shared ``image`` kind (the lab's image
upload rules: PNG, JPEG or WebP checked from the content, size limits stated in the page), a grid size (2 or 3,
checked by :class:`backend.scenes.jigsaw.jobs.SolveConfig`) and a typed answer (labels separated by commas or spaces,
at most 200 characters); it declares no input kind of its own (``KINDS = ()``).

``PRESETS``: the page's and the CLI's preset images, name -> ``{"photo"}`` (a scikit-image photograph, the held-out
source) or ``{"source", "index"}`` (a held-out procedural scene of :func:`backend.scenes.jigsaw.puzzle.source_image`).
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Held-out scene 3": {"source": "scenes_val", "index": 3},
    "Photo: coffee (held-out source)": {"photo": "coffee"},
    "Photo: astronaut (held-out source)": {"photo": "astronaut"},
    "Held-out scene 11": {"source": "scenes_val", "index": 11},
}
