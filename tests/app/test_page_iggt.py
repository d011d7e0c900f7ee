"""AppTest of the IGGT page: opens without running anything, segments the first preset scene with every segmenter
(the CLI golden's settings, with the golden's numbers), segments two uploaded photos (labelled out of distribution),
and answers too few, too many and bad photos with messages. The jobs and configs pickle."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from tests.app.conftest import NOT_AN_IMAGE, Widget, open_page, png_bytes

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "iggt.json"
UPLOADS = [Widget("iggt", "image", "iggt_upload", [("radio", "iggt_mode", "Your photos")],
                  bad="bad_wrong_magic.png", odd="rgba")]


def test_opens_without_running_anything() -> None:
    at = open_page("iggt")
    assert not at.exception
    assert "iggt_result" not in at.session_state and "iggt_eval" not in at.session_state
    assert not at.get("plotly_chart")


def test_preset_segments_with_every_segmenter_and_gives_the_cli_golden() -> None:
    from backend.scenes.iggt import jobs as J

    at = open_page("iggt")
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["iggt_result"]
    assert set(res.metrics) == {"iggt", "iggt_per_view", "dinov2_hungarian", "colour_depth"}
    assert all(0 <= m["t_miou"] <= 1 for m in res.metrics.values())
    assert len(at.get("plotly_chart")) >= 1
    spec = json.loads(GOLDEN.read_text())
    argv = spec["argv"]
    cli_cfg = J.SegmentConfig(split=argv[argv.index("--split") + 1], scene=int(argv[argv.index("--scene") + 1]),
                              views=int(argv[argv.index("--n-views") + 1]))
    assert at.session_state["iggt_config"] == cli_cfg
    for m, met in spec["expected"]["metrics"].items():
        assert abs(res.metrics[m]["t_miou"] - met["t_miou"]) < 1e-6, m
        assert res.metrics[m]["t_sr"] == met["t_sr"], m


def test_photos_upload_and_count_messages() -> None:
    at = open_page("iggt")
    at.radio(key="iggt_mode").set_value("Your photos").run()
    up = at.file_uploader(key="iggt_upload")
    up.set_value([("a.png", png_bytes(1, (96, 80)), "image/png")]).run()
    assert not at.error and any("Add 1 more photo" in i.value for i in at.info)
    at.file_uploader(key="iggt_upload").set_value([(f"{i}.png", png_bytes(i), "image/png") for i in range(5)]).run()
    assert any("at most 4" in e.value for e in at.error)
    at.file_uploader(key="iggt_upload").set_value([("a.png", png_bytes(1, (96, 80)), "image/png"),
                                                   ("b.png", png_bytes(2), "image/png")]).run()
    assert not at.error
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    res = at.session_state["iggt_result"]
    assert res.source == "photos" and not res.metrics
    assert any("out of distribution" in n for n in res.notes)
    assert any("different sizes" in n for n in res.notes)
    at.file_uploader(key="iggt_upload").set_value([("a.png", png_bytes(1), "image/png"),
                                                   ("bad.png", NOT_AN_IMAGE, "image/png")]).run()
    assert at.error and not at.exception


def test_jobs_and_configs_pickle() -> None:
    from backend.scenes.iggt import jobs as J

    for obj in (J.run_segment, J.run_eval, J.SegmentConfig(), J.EvalConfig(scenes=2)):
        assert pickle.loads(pickle.dumps(obj)) == obj
