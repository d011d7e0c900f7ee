"""AppTest of the MCD page: opens without running anything, imputes a preset with the shipped model (maps, r bars for
one sample and the mean of M, history after two runs), imputes an uploaded NPZ stack and refuses bad uploads."""

from __future__ import annotations

import io

import numpy as np

from tests.app.conftest import Widget, open_page


def test_page_opens_without_running_anything() -> None:
    at = open_page("mcd", timeout=60)
    assert not at.exception
    assert not at.session_state["mcd_result"]
    assert not at.get("plotly_chart")


def test_preset_then_upload() -> None:
    at = open_page("mcd", timeout=120)
    at.select_slider(key="mcd_samples").set_value(2)
    at.select_slider(key="mcd_steps").set_value(6)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["mcd_result"]["run"]
    assert r["heldout_pattern"] and set(r["mean_r"]) >= {"mcd", "mcd_single", "most_correlated", "ridge", "unet",
                                                         "bayes"}
    assert len(at.get("plotly_chart")) == 4  # maps, one-sample bars, mean-of-M bars, mean r
    assert len(at.get("download_button")) == 2
    at.checkbox(key="mcd_obs2").check()  # a different pattern: no U-Net (trained for pattern 0 only)
    at.button[0].click().run()
    assert not at.exception and not at.error
    r = at.session_state["mcd_result"]["run"]
    assert not r["heldout_pattern"] and "unet" not in r["mean_r"]
    assert len(at.get("plotly_chart")) == 5  # + the history chart after two runs
    from backend.imputation.tissue import generate

    buf = io.BytesIO()
    np.savez(buf, stack=generate(1, 77).x[0][:, :24, :24])
    at.radio(key="mcd_stack").set_value("Upload an NPZ").run()
    at.file_uploader(key="mcd_upload").set_value(("s.npz", buf.getvalue(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    at.button[0].click().run()
    assert not at.exception and not at.error
    r = at.session_state["mcd_result"]["run"]
    assert "bayes" not in r["mean_r"] and all(-1 <= v <= 1 for v in r["mean_r"].values())
    assert r["params"]["stack"] == "s.npz" and len(r["missing"]) == 6
    bad = io.BytesIO()
    np.savez(bad, stack=np.full((13, 16, 16), 1.0))
    at.file_uploader(key="mcd_upload").set_value(("b.npz", bad.getvalue(), "application/octet-stream")).run()
    assert not at.exception
    assert any("too many" in e.value for e in at.error)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("mcd", "channel_stack", "mcd_upload", [("radio", "mcd_stack", "Upload an NPZ")],
           bad="bad_npz_nan.npz", odd="odd_side8.npz"),
]
