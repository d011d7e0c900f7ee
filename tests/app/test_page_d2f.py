"""AppTest of the D2F page: opens without running anything, decodes a preset with every decoder and draws both token
grids, runs a light accuracy-vs-cost comparison, decodes the user's own question and an uploaded list, and shows
bad input as an error."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("d2f", timeout=60)
    assert not at.exception
    assert "d2f_result" not in at.session_state and "d2f_bench" not in at.session_state
    assert not at.get("plotly_chart")


def test_preset_own_question_and_light_comparison() -> None:
    at = open_page("d2f", timeout=240)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["d2f_result"]
    assert [r["decoder"] for r in res["runs"]] == ["d2f", "d2f_nocache", "vanilla", "vanilla_blocks", "threshold", "ar"]
    assert res["runs"][0]["answer"] == res["runs"][1]["answer"]  # the cache changes no token
    assert len(at.get("plotly_chart")) == 2  # the D2F grid and the vanilla grid beside it
    # the user's own question
    at.radio(key="d2f_src").set_value("Your own question").run()
    at.text_area(key="d2f_question").set_value("Compute 7 + 8 * 2.").run()
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["d2f_result"]["prompt"] == "Compute 7 + 8 * 2."
    # a light comparison on 2 problems
    at.number_input(key="d2f_bench_n").set_value(2)
    at.multiselect(key="d2f_bench_steps").set_value([40])
    at.button[1].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    out = at.session_state["d2f_bench"]
    assert {r["decoder"] for r in out["rows"]} == {"d2f", "d2f_nocache", "vanilla", "vanilla_blocks", "threshold", "ar"}
    assert out["claim"]["evaluated"]


def test_uploaded_questions_and_bad_input() -> None:
    at = open_page("d2f", timeout=120)
    at.radio(key="d2f_bench_src").set_value("Your questions (upload)").run()
    text = b"Compute 3 + 4. | 7\nA box has 5 pens. It gets 2 more. How many pens does it have now? | 7\n"
    at.file_uploader(key="d2f_upload").set_value(("mine.txt", text, "text/plain")).run()
    at.multiselect(key="d2f_bench_steps").set_value([20])
    at.button[1].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["d2f_bench"]["n"] == 2 and at.session_state["d2f_bench"]["source"] == "upload"
    # answers on some lines only
    at.file_uploader(key="d2f_upload").set_value(("mixed.txt", b"Compute 3 + 4. | 7\nCompute 1 + 1.\n",
                                                  "text/plain")).run()
    at.button[1].click().run()
    assert any("every line" in e.value for e in at.error)
    # an empty question
    at.radio(key="d2f_src").set_value("Your own question").run()
    at.text_area(key="d2f_question").set_value("   ").run()
    at.button[0].click().run()
    assert any("empty" in e.value for e in at.error)


def test_bad_upload_is_refused() -> None:
    at = open_page("d2f", timeout=60)
    at.radio(key="d2f_bench_src").set_value("Your questions (upload)").run()
    at.file_uploader(key="d2f_upload").set_value(("bad.txt", b"\xff\xfe\x00binary\x00", "text/plain")).run()
    assert at.error
    assert "d2f_bench" not in at.session_state


def test_page_job_gives_the_cli_golden() -> None:
    """The page's decode (``jobs.run_generate`` with every decoder and the grids) gives, for D2F, the numbers of the
    CLI's golden (``d2f generate``, D2F only) on the golden's question."""
    import json
    from pathlib import Path

    from backend.reasoning.d2f import jobs
    from tests.test_cli import strip

    golden = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "d2f.json").read_text())
    question = golden["argv"][golden["argv"].index("--prompt") + 1]
    cli = jobs.run_generate(question, jobs.GenerateConfig())
    page = jobs.run_generate(question, jobs.GenerateConfig(decoders="all", steps=160, grid=True))
    for path in golden["volatile"]:
        cli, page = strip(cli, path.split(".")), strip(page, path.split("."))
    assert cli == golden["expected"]
    d2f = {k: v for k, v in page["runs"][0].items() if k not in ("grid", "grid_tokens")}
    assert d2f == golden["expected"]["runs"][0] and page["config"] == golden["expected"]["config"]


def test_jobs_and_configs_pickle() -> None:
    """The page's jobs and their configs pickle (the Ray executor sends them to a worker)."""
    import pickle

    from backend.reasoning.d2f import jobs

    for obj in (jobs.run_generate, jobs.run_bench, jobs.run_invariance, jobs.GenerateConfig(decoders="all", grid=True),
                jobs.BenchConfig(n=2, questions="Compute 3 + 4. | 7"), jobs.InvarianceConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "d2f",
        "text_corpus",
        "d2f_upload",
        [("radio", "d2f_bench_src", "Your questions (upload)")],
        bad="bad_utf16.txt",
        odd="odd_crlf.txt",
    ),
]
