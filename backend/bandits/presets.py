"""Named catalogues for the DMNL page and CLI (``--items small|medium|large|FILE``)."""

from __future__ import annotations

from ..errors import InputError
from .items import Catalogue, synthetic

PRESETS: dict[str, dict[str, int]] = {
    "small": {"n_items": 10, "n_categories": 3},
    "medium": {"n_items": 20, "n_categories": 5},
    "large": {"n_items": 100, "n_categories": 10},
}


def preset(name: str, seed: int = 0, dim: int = 5) -> Catalogue:
    """A synthetic catalogue by preset name; unknown names list the valid ones."""
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise InputError(f"Unknown catalogue preset {name!r}. Valid: {', '.join(PRESETS)} (or a CSV file path).")
    return synthetic(dim=dim, seed=seed, **PRESETS[key])
