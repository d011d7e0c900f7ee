"""AppTest of the OR-PRM page: opens without running anything, runs the first cleaning preset (Sankey, gate matrix,
table), the first best-of-N preset with the shipped PRM (curves, step scores), solves the example model, and refuses a
bad model and a bad upload with a message. The page's jobs are the CLI's (``orprm clean``, ``orprm bon``) with the
same settings, and the jobs pickle."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("orprm", timeout=60)
    assert not at.exception
    assert "orprm_clean" not in at.session_state
    assert not at.get("plotly_chart")


def test_first_cleaning_preset_runs() -> None:
    at = open_page("orprm", timeout=60)
    at.button[0].click().run(timeout=60)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["orprm_clean"]
    assert r["samples"] == 150 and r["flawed"] > 0
    clean = next(row for row in r["table"] if row["kind"] == "clean")
    assert clean["rejected_execution"] == 0 and clean["rejected_feasibility"] == 0
    assert len(at.get("plotly_chart")) == 2
    assert len(at.get("download_button")) == 2


def test_first_bon_preset_runs_with_step_scores() -> None:
    at = open_page("orprm", timeout=60)
    at.radio(key="orprm_mode").set_value("Best-of-N with the PRM").run()
    at.button[0].click().run(timeout=60)
    assert not at.exception, at.exception
    r = at.session_state["orprm_bon"]
    assert r["ns"][-1] == 8 and set(r["curves"]) == {"prm", "gates", "majority", "random", "oracle"}
    assert r["curves"]["oracle"][-1] >= r["curves"]["prm"][-1]
    assert len(at.get("plotly_chart")) == 2  # curves and one candidate's step scores
    at.selectbox(key="orprm_cand").set_value(1).run()
    assert not at.exception


def test_example_model_solves_and_bad_models_show_messages() -> None:
    at = open_page("orprm", timeout=60)
    at.radio(key="orprm_mode").set_value("Your model").run()
    at.button(key="orprm_lp_go").click().run(timeout=30)
    assert not at.exception, at.exception
    q = at.session_state["orprm_lp"]
    assert abs(q["objective"] - 2480) < 1e-6 and all(g["passed"] for g in q["gates"].values())
    bad = '{"sets": {"P": ["a", "b"]}, "parameters": {"c": {"over": ["P"], "values": [1, 2, 3]}}, ' \
          '"variables": [{"name": "x", "over": ["P"]}], "objective": {"sense": "max", "terms": [{"var": "x", "coef": "c"}]}}'
    at.text_area(key="orprm_text").set_value(bad).run()
    at.button(key="orprm_lp_go").click().run(timeout=30)
    assert any("Inconsistent dimensions" in e.value for e in at.error), [e.value for e in at.error]
    at.file_uploader(key="orprm_upload").set_value(("m.json", b'{"variables": "nope"', "application/json")).run()
    assert at.error


UPLOADS = [
    Widget("orprm", "lp_json", "orprm_upload", [("radio", "orprm_mode", "Your model")], bad="bad_truncated.json",
           odd="odd_transport.json"),
]


def test_page_jobs_are_the_cli_jobs(monkeypatch) -> None:  # noqa: ANN001
    from backend.__main__ import main
    from backend.reasoning.orprm import jobs

    at = open_page("orprm", timeout=60)
    at.select_slider(key="orprm_samples").set_value(60)
    at.button[0].click().run(timeout=60)
    assert not at.exception, at.exception
    page_cfg = at.session_state["orprm_clean_config"]
    calls: list = []
    real = jobs.run_clean
    monkeypatch.setattr(jobs, "run_clean", lambda cfg, *a, **kw: calls.append(cfg) or real(cfg, *a, **kw))
    assert main(["orprm", "clean", "--samples", "60", "--json"]) == 0
    [cli_cfg] = calls
    assert cli_cfg == page_cfg


def test_golden_settings_give_the_golden_numbers() -> None:
    import json
    from pathlib import Path

    from backend.reasoning.orprm import jobs

    gold = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "orprm.json").read_text())
    assert gold["argv"][:2] == ["orprm", "clean"] and "--samples" in gold["argv"]
    n = int(gold["argv"][gold["argv"].index("--samples") + 1])
    res = jobs.run_clean(jobs.CleanConfig(samples=n)).to_dict()
    for k in ("samples", "flawed", "corrupted", "kept", "kept_flawed", "table"):
        assert res[k] == gold["expected"][k], k


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.reasoning.orprm import jobs

    for obj in (jobs.run_clean, jobs.run_bon, jobs.run_lp, jobs.CleanConfig(), jobs.BonConfig(),
                jobs.LpConfig("{}")):
        assert pickle.loads(pickle.dumps(obj)) == obj
