"""The ``stamp`` CLI group's bad input: bits outside the supported set, a missing text, a checkpoint of another
architecture (a tiny GPT-2 folder with a real tokenizer) all exit with code 2 and a message, nothing written."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest


def run_cli(argv: list[str]) -> tuple[int, dict]:
    from backend.__main__ import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    text = out.getvalue()
    return code, (json.loads(text) if text.strip().startswith("{") else {"text": text})


@pytest.mark.parametrize("argv", [["--bits", "7"], ["--bits", "4", "--high-bits", "2"], ["--transform", "fourier"],
                                  ["--hp-tokens", "999"], ["--weight-bits", "1"]])
def test_bad_settings_exit_2(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = run_cli(["stamp", "eval", *argv, "--json"])
    assert code == 2 and out["error"]
    assert not list(tmp_path.iterdir())


def test_missing_text_exit_2(tmp_path):
    code, out = run_cli(["stamp", "eval", "--text", str(tmp_path / "nope.txt"), "--json"])
    assert code == 2 and "nope.txt" in out["error"]


def test_other_architecture_checkpoint_exit_2(tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    from backend.models.lm import converted_folder

    folder = tmp_path / "gpt2-tiny"
    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=49152, n_positions=64)).save_pretrained(
        folder)
    src, _ = converted_folder()
    for f in src.iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "vocab", "merges")):
            shutil.copy(f, folder / f.name)
    code, out = run_cli(["stamp", "eval", "--model", str(folder), "--windows", "1", "--json"])
    assert code == 2, out
    assert "Llama-family" in out["error"]
