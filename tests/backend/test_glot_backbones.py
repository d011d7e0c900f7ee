"""Backbones of GLOT: the embedded MiniLM, any local checkpoint by folder (encoder or decoder, detected from its
config), decoders pooled at their last valid token, the hidden-state cache, and the example view."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from backend.errors import InputError
from backend.tokens.glot import stress
from backend.tokens.glot.backbone import backbone_kind, encode, load_backbone
from backend.tokens.glot.experiments import StressConfig, run_stress
from backend.tokens.glot.heads import TrainConfig
from backend.tokens.glot.layers import GlotConfig


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer random Llama saved with MiniLM's tokenizer: a local decoder checkpoint that loads in a second."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from backend.models.text import default_path

    folder = tmp_path_factory.mktemp("tiny_llama")
    tok = AutoTokenizer.from_pretrained(str(default_path()))
    tok.save_pretrained(str(folder))
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=tok.vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256)
    LlamaForCausalLM(cfg).save_pretrained(str(folder))
    return folder


def test_local_decoder_checkpoint_uses_the_last_valid_token(tiny_decoder: Path) -> None:
    assert backbone_kind(str(tiny_decoder)) == "smollm2"
    bb = load_backbone(str(tiny_decoder))
    assert bb.is_decoder and bb.hidden_size == 32
    texts = ["short text", "a somewhat longer text with more words in it"]
    states = encode(bb, texts, 64)
    assert states.mask.sum(1).tolist()[0] < states.mask.sum(1).tolist()[1]
    assert encode(bb, texts, 64) is states  # the in-process cache
    res = run_stress(StressConfig(variant="relational", n_train=16, n_eval=8, poolings=("cls", "glot"), bow=False),
                     GlotConfig(gat_hidden=8), TrainConfig(epochs=1), backbone=bb)
    assert {r["pooling"] for r in res.rows} == {"cls", "glot"}
    ex = res.example
    assert ex is not None and ex.sim_labels[len(ex.tokens)] == "[LAST]"
    assert ex.similarity.shape == (len(ex.sim_labels),) * 2
    assert sum(ex.needle) == 2  # the two nouns of the relational needles


def test_minilm_from_its_folder_is_an_encoder() -> None:
    from backend.models.text import default_path

    assert backbone_kind(str(default_path())) == "minilm"
    assert backbone_kind("minilm") == "minilm" and backbone_kind("smollm2") == "smollm2"


def test_unknown_backbone_is_an_input_error() -> None:
    with pytest.raises(InputError, match="neither an existing local folder"):
        load_backbone("./no/such/model")
    with pytest.raises(InputError, match="not in the local Hugging Face cache"):
        load_backbone("someone/not-a-cached-model")


def test_minilm_keeps_every_stress_text_whole() -> None:
    bb = load_backbone("minilm")
    texts = [s.text for v in stress.VARIANTS for s in stress.generate(8, 0.9, "end", v, seed=9).samples]
    states = encode(bb, texts, 160)
    assert states.truncated == 0 and int(states.mask.sum(1).max()) <= 160
