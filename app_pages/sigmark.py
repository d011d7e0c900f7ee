"""SIGMark: generate a blind-watermarked video with the tiny video diffusion model, attack it, extract it blindly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.runtime import ASSETS, provenance
from backend.watermark.sigmark import jobs
from backend.watermark.sigmark.evaluation import METHODS
from backend.watermark.sigmark.inputs import ATTACKS as ATTACK_MENU
from backend.watermark.sigmark.inputs import EVALUATE_PRESET, PRESETS
from backend.watermark.sigmark.messages import message_options
from ui.claims import claims_panel
from ui.figures import sigmark as figs
from ui.inputs import decoded, upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("sigmark", """
**SIGMark** hides a message in the *initial noise* of a latent video diffusion model, so the video is generated
already watermarked and the noise stays exactly Gaussian (**distortion-free**). One global set of frame-wise keys makes
extraction **blind**, and **SGO** re-orders frame groups after drops and insertions. Generate a video, attack it and
extract the message with and without SGO.
""", details_md="""
**SIGMark** hides a message in the *initial noise* z_T of a latent video diffusion model, so the video is generated
already watermarked and z_T stays exactly N(0, I) (**distortion-free**): each latent frame's noise signs are a
pseudorandom-code (PRC) codeword, and the magnitudes stay Gaussian. One **global set of frame-wise PRC keys** (GF-PRC,
one key per latent temporal index, shared by all videos) replaces per-video records, so extraction is **blind**: invert
the video back to z_T, score every latent frame against every key (the best key tells its temporal position), decode.
Causal 3D VAEs encode frame 0 alone and then groups of 4 frames, so dropping or inserting one frame shifts every later
group and destroys its codeword; **SGO** (segment group-ordering) cuts the video at discontinuities, finds each
segment's group phase with the keys and puts it back in place before extraction.

**What you see**: a *tiny* latent video diffusion model trained by this project on procedural clips (25 frames of
32x32: causal 3D VAE with x4 spatial and x4 temporal compression, 16x8x8 latents = 1024 code bits per latent frame,
DDIM sampling and inversion). The watermarked and plain videos come from the same seed (same noise magnitudes). Bit
accuracy per latent frame, with and without SGO; in the shipped evaluation also the two non-blind baselines, whose
extraction cost grows with every registered video: VideoShield-style templates (one record per video, compared in
every frame slot) and VideoMark-style matching (one PRC key for all videos; each decoded latent frame is replaced by
the nearest of all stored per-frame messages by edit distance; no temporal index, so no SGO).

**Reading on our miniature** (measured, see the table below): the VAE's grouping is slot-specific, as in real causal
video VAEs (frames permuted inside their groups, or one frame dropped at the start, put every latent frame at chance).
SGO restores insertions. Drops need SGO's segmentation to find the cut; the tiny model's samples still flicker (frame
difference about 2.3x the training clips, with jumps where one latent frame's group ends), so it misses some cuts
(92% of 2-frame drop cuts found on the training clips); the row "SGO given the true cuts"
shows what SGO's phase search does once the cut is known. A 32-bit message is a majority vote over all latent frames (the paper's "512 bits"):
the frames before an edit keep it alive even without SGO; the 192-bit layout (32 bits per latent frame, the paper's
"512x16 bits") shows the loss directly.
""")
claims_panel("sigmark")

EVAL = ASSETS / "sigmark_eval.json"
ATTACKS = list(ATTACK_MENU)
results: dict = st.session_state.setdefault("sigmark_result", {})
# the live demo compares SIGMark with its ablation without SGO on the same attacked video
SGO, NO_SGO = jobs.DEMO_METHODS
BITS = message_options()


def _video(col, title: str, frames: np.ndarray) -> None:
    from backend.io import video as vio

    col.caption(title)
    col.video(vio.encode_webm(vio.upscale(frames / 255.0, 8)), format="video/webm", loop=True, autoplay=True)


first = next(iter(PRESETS.values()))
preset_choice("sigmark", {name: {f"sigmark_{k}": v for k, v in p.items()} for name, p in PRESETS.items()},
              label="Preset", horizontal=True)
with st.form("sigmark_form"):
    c1, c2, c3 = st.columns([2, 1, 2])
    message = bound(c1.text_input, "Message (hex)", first["message"], key="sigmark_message",
                    help=f"{BITS[0] // 4} hex digits = {BITS[0]} bits tiled over the 6 latent frames (majority "
                         f"vote); {', '.join(str(b // 4) for b in BITS[1:])} digits put different bits in different "
                         "frames.")
    seed = bound(c2.number_input, "Seed", 0, 1_000_000, first["seed"], key="sigmark_seed")
    attack = bound(c3.selectbox, "Attack", ATTACKS, index=ATTACKS.index(first["attack"]), key="sigmark_attack",
                   help="Chains work in the CLI, e.g. drop:1+jpeg:50. Frame 0 is always kept.")
    run = st.form_submit_button("Generate, attack and extract", icon=":material/play_arrow:", type="primary")

if run:
    try:
        config = jobs.TrialConfig(message=message, seed=int(seed), attack=attack)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        config = None
    res = config and run_job("sigmark_generate", jobs.run_trial, config, time_cap_s=240)
    if res:
        results["gen"] = res
        record_run("sigmark", {"message": message, "attack": attack},
                   {f"{k} {m}": res.methods[k][m] for k in (SGO, NO_SGO) for m in ("message_acc", "frame_acc")},
                   seed=int(seed))

gen = results.get("gen")
if gen:
    c1, c2, c3 = st.columns(3)
    _video(c1, "watermarked", gen.video_wm)
    _video(c2, "unwatermarked, same seed", gen.video_plain)
    _video(c3, f"watermarked after {gen.attack}", gen.video_attacked)
    st.plotly_chart(figs.frame_strip(gen.video_attacked / 255.0, None, "attacked frames (white: 4-frame groups)"),
                    key="sigmark_strip")
    s, n = gen.methods[SGO], gen.methods[NO_SGO]
    st.plotly_chart(figs.per_frame_accuracy({SGO: s["per_frame"], NO_SGO: n["per_frame"]}),
                    key="sigmark_perframe")
    h1, h2 = st.columns(2)
    h1.plotly_chart(figs.score_heatmap(s["scores"], s["thresholds"], "with SGO: Detect margin"), key="sigmark_h1")
    h2.plotly_chart(figs.score_heatmap(n["scores"], n["thresholds"], "without SGO"), key="sigmark_h2")
    rows = [{"method": METHODS.label(k), "recovered message": r["message_hex"], "message bit acc":
             round(r["message_acc"], 3), "frame bit acc": round(r["frame_acc"], 3),
             "frame bit acc (real frames)": round(r["frame_acc_real"], 3), "detected (FPR 1e-6)":
             r["detected"], "keys per latent": str(r["keys"]), "extract s": round(r["seconds"], 2)}
            for k, r in ((k, gen.methods[k]) for k in (SGO, NO_SGO))]
    show_metrics_table(rows, key="sigmark_table")
    st.caption(f"Generation {gen.gen_s:.2f} s watermarked vs {gen.gen_plain_s:.2f} s plain. SGO segments: "
               f"{s['segments']}.")
    from backend.io import video as vio

    d1, d2, d3, d4 = st.columns(4)
    d1.download_button("MP4 (viewing)", vio.encode_mp4(vio.upscale(gen.video_wm / 255.0, 8)), "sigmark.mp4",
                       "video/mp4", key="sigmark_dl_mp4", on_click="ignore")
    d2.download_button("Lossless NPZ", vio.encode_npz(gen.video_wm / 255.0), "sigmark.npz",
                       "application/octet-stream", key="sigmark_dl_npz", on_click="ignore")
    d3.download_button("PNG frames (zip)", vio.encode_png_zip(gen.video_wm / 255.0), "sigmark_frames.zip",
                       "application/zip", key="sigmark_dl_zip", on_click="ignore")
    with d4:
        json_download("Report (JSON)", {"rows": rows, "provenance": provenance(
            gen.seed, [ASSETS / "sigmark_tiny_vldm.safetensors"], message=gen.message, attack=gen.attack)},
            "sigmark_report.json", key="sigmark_dl_json")
    csv_download("Metrics (CSV)", pd.DataFrame(rows), "sigmark_metrics.csv", key="sigmark_dl_csv")

st.subheader("Every method on the same seeded videos")
st.markdown("SIGMark, its ablation and the two non-blind baselines on the same seeds and attack (random 32-bit "
            "messages; the numbers of `python -m backend sigmark evaluate`). One video takes about 15 s.")
with st.form("sigmark_eval_form"):
    e1, e2, e3 = st.columns([2, 1, 1])
    ev_attack = e1.selectbox("Attack", ATTACKS, index=ATTACKS.index(EVALUATE_PRESET["attack"]),
                             key="sigmark_eval_attack")
    ev_videos = e2.number_input("Videos", 1, 4, EVALUATE_PRESET["videos"], key="sigmark_eval_videos")
    ev_seed = e3.number_input("Seed", 0, 1_000_000, EVALUATE_PRESET["seed"], key="sigmark_eval_seed")
    ev_run = st.form_submit_button("Evaluate every method", icon=":material/compare:")
if ev_run:
    config = jobs.EvaluateConfig(attack=ev_attack, videos=int(ev_videos), seed=int(ev_seed))
    res = run_job("sigmark_evaluate", jobs.run_evaluate, config, time_cap_s=300)
    if res is not None:
        results["evaluate"] = res
ev = results.get("evaluate")
if ev:
    show_metrics_table([{"method": METHODS.label(k), **{m: None if v != v else round(v, 3) for m, v in r.items()}}
                        for k, r in ev.methods.items()], key="sigmark_eval_table")
    st.caption(f"{ev.videos} video(s) after {ev.attack}; detect rate at a false-positive rate of 1e-6 per video.")

st.subheader("Bit accuracy per attack and extraction cost (shipped evaluation)")
if EVAL.is_file():
    shipped = json.loads(EVAL.read_text())
    st.plotly_chart(figs.accuracy_per_attack(shipped["attacks"]), key="sigmark_attacks")
    show_metrics_table(pd.DataFrame(shipped["attacks"]).round(3), key="sigmark_attack_table")
    st.plotly_chart(figs.extraction_scaling(shipped["scaling"]), key="sigmark_scaling")
    st.caption(shipped.get("note", ""))
else:
    st.info("No shipped evaluation yet: run `python benchmarks/sigmark.py`.")

st.subheader("Extract from your own video")
st.markdown("A video generated on this page (NPZ or PNG-zip downloads are lossless; MP4, WebM and GIF also work but "
            "their compression is an attack at 32x32). Edited elsewhere is fine: cut, reorder, re-encode. Limits: "
            "20 MB, 5-240 frames, at most 1024 px per side; frames are resized to 32x32.")
up = upload("video", "Video", "sigmark_upload",
            "MP4 / WebM / GIF, or the lossless NPZ / ZIP from this page; at most 20 MB")
bits = bound(st.selectbox, "Message length (bits)", list(BITS), key="sigmark_bits")
if st.button("Extract", key="sigmark_extract", icon=":material/search:") and up is not None:
    video = decoded("video", up)
    if video is not None:
        res = run_job("sigmark_extract", jobs.run_extract, video, jobs.ExtractConfig(bits=int(bits)), time_cap_s=120)
        if res is not None:
            results["upload"] = {"name": up[0], **res.to_json()}
elif up is None and st.session_state.get("sigmark_extract"):
    st.error("Upload a video first.")
upl = results.get("upload")
if upl:
    st.success(f"{upl['name']}: {'watermark detected' if upl['detected'] else 'no watermark detected'} at a "
               f"false-positive rate of 1e-6 per video; recovered message `{upl['message_hex']}` "
               f"({upl['frames']} frames, {upl['seconds']:.2f} s).")
    st.plotly_chart(figs.score_heatmap(upl["scores"], upl["thresholds"], "uploaded video: Detect margin"),
                    key="sigmark_up_heat")
show_history("sigmark")
