"""The inputs of RCPU pruning: it reads only shared kinds (``text_corpus``: a UTF-8 text for calibration and
held-out perplexity, :mod:`backend.compression.corpus`; ``model_folder``: a local model), so it declares no kind of
its own.

``PRESETS``: the page's runs that need no upload, as the settings of their jobs (:mod:`.jobs`): the light run on the
MiniLM encoder (``EncoderConfig``; the CLI's ``pruning encoder`` defaults but for 16 calibration paragraphs) and the
full run on SmolLM2 (``RunConfig`` with the page's 32 calibration segments and 16 held-out windows). Import-light: no
torch.
"""

from __future__ import annotations

KINDS: tuple = ()

PRESETS: dict[str, dict[str, object]] = {
    "MiniLM encoder (light)": {"target": "encoder", "ratio": 0.3, "compensation": "rotation", "n_calib": 16,
                               "n_eval": 64},
    "SmolLM2-135M (full)": {"target": "lm", "ratio": 0.2, "compensation": "rotation", "n_calib": 32, "n_eval": 16},
}

__all__ = ["KINDS", "PRESETS"]
