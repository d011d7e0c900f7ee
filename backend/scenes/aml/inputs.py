"""The AML page's inputs. It reads the user's image through the shared ``image`` kind (the lab's image upload rules:
PNG, JPEG or WebP checked from the content, size limits stated in the page) and a typed expression (1 to 120
characters, checked by :class:`backend.scenes.aml.jobs.SegmentConfig`); it declares no input kind of its own
(``KINDS = ()``).

``PRESETS``: the page's and the CLI's preset scenes, name -> ``{"source", "index"}`` of
:func:`backend.scenes.aml.data.make_sample` (held-out scenes: backdrops, textures and phrasings unseen in training;
one in-distribution scene).
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Held-out 0: relation (to the right of)": {"source": "heldout", "index": 0},
    "Held-out 4: size (the larger one)": {"source": "heldout", "index": 4},
    "Held-out 7: relation (just above)": {"source": "heldout", "index": 7},
    "Held-out 9: colour and shape": {"source": "heldout", "index": 9},
    "Held-out 8: size (the smaller one)": {"source": "heldout", "index": 8},
    "In-distribution 10: the small black square": {"source": "val", "index": 10},
}
