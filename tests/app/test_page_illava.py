"""AppTest of the iLLaVA page: opens instantly, answers a preset question with and without reduction (figures,
metrics table), takes an upload, and shows clear errors for a non-image upload, an empty question and a budget that
removes every token; the page's sweep gives the CLI golden's numbers, and the jobs and configs pickle."""

from __future__ import annotations

import io

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import image_widget, open_page


@pytest.fixture(scope="module")
def at() -> AppTest:
    app = open_page("illava", timeout=240)
    return app


def test_opens_without_running_anything(at: AppTest) -> None:
    assert not at.exception
    assert not at.session_state["illava_result"]
    assert at.text_input(key="illava_q_Scene 1 (held-out)").value
    # the recorded diagnosis of the counting loss is drawn from assets/illava_diagnosis.json, nothing recomputed
    assert any("counting answers" in h.value for h in at.subheader)
    assert any("over-count" in c.value for c in at.caption)


def test_preset_run_draws_every_view(at: AppTest) -> None:
    at.button[0].click().run()  # the first form's submit button
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["illava_result"]["analysis"]
    assert [r.n_after for r in res.vit_records] == [224, 192, 160, 128] and res.llm_image_tokens[-1] == 85
    assert len(at.get("plotly_chart")) >= 5  # steps, ranking, tokens, costs, answers (+ recorded sweep)
    assert at.dataframe and len(at.metric) >= 4


def test_bad_question_and_budget_show_errors(at: AppTest) -> None:
    at.text_input(key="illava_q_Scene 1 (held-out)").set_value("   ")
    at.button[0].click().run()
    assert not at.exception and any("empty" in e.value for e in at.error)
    at.text_input(key="illava_q_Scene 1 (held-out)").set_value("What color is the circle?")
    at.slider(key="illava_keep").set_value(0)
    at.button[0].click().run()
    assert not at.exception and any("removes every token" in e.value for e in at.error)


def test_upload_and_bad_upload() -> None:
    from backend.tokens.illava.scenes import HELDOUT_SEED0, make_scene

    app = open_page("illava", timeout=240)
    app.selectbox(key="illava_img_choice").set_value("Upload your own").run()
    app.file_uploader[0].set_value(("notes.png", b"this is not an image", "image/png")).run()
    assert not app.exception and app.error  # refused with a message
    buf = io.BytesIO()
    make_scene(HELDOUT_SEED0 + 11).pil().save(buf, format="PNG")
    app.file_uploader[0].set_value(("scene.png", buf.getvalue(), "image/png")).run()
    assert not app.exception and not app.error
    app.selectbox(key="illava_method").set_value("fastv")
    app.button[0].click().run()
    assert not app.exception, app.exception
    res = app.session_state["illava_result"]["analysis"]
    assert res.llm_image_tokens[-1] == 85 and not res.vit_records


def test_page_job_gives_the_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's sweep (``jobs.run_sweep``) with the settings of the CLI's golden (``illava eval``: the method, the
    budget and the held-out scenes) gives the golden's numbers in its unreduced and reduced rows. The tiny VLM is
    built over the models the page loaded (``ui.models.get_model``), and the prefill timing, volatile in the golden
    and not compared, is replaced by a constant to keep the test cheap."""
    import json
    from pathlib import Path

    from backend.tokens.illava import evaluation, jobs
    from backend.tokens.illava.projector import load_projector
    from backend.tokens.illava.tiny_vlm import TinyVLM
    from ui.models import get_model

    timed = {"median_s": 1.0, "min_s": 1.0, "runs": 1}
    monkeypatch.setattr(evaluation, "time_prefill", lambda vlm, image, question, plans, **_: dict.fromkeys(plans, timed))
    vlm = TinyVLM(get_model("dinov2"), get_model("smollm2"), load_projector())

    golden = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "illava.json").read_text())
    argv = golden["argv"]

    def option(name: str) -> str:
        return argv[argv.index(name) + 1]

    config = jobs.SweepConfig(scenes=int(option("--scenes")), keeps=(float(option("--keep")),),
                              methods=(option("--method"),), repeats=1)
    rows = {r["label"]: r for r in jobs.run_sweep(config, vlm)["rows"]}
    for part in ("unreduced", "reduced"):
        want = golden["expected"][part]
        row = rows[want["label"]]
        for key in ("n_questions", "tokens_to_llm", "macs"):
            assert row[key] == want[key], (part, key)
        for key in ("accuracy", "chance", "image_tokens_mean_llm"):
            assert row[key] == pytest.approx(want[key], rel=1e-9), (part, key)
        assert row["per_type"] == pytest.approx(want["per_type"], rel=1e-9), part


def test_jobs_and_configs_pickle() -> None:
    """The page's and the CLI's jobs and their configs pickle (the Ray executor sends them to a worker)."""
    import pickle

    from backend.tokens.illava import jobs

    for obj in (jobs.run_analysis, jobs.run_eval, jobs.run_sweep, jobs.run_diagnose,
                jobs.AnalysisConfig(method="fastv", keep=85 / 256, vit_layers=(), repeats=1),
                jobs.EvalConfig(method="illava", keep=0.33, scenes=2, positions="source"),
                jobs.SweepConfig(scenes=2, keeps=(0.33,), methods=("illava", "tome")), jobs.DiagnoseConfig(scenes=1)):
        assert pickle.loads(pickle.dumps(obj)) == obj


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    image_widget("illava", "illava_img"),
]
