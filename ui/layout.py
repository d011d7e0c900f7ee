"""Page frame and downloads: header from the catalog, metrics tables, JSON/CSV/image downloads."""

from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import streamlit as st
from PIL import Image

from backend import catalog
from backend.io.export import to_csv as safe_csv


def page_header(id_: str, what_md: str, details_md: str = "", details_label: str = "How it works") -> None:
    """Title, section and paper reference from the catalog, then the page's short explanation (markdown: two or three
    sentences, so the controls come next) and, folded in an expander, the longer one (``details_md``)."""
    entry = catalog.get(id_)
    st.title(entry.title)
    if isinstance(entry, catalog.Paper):
        st.caption(f"{entry.section} · ICLR 2026 · catalog id `{entry.id}` · {entry.summary}")
    st.markdown(what_md)
    if details_md.strip():
        with st.expander(details_label, icon=":material/menu_book:"):
            st.markdown(details_md)


def show_metrics_table(rows: list[dict[str, Any]] | pd.DataFrame, key: str | None = None) -> None:
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    st.dataframe(df, hide_index=True, width="stretch", key=key)


def _json_default(o: object) -> object:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(o)


def json_download(label: str, data: dict[str, Any], file_name: str, key: str) -> None:
    payload = json.dumps(data, indent=2, default=_json_default)
    st.download_button(label, payload, file_name=file_name, mime="application/json", key=key, on_click="ignore",
                       icon=":material/download:")


def csv_download(label: str, df: pd.DataFrame, file_name: str, key: str) -> None:
    """A CSV download; text cells that a spreadsheet would run as formulas are escaped (``backend.io.export``)."""
    st.download_button(label, safe_csv(df), file_name=file_name, mime="text/csv", key=key,
                       on_click="ignore", icon=":material/download:")


def image_download(label: str, img: Image.Image, file_name: str, key: str) -> None:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    st.download_button(label, buf.getvalue(), file_name=file_name, mime="image/png", key=key, on_click="ignore",
                       icon=":material/download:")
