"""AppTest of the PBFM page: opens instantly, samples and scores two methods of the shipped models, shows the
Pareto plot, checks an uploaded field's residual and refuses bad uploads."""

from __future__ import annotations

import io

import numpy as np

from tests.app.conftest import Widget, open_page


def test_page_opens_without_running_anything() -> None:
    at = open_page("pbfm", timeout=60)
    assert not at.exception
    assert not at.session_state["pbfm_result"]
    assert not at.get("plotly_chart")


def test_sample_two_methods_and_upload() -> None:
    at = open_page("pbfm", timeout=120)
    at.multiselect(key="pbfm_methods").set_value(["pbfm", "fm"])
    at.select_slider(key="pbfm_n").set_value(64)
    at.select_slider(key="pbfm_steps").set_value(10)
    at.checkbox(key="pbfm_seeds").set_value(False)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["pbfm_result"]["run"]
    assert {row["method"] for row in r["rows"]} == {"pbfm", "fm"} and r["seeds"] == [0]
    assert len(at.get("plotly_chart")) == 3  # Pareto, samples, residual maps
    assert len(at.get("download_button")) == 2
    from backend.physics.pdes import darcy_fields

    buf = io.BytesIO()
    np.savez(buf, field=darcy_fields(1, 7)[0])
    at.file_uploader(key="pbfm_upload").set_value(("f.npz", buf.getvalue(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    bad = io.BytesIO()
    np.savez(bad, field=np.full((2, 64), np.inf))
    at.file_uploader(key="pbfm_upload").set_value(("inf.npz", bad.getvalue(), "application/octet-stream")).run()
    assert any("NaN or inf" in e.value for e in at.error)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [Widget("pbfm", "pde_field", "pbfm_upload", bad="bad_npz_nan.npz", odd="odd_heat.npz")]
