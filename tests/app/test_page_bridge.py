"""AppTest of the Bridge page: opens without running anything, runs the default scaling preset (the shipped
evaluation), samples one question side by side (the CLI golden's settings give the golden's samples), refuses an empty
question. The page has no upload (a typed question only). The jobs and configs pickle."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import open_page

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "bridge.json"
UPLOADS: list = []


def _button(at, label: str):  # noqa: ANN001, ANN202
    return next(b for b in at.button if b.label == label)


def test_opens_without_running_anything() -> None:
    at = open_page("bridge", timeout=60)
    assert not at.exception
    assert "bridge_scaling" not in at.session_state and "bridge_sample" not in at.session_state
    assert len(at.get("plotly_chart")) == 1  # the tensor diagram only


def test_default_preset_shows_the_scaling() -> None:
    at = open_page("bridge", timeout=60)
    _button(at, "Show the scaling").click().run(timeout=60)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    s = at.session_state["bridge_scaling"]
    assert s["widths"] == [1, 2, 4, 8] and set(s["metrics"]) == {"bridge", "independent", "base"}
    assert len(at.get("plotly_chart")) == 3
    assert len(at.get("download_button")) == 2


def test_sampling_gives_the_cli_goldens_samples() -> None:
    golden = json.loads(GOLDEN.read_text())
    argv = golden["argv"]
    prompt, n = argv[argv.index("--prompt") + 1], int(argv[argv.index("--n") + 1])
    at = open_page("bridge", timeout=60)
    at.text_input(key="bridge_question").set_value(prompt)
    at.select_slider(key="bridge_n").set_value(n)
    _button(at, "Sample").click().run(timeout=120)
    assert not at.exception, at.exception
    r = at.session_state["bridge_sample"]
    for mode, m in golden["expected"]["modes"].items():
        assert [s["text"] for s in r["modes"][mode]["samples"]] == [s["text"] for s in m["samples"]]
        assert r["modes"][mode]["right"] == m["right"]


def test_empty_question_shows_a_message() -> None:
    at = open_page("bridge", timeout=60)
    at.text_input(key="bridge_question").set_value("   ")
    _button(at, "Sample").click().run()
    assert any("empty" in e.value for e in at.error)
    assert "bridge_sample" not in at.session_state


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.reasoning.bridge import jobs

    for obj in (jobs.run_sample, jobs.run_scaling, jobs.SampleConfig("Compute 1 + 2."), jobs.ScalingConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj
