"""Embedded models (backend/models): each loader loads once per session; the sanity values of OFFLINE_ASSETS.md hold;
the DINOv2 conversion matches the ONNX graph's own backbone output; local folders load; unknown names are InputErrors.

The first run on a machine converts SmolLM2 (about 20 s) and DINOv2 (about 9 s) into the user cache; later runs load
the cached safetensors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data

from backend.errors import InputError
from backend.models import MODELS, check, record, recorded_metadata

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def text_encoder():
    from backend.models.text import load_text_encoder

    return load_text_encoder()


@pytest.fixture(scope="session")
def causal_lm():
    from backend.models.lm import load_causal_lm

    return load_causal_lm()


@pytest.fixture(scope="session")
def vision_encoder():
    from backend.models.vision import load_vision_encoder

    return load_vision_encoder()


@pytest.fixture(scope="session")
def classifier():
    from backend.models.classifier import load_classifier

    return load_classifier()


@pytest.fixture(scope="session")
def chelsea() -> Image.Image:
    return Image.fromarray(data.chelsea())


# ------------------------------------------------------------------------------------------------------ registry
def test_import_is_light():
    code = (
        "import sys, backend.models, backend.models.cli; "
        "print(sorted(m for m in ('torch', 'transformers', 'onnx', 'PIL') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_registry_and_unknown_id():
    assert set(MODELS) == {"minilm", "smollm2", "dinov2", "efficientnet"}
    for spec in MODELS.values():
        assert spec.parameters > 1_000_000 and spec.license and spec.default_source
    from backend.models import load

    with pytest.raises(InputError, match="Valid models"):
        load("resnet")


def test_cli_list_json(capsys):
    from backend.__main__ import main

    assert main(["models", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["models"]
    assert [r["id"] for r in rows] == list(MODELS)


def test_recorded_metadata_shipped():
    recorded = recorded_metadata()
    assert set(recorded) == set(MODELS), "regenerate with: python -m backend models check ID --record"
    for model_id, r in recorded.items():
        assert r["sanity_ok"] is True and r["load_s"] > 0 and r["parameters"] == MODELS[model_id].parameters


def test_record_roundtrip(tmp_path, monkeypatch):
    import backend.models as models

    monkeypatch.setattr(models, "RECORD_FILE", tmp_path / "models.json")
    assert models.recorded_metadata() == {}
    record("minilm", {"load_s": 1.5, "sanity_ok": True})
    record("dinov2", {"load_s": 2.5, "sanity_ok": True})
    assert models.recorded_metadata() == {
        "minilm": {"load_s": 1.5, "sanity_ok": True},
        "dinov2": {"load_s": 2.5, "sanity_ok": True},
    }
    with pytest.raises(InputError):
        record("nope", {})


def test_check_result_fields():
    r = check("efficientnet")
    assert r["sanity_ok"] is True and r["parameters"] == 4_652_008
    assert "285" in r["sanity"] and r["load_s"] > 0
    json.dumps(r)


# ----------------------------------------------------------------------------------------------- one-time caching
def test_cached_conversion_once_atomic(tmp_path, monkeypatch):
    from backend.models._common import cached_conversion

    monkeypatch.setenv("METHOD_LAB_CACHE", str(tmp_path))
    calls = []

    def convert(folder: Path) -> None:
        calls.append(folder)
        (folder / "w.bin").write_bytes(b"x")

    folder, now = cached_conversion("m", convert, ("w.bin",), {"v": 1})
    assert now and folder == tmp_path / "m" and (folder / "w.bin").is_file()
    assert cached_conversion("m", convert, ("w.bin",), {"v": 1}) == (folder, False)
    assert len(calls) == 1 and calls[0] != folder  # written elsewhere, then renamed into place
    assert cached_conversion("m", convert, ("w.bin",), {"v": 2})[1]  # a new recipe converts again

    def broken(folder: Path) -> None:
        (folder / "partial").write_bytes(b"")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cached_conversion("n", broken, ("w.bin",), {})
    assert not (tmp_path / "n").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


# ------------------------------------------------------------------------------------------------- text encoder
def test_minilm_sanity(text_encoder):
    sentences = ["A cat sits on the mat.", "A kitten is resting on a rug.", "Stock prices fell sharply today."]
    emb = text_encoder.embed(sentences)
    assert emb.shape == (3, 384)
    assert torch.allclose(emb.norm(dim=-1), torch.ones(3), atol=1e-5)
    assert float(emb[0] @ emb[1]) == pytest.approx(0.655, abs=0.01)
    assert float(emb[0] @ emb[2]) == pytest.approx(0.063, abs=0.01)
    assert text_encoder.num_parameters() == 22_713_216


def test_minilm_hidden_states_and_padding(text_encoder):
    hidden, mask = text_encoder.hidden_states(["short", "a somewhat longer sentence here"], max_length=64)
    assert hidden.shape[:2] == mask.shape and hidden.shape[2] == 384
    assert mask[0].sum() < mask[1].sum()
    # padding must not change a sentence's embedding
    alone = text_encoder.embed(["short"])
    assert torch.allclose(alone[0], text_encoder.embed(["short", "a somewhat longer sentence here"])[0], atol=1e-5)


def test_text_local_folder(text_encoder):
    from backend.models.text import default_path, load_text_encoder

    other = load_text_encoder(str(default_path()))
    s = ["Local folders load like hub names."]
    assert torch.allclose(other.embed(s), text_encoder.embed(s), atol=1e-6)


@pytest.mark.parametrize(
    "name", ["no-such-org/no-such-model-1234", "/definitely/not/a/folder", "not a valid name!", ""]
)
def test_unknown_names_are_input_errors(name):
    from backend.models.text import load_text_encoder

    with pytest.raises(InputError):
        load_text_encoder(name)


def test_folder_without_config_is_input_error(tmp_path):
    from backend.models.vision import load_vision_encoder

    with pytest.raises(InputError, match="config.json"):
        load_vision_encoder(str(tmp_path))


# ---------------------------------------------------------------------------------------------------- causal LM
def test_smollm2_generates_paris(causal_lm):
    out = causal_lm.generate("What is the capital of France?", max_new_tokens=16)
    assert "Paris" in out


def test_smollm2_perplexity_and_shape(causal_lm):
    ppl = causal_lm.perplexity("The cat sat on the mat. It was a sunny day in the garden.")
    assert 5 < ppl < 100
    cfg = causal_lm.model.config
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_key_value_heads, cfg.vocab_size) == (30, 576, 3, 49152)
    assert causal_lm.num_parameters() == 134_515_008


def test_smollm2_cache_folder_layout(causal_lm):
    from safetensors import safe_open

    from backend.models.lm import converted_folder

    folder, now = converted_folder()
    assert not now
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert "lm_head.weight" not in keys and "model.embed_tokens.weight" in keys
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    m = causal_lm.model
    assert m.lm_head.weight.data_ptr() == m.model.embed_tokens.weight.data_ptr()  # tied after reload


# ----------------------------------------------------------------------------------------------- vision encoder
def test_dinov2_shapes(vision_encoder, chelsea):
    feats = vision_encoder.patch_features([chelsea, chelsea.rotate(90, expand=True)], size=224)
    assert feats.shape == (2, 256, 384) and torch.isfinite(feats).all()
    everything = vision_encoder.forward_all([chelsea], size=224)
    assert everything.shape == (1, 257, 384)
    assert torch.allclose(everything[0, 1:], feats[0], atol=1e-4)
    assert vision_encoder.patch_features([chelsea], size=448).shape == (1, 1024, 384)
    with pytest.raises(InputError):
        vision_encoder.preprocess([chelsea], size=230)
    assert vision_encoder.num_parameters() == 22_056_576


def test_dinov2_matches_onnx_backbone(vision_encoder):
    pytest.importorskip("onnxruntime", reason="onnxruntime (test-only dependency) is not installed")
    from backend.models.vision import onnx_backbone_output

    pixels = vision_encoder.preprocess([Image.fromarray(data.astronaut())], size=224)
    ours = vision_encoder.forward_pixels(pixels).numpy()
    ref = onnx_backbone_output(pixels.numpy())
    assert ref.shape == ours.shape == (1, 257, 384)
    assert float(np.abs(ours - ref).max()) < 1e-4


def test_vision_and_classifier_local_folders(tmp_path, chelsea):
    """The name path (local folder) of the vision encoder and of the classifier, on tiny random models."""
    from transformers import Dinov2Config, Dinov2Model, ViTConfig, ViTForImageClassification

    from backend.models.classifier import load_classifier
    from backend.models.vision import load_vision_encoder

    torch.manual_seed(0)
    Dinov2Model(Dinov2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                             patch_size=14, image_size=56)).save_pretrained(tmp_path / "dino")
    enc = load_vision_encoder(str(tmp_path / "dino"))
    assert enc.patch_features([chelsea], size=56).shape == (1, 16, 32)

    cfg = ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, patch_size=8,
                    image_size=32, num_labels=3, id2label={0: "a", 1: "b", 2: "c"}, label2id={"a": 0, "b": 1, "c": 2})
    ViTForImageClassification(cfg).save_pretrained(tmp_path / "vit")
    (tmp_path / "vit" / "preprocessor_config.json").write_text(
        json.dumps({"image_mean": [0.5] * 3, "image_std": [0.5] * 3, "size": {"height": 32, "width": 32}})
    )
    clf = load_classifier(str(tmp_path / "vit"))
    top = clf.topk(chelsea, k=5)
    assert len(top) == 3 and {name for _, name, _ in top} == {"a", "b", "c"}
    assert sum(p for _, _, p in top) == pytest.approx(1.0, abs=1e-5)


# ---------------------------------------------------------------------------------------------------- classifier
def test_efficientnet_chelsea(classifier, chelsea):
    top = classifier.topk(chelsea, k=5)
    assert top[0][0] == 285 and top[0][1] == "Egyptian cat"
    assert top[0][2] == pytest.approx(0.77, abs=0.03)
    probs = [p for _, _, p in top]
    assert probs == sorted(probs, reverse=True) and sum(probs) <= 1.0 + 1e-6


def test_efficientnet_coffee(classifier):
    top = classifier.topk(Image.fromarray(data.coffee()), k=1)
    assert top[0][0] == 967 and top[0][2] > 0.8


def test_imagenet_class_names():
    from backend.models.classifier import imagenet_class_names

    names = imagenet_class_names()
    assert len(names) == 1000 and names[0].startswith("tench") and names[285] == "Egyptian cat"
    assert names[967] == "espresso"
