"""Shareable settings and the session's run history, one component for every page.

URL state: ``bound(widget, *args, key=..., **kwargs)`` creates the widget with ``bind="query-params"``, so its value
is written into the query string (``?dada_iters=4000``; omitted while it equals the default) and read back when the
page is opened from such a link. Keys start with the page id because query parameters belong to the whole app.
Streamlit drops an invalid or out-of-range URL value silently (the widget takes its default); ``bound`` tells the
user with a warning beside the widget. Uploads and buttons are never bound.

Run history: ``record_run(page_id, params, metrics, seed=...)`` after a run appends one small row (scalars only,
at most ``MAX_RUNS`` rows), and ``show_history(page_id)`` draws the table, a comparison of two or more runs on the
same axes and the downloads once there are two runs. Models, tensors and figures never enter the history.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

T = TypeVar("T")
MAX_RUNS = 20
_CHECKED = "_url_state_checked"  # keys whose link value was already checked in this session
_TEXT_MAX = 80  # longest text kept per history cell


# ------------------------------------------------------------------------------------------------ URL state
def _as_text(v: object, format_func: Callable[[Any], object] | None) -> set[str]:
    """Ways a value may be spelled in a URL: its string, its label, and numbers compared by value elsewhere."""
    out = {str(v), str(v).lower()}
    if isinstance(v, bool):
        out.add("true" if v else "false")
    if format_func is not None:
        try:
            out.add(str(format_func(v)))
        except Exception:  # noqa: BLE001 - a label that cannot be built only means one spelling less
            pass
    return out


def _spells(raw: str, v: object, format_func: Callable[[Any], object] | None) -> bool:
    if raw in _as_text(v, format_func):
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            return math.isclose(float(raw), float(v), rel_tol=1e-9, abs_tol=1e-12)
        except ValueError:
            return False
    return False


def link_value_accepted(raw: Sequence[str], value: object, format_func: Callable[[Any], object] | None = None) -> bool:
    """True when the URL's ``raw`` value(s) spell the widget's resulting ``value`` (a list for multi-value widgets)."""
    if isinstance(value, (list, tuple)):
        return len(raw) == len(value) and all(_spells(r, v, format_func) for r, v in zip(raw, value, strict=True))
    return len(raw) >= 1 and _spells(raw[-1], value, format_func)


def bound(widget: Callable[..., T], *args: Any, key: str, **kwargs: Any) -> T:
    """``widget(*args, key=key, bind="query-params", **kwargs)``, with a visible note when the page was opened from a
    link whose value for ``key`` is not valid here (Streamlit then keeps the default and removes it from the URL).

    ``widget`` is a Streamlit widget function or a container's method (``st.slider``, ``col.selectbox``); the note is
    drawn in the same container, under the widget.
    """
    checked: set[str] = st.session_state.setdefault(_CHECKED, set())
    raw = [] if key in checked else st.query_params.get_all(key)
    value = widget(*args, key=key, bind="query-params", **kwargs)
    checked.add(key)
    if raw and not link_value_accepted(raw, value, kwargs.get("format_func")):
        shown = ", ".join(raw)
        label = args[0] if args and isinstance(args[0], str) else key
        target = getattr(widget, "__self__", None)
        warn = target.warning if hasattr(target, "warning") else st.warning
        warn(f"The link's value `{shown}` for “{label}” is not valid here; it uses {value!r} instead.",
             icon=":material/link_off:")
    return value


def preset_choice(page_id: str, presets: Mapping[str, Mapping[str, object]], label: str = "Run size",
                  container: Any = None, **kwargs: Any) -> str:
    """A radio of named presets (the first is the default), bound to the URL as ``<page_id>_size``. Choosing one
    sets the widgets it names (``{widget key: value}``) before they are drawn; the widgets' own defaults must be
    the first preset's values, so a link carries only what differs. Returns the chosen name."""
    key = f"{page_id}_size"

    def apply() -> None:
        for k, v in presets[st.session_state[key]].items():
            st.session_state[k] = v

    first = key not in st.session_state
    chosen = bound((container or st).radio, label, list(presets), key=key, on_change=apply, **kwargs)
    if first:  # opened from a link that names a preset: its values start where the link says nothing
        for k, v in presets[chosen].items():
            if k not in st.query_params and k not in st.session_state:
                st.session_state[k] = v
    return chosen


# ------------------------------------------------------------------------------------------------ run history
def _small(v: object) -> object:
    """A history cell: numbers, booleans, None and short text; short lists become text; anything else its type."""
    try:
        import numpy as np

        if isinstance(v, np.generic):
            v = v.item()
    except ImportError:  # pragma: no cover
        pass
    if v is None or isinstance(v, (bool, int)):
        return v
    if isinstance(v, float):
        return round(v, 6) if math.isfinite(v) else None
    if isinstance(v, str):
        return v if len(v) <= _TEXT_MAX else v[: _TEXT_MAX - 1] + "…"
    if isinstance(v, (list, tuple)) and len(v) <= 16 and all(isinstance(x, (bool, int, float, str)) for x in v):
        return _small(", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v))
    return f"<{type(v).__name__}>"


def _history_key(page_id: str) -> str:
    return f"{page_id}_history"


def runs(page_id: str) -> list[dict[str, Any]]:
    """The page's recorded runs, oldest first (at most ``MAX_RUNS``)."""
    return st.session_state.setdefault(_history_key(page_id), [])


def record_run(page_id: str, params: Mapping[str, object], metrics: Mapping[str, object], *,
               seed: object = None, seconds: float | None = None) -> dict[str, Any]:
    """Append one run (settings, seed, headline metrics, clock time) to the page's history; returns the row."""
    hist = runs(page_id)
    number = hist[-1]["run"] + 1 if hist else 1
    row = {"run": number, "time": time.strftime("%H:%M:%S"), "seconds": None if seconds is None else round(seconds, 2),
           "seed": _small(seed), "params": {str(k): _small(v) for k, v in params.items()},
           "metrics": {str(k): _small(v) for k, v in metrics.items()}}
    hist.append(row)
    del hist[:-MAX_RUNS]
    st.session_state[f"{page_id}_history_compare"] = [r["run"] for r in hist[-2:]]  # the newest run vs the one before
    return row


def history_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per run: run, time, seed, then the settings and the metrics as columns."""
    flat = [{"run": r["run"], "time": r["time"], "seconds": r.get("seconds"), "seed": r.get("seed"),
             **{f"{k}": v for k, v in r["params"].items()}, **{f"{k}": v for k, v in r["metrics"].items()}}
            for r in rows]
    df = pd.DataFrame(flat)
    return df.drop(columns=[c for c in ("seconds", "seed") if c in df and df[c].isna().all()])


def show_history(page_id: str, title: str = "Your runs in this session") -> None:
    """The history table, the comparison of chosen runs and the downloads, from the second run on (a single run is
    the page's own result, with its own downloads)."""
    hist = runs(page_id)
    if len(hist) < 2:
        return
    from ui.figures.history import compare_runs
    from ui.layout import csv_download, json_download

    with st.expander(f"{title} ({len(hist)} of at most {MAX_RUNS})", expanded=True, icon=":material/history:"):
        df = history_frame(hist)
        st.dataframe(df, hide_index=True, width="stretch", key=f"{page_id}_history_table")
        labels = {r["run"]: f"run {r['run']} ({r['time']})" for r in hist}
        chosen = st.multiselect("Compare runs", list(labels), format_func=labels.get, key=f"{page_id}_history_compare",
                                help="Two or more runs side by side: the settings that differ, and every numeric "
                                     "metric on one shared axis per metric.")
        if len(chosen) >= 2:
            picked = [r for r in hist if r["run"] in chosen]
            params = pd.DataFrame({labels[r["run"]]: {**r["params"], "seed": r.get("seed")} for r in picked})
            differ = params[params.astype(str).nunique(axis=1) > 1]
            if len(differ):
                st.caption("Settings that differ")
                st.dataframe(differ.astype(str), width="stretch", key=f"{page_id}_history_differ")
            else:
                st.caption("Same settings in every chosen run.")
            fig = compare_runs([labels[r["run"]] for r in picked], [r["metrics"] for r in picked])
            if fig is not None:
                st.plotly_chart(fig, key=f"{page_id}_history_fig")
        c1, c2 = st.columns(2)
        with c1:
            csv_download("Run history (CSV)", df, f"{page_id}_runs.csv", key=f"{page_id}_history_csv")
        with c2:
            json_download("Run history (JSON)", {"page": page_id, "runs": hist}, f"{page_id}_runs.json",
                          key=f"{page_id}_history_json")
