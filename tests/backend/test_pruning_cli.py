"""The ``pruning`` CLI group through argparse: a real run on a tiny local Llama checkpoint that writes a loadable
folder, and every bad input refused before anything is written."""

from __future__ import annotations

import argparse
import json

import pytest
import torch

from backend.compression.pruning import cli
from backend.errors import InputError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m backend")
    cli.add_parser(p.add_subparsers(dest="group"))
    return p


def _run(argv: list[str]) -> int:
    """The action's handler (so an InputError propagates to ``pytest.raises``), printed the one way."""
    from backend.cli_common import finish

    args = _parser().parse_args(argv)
    return finish(args, args.func.handler(args))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from backend.models.lm import converted_folder

    return AutoTokenizer.from_pretrained(str(converted_folder()[0]))


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory, tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=48, intermediate_size=40, num_hidden_layers=2,
                      num_attention_heads=6, num_key_value_heads=2, head_dim=8, max_position_embeddings=256,
                      tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=2)
    d = tmp_path_factory.mktemp("tiny_llama")
    LlamaForCausalLM(cfg).save_pretrained(str(d))
    tokenizer.save_pretrained(str(d))
    return d


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    from backend.compression.corpus import builtin_text

    p = tmp_path_factory.mktemp("text") / "calib.txt"
    p.write_text(builtin_text()[:30_000], encoding="utf-8")
    return p


def test_run_writes_a_standard_checkpoint(tiny_dir, text_file, tmp_path, capsys):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "pruned"
    rc = _run(["pruning", "run", "--model", str(tiny_dir), "--ratio", "0.5", "--score", "variance",
               "--compensation", "rotation", "--calib", str(text_file), "--n-calib", "4", "--n-eval", "2",
               "--out", str(out), "--dtype", "float32", "--json"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pruned"]["params_effective"] < report["dense"]["params_stored"]
    assert report["channels"]["kept"] == 20 and report["heads"]["dropped_total"] == 6
    assert report["provenance"]["params"]["compensation"] == "rotation"
    assert "calib.txt" in report["settings"]["text_source"]
    recipe = json.loads((out / "pruning_recipe.json").read_text())
    assert recipe["ratio"] == 0.5 and len(recipe["head_keep"]) == 2
    # the recipe names every dropped MLP channel, consistent with the kept counts
    assert [len(d) for d in recipe["channels_dropped"]] == [20, 20]
    assert recipe["channels_dropped"] == [[i for i, k in enumerate(c) if not k]
                                          for c in report["channels"]["channel_keep"]]
    model = AutoModelForCausalLM.from_pretrained(str(out))
    assert model.config.intermediate_size == 20
    assert model.model.layers[0].mlp.down_proj.weight.shape == (48, 20)


def test_methods_lists_presets(capsys):
    assert _run(["pruning", "methods", "--json"]) == 0
    methods = json.loads(capsys.readouterr().out)["methods"]
    assert {"rcpu", "flap", "wanda_sp", "propls"} <= set(methods)


def test_bad_inputs_write_nothing(tiny_dir, text_file, tmp_path, tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    out = tmp_path / "never"
    base = ["pruning", "run", "--model", str(tiny_dir), "--n-calib", "4", "--n-eval", "2", "--out", str(out)]
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        _run([*base, "--calib", str(empty)])
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\u00e9 na\u00efve ".encode("latin-1") * 50)
    with pytest.raises(InputError, match="UTF-8"):
        _run([*base, "--calib", str(latin)])
    short = tmp_path / "short.txt"
    short.write_text("A short note. " * 20)
    with pytest.raises(InputError, match="fewer calibration segments"):
        _run([*base, "--calib", str(short)])
    gpt = tmp_path / "gpt2"
    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=len(tokenizer), n_positions=256)) \
        .save_pretrained(str(gpt))
    tokenizer.save_pretrained(str(gpt))
    with pytest.raises(InputError, match="not a Llama-family"):
        _run(["pruning", "run", "--model", str(gpt), "--calib", str(text_file), "--n-calib", "4", "--out", str(out)])
    with pytest.raises(InputError, match="not a valid Hugging Face model name|neither"):
        _run(["pruning", "run", "--model", str(tmp_path / "missing_folder"), "--out", str(out)])
    assert not out.exists()
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.txt").write_text("keep me")
    with pytest.raises(InputError, match="not empty"):
        _run([*base[:-2], "--calib", str(text_file), "--out", str(full)])
    assert [p.name for p in full.iterdir()] == ["x.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folders left behind


def test_encoder_refuses_a_decoder(tiny_dir):
    with pytest.raises(InputError, match="not a BERT-style encoder"):
        _run(["pruning", "encoder", "--model", str(tiny_dir), "--n-calib", "4"])
