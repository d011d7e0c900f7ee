"""SIGMark's inputs: it reads only the shared ``video`` kind (``backend.io.video``: MP4, WebM, GIF, NPZ, ZIP of PNG),
so it declares no kind of its own; its presets are the settings of the page's generate -> attack -> extract demo and
of the comparison of every method (the settings of ``sigmark evaluate``). Import-light: no torch, no numpy."""

from __future__ import annotations

KINDS: tuple = ()

DEFAULT_MESSAGE = "a5f00f12"  # 32 bits, tiled over every latent frame
TABLE_ATTACKS: tuple[str, ...] = ("none", "drop:2", "insert:2", "jpeg:50")  # ``sigmark table`` without --attack

# the attack menu of the page (any chain of backend.watermark.attacks works in the CLI and in a job's config)
ATTACKS: tuple[str, ...] = (
    "none", "drop:1", "drop:2", "drop:2x2", "insert:2", "insert:2x2", "swap:1", "clip:12", "trim_start:4",
    "trim_end:4", "fps:0.8", "jpeg:50", "mp4", "noise:7.65", "blur_sigma:0.5", "crop:0.2775", "resize:0.75",
    "brightness:1.2",
)

# name -> TrialConfig settings (message hex, seed, attack); the first is the page's default
PRESETS: dict[str, dict[str, object]] = {
    "32 bits, two 2-frame drops": {"message": DEFAULT_MESSAGE, "seed": 7, "attack": "drop:2x2"},
    "32 bits, 2 frames inserted": {"message": DEFAULT_MESSAGE, "seed": 7, "attack": "insert:2"},
    "192 bits (32 per latent frame), 2 frames dropped": {
        "message": "a5f00f12c3d2e1b0" "0123456789abcdef" "fedcba9876543210", "seed": 7, "attack": "drop:2"},
    "32 bits, no attack": {"message": DEFAULT_MESSAGE, "seed": 7, "attack": "none"},
}

# EvaluateConfig settings of the page's comparison of every method (the CLI golden's run: evaluate --attack drop:2
# --videos 1)
EVALUATE_PRESET: dict[str, object] = {"attack": "drop:2", "videos": 1, "seed": 0}
