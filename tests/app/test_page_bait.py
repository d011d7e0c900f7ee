"""AppTest of the BAIT page: opens with the shipped accuracy grid and runs nothing heavy, the preset protects the
test images with every method inside the epsilon ball, an upload is protected with its realised L-inf shown, a bad
upload shows a message; the page's job gives the CLI golden's numbers (``bait protect``) and the jobs pickle."""

from __future__ import annotations

from tests.app.conftest import image_widget, open_page, png_bytes


def test_opens_with_the_grid_and_runs_nothing_heavy() -> None:
    at = open_page("bait", timeout=60)
    assert not at.exception, at.exception
    assert "protect" not in at.session_state["bait_result"]
    assert len(at.get("plotly_chart")) == 2  # the shipped grid and its outer-loss curves


def test_preset_protects_within_the_ball() -> None:
    at = open_page("bait", timeout=60)
    at.slider(key="bait_eps").set_value(6).run()
    at.button(key="bait_go").click().run(timeout=60)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["bait_result"]["protect"]
    assert res.eps == 6 and all(r["linf"] <= 6 for r in res.rows)
    assert len(at.get("plotly_chart")) == 3


def test_upload_is_protected_and_bad_upload_shows_a_message() -> None:
    at = open_page("bait", timeout=60)
    at.radio(key="bait_mode").set_value("An image: a photo or an upload").run()
    at.selectbox(key="bait_img_choice").set_value("Upload your own").run()
    at.file_uploader(key="bait_img_upload").set_value(("me.png", png_bytes(1, (64, 48)), "image/png")).run()
    at.button(key="bait_go").click().run(timeout=60)
    assert not at.exception, at.exception
    res = at.session_state["bait_result"]["protect"]
    assert res.clean.shape == (1, 48, 64, 3) and all(r["linf"] <= 8 for r in res.rows)
    at.file_uploader(key="bait_img_upload").set_value(("bad.png", b"not an image at all", "image/png")).run()
    assert at.error


UPLOADS = [image_widget("bait", "bait_img")]
UPLOADS[0].setup.insert(0, ("radio", "bait_mode", "An image: a photo or an upload"))


def test_page_job_gives_the_cli_golden() -> None:
    """The page's preset at eps 8 is ``bait protect --eps 8`` (tests/cli_golden/bait.json): same rows, same norms."""
    import json
    from pathlib import Path

    golden = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "bait.json").read_text())
    assert golden["argv"][:2] == ["bait", "protect"] and "--eps" in golden["argv"]
    at = open_page("bait", timeout=60)
    at.slider(key="bait_eps").set_value(int(golden["argv"][golden["argv"].index("--eps") + 1])).run()
    at.button(key="bait_go").click().run(timeout=60)
    assert not at.exception, at.exception
    got = at.session_state["bait_result"]["protect"].summary()
    want = golden["expected"]
    assert got["labels"] == want["labels"] and got["eps"] == want["eps"]
    for g, w in zip(got["rows"], want["rows"], strict=True):
        assert {k: v for k, v in g.items() if k != "seconds"} == {k: v for k, v in w.items() if k != "seconds"}


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.robustness.bait import jobs

    for obj in (jobs.run_protect, jobs.run_grid, jobs.ProtectConfig(eps=4), jobs.GridConfig(reevaluate=True)):
        assert pickle.loads(pickle.dumps(obj)) == obj
