"""AppTest of the SIGMark page: opens instantly, a preset run (generate, attack, extract), a lossless download
re-uploaded extracts the same bits, and a bad upload shows an error."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


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
    sig_hex = gen["sigmark"]["message_hex"]

    # the lossless download (NPZ of the watermarked video), re-uploaded, extracts the same bits as extracting the
    # original video directly
    from backend.io import video as vio
    from backend.watermark import sigmark as S
    from backend.watermark.sigmark.channel import get_channel

    npz = vio.encode_npz(gen["video_wm"] / 255.0)
    direct = S.extract(get_channel("tiny"), gen["video_wm"] / 255.0, S.SIGMarkConfig(), sgo=True, message_bits=32)
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
