"""Shareable settings (``ui.state.bound``) and the session's run history (``record_run`` / ``show_history``): values
from a crafted link reach the widgets, invalid ones fall back with a visible note, every method page takes part, and
the history stays small and bounded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from backend import catalog
from ui.state import MAX_RUNS, link_value_accepted

ROOT = Path(__file__).resolve().parents[2]


def _bound_app() -> None:
    import streamlit as st

    from ui.state import bound

    bound(st.slider, "a", 0, 10, 3, key="demo_a")
    bound(st.select_slider, "b", [250, 500, 1000], 500, key="demo_b")
    bound(st.selectbox, "c", ["quad", "l1"], key="demo_c", format_func=str.upper)
    bound(st.number_input, "d", 0, 100, 5, key="demo_d")
    bound(st.checkbox, "e", True, key="demo_e")
    bound(st.multiselect, "g", ["m1", "m2", "m3"], ["m1"], key="demo_g")
    with st.form("f"):
        c1, _ = st.columns(2)
        bound(c1.slider, "h", 0.0, 1.0, 0.5, key="demo_h")
        st.form_submit_button("go")


def _open(params: dict[str, str]) -> AppTest:
    at = AppTest.from_function(_bound_app, default_timeout=30)
    at.query_params.update(params)
    return at.run()


def test_valid_link_values_reach_the_widgets() -> None:
    at = _open({"demo_a": "7", "demo_b": "1000", "demo_c": "L1", "demo_d": "50", "demo_e": "false", "demo_g": "m2",
                "demo_h": "0.25"})
    assert not at.exception and not at.warning
    assert at.slider(key="demo_a").value == 7
    assert at.select_slider(key="demo_b").value == 1000
    assert at.selectbox(key="demo_c").value == "l1"
    assert at.number_input(key="demo_d").value == 50
    assert at.checkbox(key="demo_e").value is False
    assert at.multiselect(key="demo_g").value == ["m2"]
    assert at.slider(key="demo_h").value == 0.25


def test_invalid_link_values_fall_back_with_a_note() -> None:
    at = _open({"demo_a": "70", "demo_b": "777", "demo_c": "cube", "demo_d": "abc", "demo_e": "maybe",
                "demo_h": "2.5"})
    assert not at.exception
    assert at.slider(key="demo_a").value == 3 and at.select_slider(key="demo_b").value == 500
    assert at.selectbox(key="demo_c").value == "quad" and at.number_input(key="demo_d").value == 5
    assert at.checkbox(key="demo_e").value is True and at.slider(key="demo_h").value == 0.5
    notes = [w.value for w in at.warning]
    assert len(notes) == 6, notes
    assert all("not valid here" in n for n in notes)
    assert any("`cube`" in n for n in notes)
    at.run()  # the note is for the link: a rerun of the same session does not repeat it
    assert not at.warning


def test_a_link_spelling_the_default_is_no_error() -> None:
    at = _open({"demo_a": "3", "demo_b": "500", "demo_c": "QUAD", "demo_d": "5", "demo_e": "true", "demo_h": "0.50"})
    assert not at.exception and not at.warning


def test_spellings() -> None:
    assert link_value_accepted(["1e+04"], 10_000.0, lambda v: f"{v:.0e}")
    assert link_value_accepted(["0.001"], 1e-3)
    assert link_value_accepted(["m1", "m2"], ["m1", "m2"])
    assert not link_value_accepted(["m1"], ["m1", "m2"])
    assert not link_value_accepted(["7"], 3)


def test_dada_page_from_a_crafted_link_runs_those_settings() -> None:
    at = AppTest.from_file(str(ROOT / "app_pages" / "dada.py"), default_timeout=120)
    at.query_params.update({"dada_iters": "500", "dada_dim": "50", "dada_sweep": "false", "dada_kappa": "1e+03",
                            "dada_constraint": "cube"})
    at.run()
    assert not at.exception
    assert at.select_slider(key="dada_iters").value == 500 and at.select_slider(key="dada_dim").value == 50
    assert at.checkbox(key="dada_sweep").value is False and at.select_slider(key="dada_kappa").value == 1e3
    assert at.selectbox(key="dada_constraint").value == "none"
    assert any("`cube`" in w.value for w in at.warning)
    at.button[0].click().run()
    assert not at.exception and not at.error
    params = at.session_state["dada_result"]["race"]["params"]
    assert (params["iters"], params["dim"], params["kappa"]) == (500, 50, 1e3)
    assert "sensitivity" not in at.session_state["dada_result"]["race"]
    assert at.session_state["dada_history"][-1]["params"]["iters"] == 500
    at.button[0].click().run()
    assert len(at.session_state["dada_history"]) == 2 and at.get("expander")[-1].label.startswith("Your runs")


@pytest.mark.parametrize("paper", [p.id for p in catalog.available()])
def test_every_method_page_shares_its_settings_and_keeps_a_history(paper: str) -> None:
    src = (ROOT / "app_pages" / f"{paper}.py").read_text()
    keys = re.findall(r"bound\([^)]*?key=f?\"([^\"]+)\"", src, flags=re.S)
    assert keys, f"app_pages/{paper}.py binds no setting to the URL (ui.state.bound)"
    assert all(k.startswith(f"{paper}_") for k in keys), keys  # query parameters are app-wide
    assert f'record_run("{paper}"' in src and f'show_history("{paper}")' in src


# ------------------------------------------------------------------------------------------------ run history
def _history_app() -> None:
    import numpy as np
    import streamlit as st

    from ui.state import record_run, show_history

    if st.button("run"):
        n = len(st.session_state.get("demo_history", []))
        record_run("demo", {"lr": 0.1 * (n + 1), "method": "a", "weights": np.zeros((64, 64)), "note": "x" * 500},
                   {"acc": 0.5 + n / 100, "loss": np.float32(1.0 - n / 100), "label": "ok"}, seed=n)
    show_history("demo")


def test_history_compares_and_stays_small() -> None:
    at = AppTest.from_function(_history_app, default_timeout=30).run()
    assert not at.get("expander")  # nothing before the first run
    at.button[0].click().run()
    assert not at.get("expander")  # one run is the page's own result: the history starts with the second
    at.button[0].click().run()
    assert at.multiselect(key="demo_history_compare").value == [1, 2]
    assert len(at.get("plotly_chart")) == 1 and len(at.get("download_button")) == 2
    for _ in range(MAX_RUNS + 3):
        at.button[0].click().run()
    assert not at.exception
    hist = at.session_state["demo_history"]
    assert len(hist) == MAX_RUNS and hist[-1]["run"] == MAX_RUNS + 5 and hist[0]["run"] == 6
    row = hist[-1]
    assert row["params"]["weights"] == "<ndarray>" and len(row["params"]["note"]) <= 80
    assert isinstance(row["metrics"]["loss"], float) and row["seed"] == MAX_RUNS  # len(history) before the run
    assert at.multiselect(key="demo_history_compare").value == [MAX_RUNS + 4, MAX_RUNS + 5]


def test_a_link_naming_a_run_size_sets_its_values() -> None:
    at = AppTest.from_file(str(ROOT / "app_pages" / "dualrs.py"), default_timeout=60)
    at.query_params.update({"dualrs_size": "Full: 200 test points and the attack check", "dualrs_seed": "4"})
    at.run()
    assert not at.exception and not at.warning
    assert at.select_slider(key="dualrs_test").value == 200 and at.checkbox(key="dualrs_attack").value is True
    assert at.number_input(key="dualrs_seed").value == 4
