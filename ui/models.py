"""Embedded models for pages: one shared, cached instance per (model, source) with a bounded cache, and a visible
message while a model loads (and converts) the first time."""

from __future__ import annotations

from typing import Any

import streamlit as st

_LOADED: set[tuple[str, str | None]] = set()


@st.cache_resource(max_entries=6, show_spinner=False)
def _cached(model_id: str, name: str | None) -> Any:
    from backend import models

    return models.load(model_id, name)


def get_model(model_id: str, name: str | None = None) -> Any:
    """The loaded model ``model_id`` (``minilm``, ``smollm2``, ``dinov2``, ``efficientnet``), default or ``name``."""
    name = (name or "").strip() or None
    if (model_id, name) in _LOADED:
        return _cached(model_id, name)
    with st.spinner(f"Loading {name or model_id} (the first load may convert and cache weights; later loads are fast)",
                    show_time=True):
        model = _cached(model_id, name)
    _LOADED.add((model_id, name))
    return model
