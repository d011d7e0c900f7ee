"""The optional Qwen2.5-Coder loader: joining the 22 parts checks size and sha256 before anything loads; when the
parts are absent every entry point says how to install them. Loading the real model is a full-tier test."""

from __future__ import annotations

import hashlib

import pytest

from backend.errors import InputError
from backend.models import EXTRA_MODELS, coder


def test_join_checks_size_and_sha256(tmp_path):
    parts = []
    for i, chunk in enumerate([b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]):
        p = tmp_path / f"part{i + 1}.bin"
        p.write_bytes(chunk)
        parts.append(p)
    whole = b"".join(p.read_bytes() for p in parts)
    out = coder.join_parts(parts, tmp_path / "out" / "m.gguf", size=len(whole),
                           sha256=hashlib.sha256(whole).hexdigest())
    assert out.read_bytes() == whole
    with pytest.raises(InputError, match="make models-extra"):
        coder.join_parts(parts[::-1], tmp_path / "bad.gguf", size=len(whole), sha256=hashlib.sha256(whole).hexdigest())
    assert not (tmp_path / "bad.gguf").exists()
    assert not list(tmp_path.glob(".join-*"))


def test_absent_parts_name_the_install_command():
    if coder.installed():
        pytest.skip("the optional model is installed here")
    assert not EXTRA_MODELS["qwen2.5-coder"].is_present()
    with pytest.raises(InputError, match="make models-extra"):
        coder.load_coder()
    assert len(coder.PIP_COMMAND.split("==")) == coder.N_PARTS + 1


def test_tinyreasoner_row_matches_the_architecture():
    from backend.models import tinyreasoner as tr

    model, _ = tr.build(tr.TinyReasonerConfig(), tr.base_vocab())
    assert EXTRA_MODELS["tinyreasoner"].parameters == sum(p.numel() for p in model.parameters())


@pytest.mark.full
def test_coder_loads_and_answers():
    if not coder.installed():
        pytest.skip("optional model not installed (make models-extra)")
    lm = coder.load_coder()
    assert lm.num_parameters() > 1_000_000_000
    assert "4" in lm.generate("What is 2 + 2? Answer with a number.", max_new_tokens=8)
