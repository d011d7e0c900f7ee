"""AppTest of the SIGMark page: opens instantly, a preset run (generate, attack, extract), a lossless download
re-uploaded extracts the same bits, and a bad upload shows an error; the page's comparison of every method, set to
the CLI golden's settings, gives the golden's numbers (page and CLI share ``jobs.run_evaluate``); the page's jobs and
configs pickle (the Ray executor sends them to a worker)."""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

from tests.app.conftest import Widget, open_page

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "sigmark.json"


def test_page_preset_run_download_reupload_and_bad_upload() -> None:
    at = open_page("sigmark", timeout=240)
    assert not at.exception
    n_before = len(at.get("plotly_chart"))
    at.text_input(key="sigmark_message").set_value("a5f00f12")
    at.number_input(key="sigmark_seed").set_value(3)
    at.selectbox(key="sigmark_attack").set_value("drop:2")
    at.button[0].click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) >= n_before + 4  # strip, per-frame accuracy, two heatmaps
    df = at.dataframe[0].value
    assert set(df["method"]) == {"SIGMark (GF-PRC + SGO)", "SIGMark without SGO"}
    assert ((df["message bit acc"] >= 0) & (df["message bit acc"] <= 1)).all()
    gen = at.session_state["sigmark_result"]["gen"]
    sig_hex = gen.methods["sigmark"]["message_hex"]

    # the lossless download (NPZ of the watermarked video), re-uploaded, extracts the same bits as extracting the
    # original video directly
    from backend.io import video as vio
    from backend.watermark import sigmark as S
    from backend.watermark.sigmark.channel import get_channel

    npz = vio.encode_npz(gen.video_wm / 255.0)
    direct = S.extract(get_channel("tiny"), gen.video_wm / 255.0, S.SIGMarkConfig(), sgo=True, message_bits=32)
    at.file_uploader(key="sigmark_upload").set_value(("sigmark.npz", npz, "application/octet-stream")).run()
    at.button(key="sigmark_extract").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    up = at.session_state["sigmark_result"]["upload"]
    assert up["message_hex"] == S.bits_to_hex(direct.message)
    assert sig_hex  # the attacked extraction produced a message

    at.file_uploader(key="sigmark_upload").set_value(("fake.mp4", b"this is not a video" * 10, "video/mp4")).run()
    at.button(key="sigmark_extract").click().run()
    assert not at.exception
    assert at.error and "not a supported video" in at.error[0].value


def _golden_args() -> tuple[dict, argparse.Namespace]:
    """The golden and its argv parsed by the sigmark CLI's own parser."""
    from backend.watermark.sigmark import cli

    golden = json.loads(GOLDEN.read_text())
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    return golden, parser.parse_args(golden["argv"])


def test_page_evaluation_equals_cli_golden() -> None:
    from backend.cli_common import json_safe
    from tests.test_cli import same, strip

    golden, args = _golden_args()
    assert golden["argv"][1] == "evaluate"
    at = open_page("sigmark", timeout=240)
    at.selectbox(key="sigmark_eval_attack").set_value(args.attack)
    at.number_input(key="sigmark_eval_videos").set_value(args.videos)
    at.number_input(key="sigmark_eval_seed").set_value(args.seed)
    next(b for b in at.button if b.label == "Evaluate every method").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.dataframe) >= 1  # the comparison table
    got = json.loads(json.dumps(json_safe(at.session_state["sigmark_result"]["evaluate"].to_json())))
    expected = golden["expected"]
    for path in golden.get("volatile", []):
        got = strip(got, path.split("."))
        expected = strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_page_jobs_and_configs_pickle() -> None:
    from backend.watermark.sigmark import jobs

    _, args = _golden_args()
    payloads = [(jobs.run_evaluate, jobs.EvaluateConfig(attack=args.attack, videos=args.videos, seed=args.seed)),
                (jobs.run_trial, jobs.TrialConfig(message="a5f00f12", seed=3, attack="drop:2")),
                (jobs.run_extract, jobs.ExtractConfig(bits=64)), (jobs.run_table, jobs.TableConfig())]
    for fn, config in payloads:
        back_fn, back_config = pickle.loads(pickle.dumps((fn, config)))
        assert back_fn is fn and back_config == config


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "sigmark",
        "video",
        "sigmark_upload",
        [],
        submit="sigmark_extract",
        bad="bad_npz_rank3.npz",
        odd="odd_frames.zip",
    ),
]
