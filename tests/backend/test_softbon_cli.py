"""``python -m backend softbon ...`` through argparse: JSON output of both actions."""

from __future__ import annotations

import argparse
import json

import pytest

from backend.alignment.softbon import cli


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="group"))
    args = parser.parse_args(argv)
    assert args.func(args) == 0
    return json.loads(capsys.readouterr().out)


def test_sweep_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["softbon", "sweep", "--ns", "2,32", "--betas", "0,4,16", "--json"], capsys)
    assert out["method"] == "softbon" and out["ns"] == [2, 32] and out["betas"][-1] == "inf"
    assert out["provenance"]["seed"] == 0 and "numpy" in out["provenance"]["packages"]
    assert len(out["expected_true_reward"]) == 2 and len(out["kl"][0]) == 4
    assert out["best_beta_per_n"][1] != "inf"  # 3% hackable items by default: an interior beta wins at N = 32
    assert set(out["regret_terms_at_max_n"]["beta=4"]) >= {"regret", "bound", "eps_beta"}


def test_text_mode_with_a_fake_encoder(tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    import numpy as np

    from backend.models import text

    class Fake:
        source = "fake"

        def embed(self, xs):
            import torch

            v = torch.tensor([[len(x), x.count("Paris") + 0.1] for x in xs], dtype=torch.float32)
            return torch.nn.functional.normalize(v, dim=-1)

    monkeypatch.setattr(text, "load_text_encoder", lambda name=None: Fake())
    f = tmp_path / "c.txt"
    f.write_text("Paris is the capital.\n\nIt is Lyon.\n\nParis, on the Seine.\n", encoding="utf-8")
    out = run(["softbon", "text", "--candidates", str(f), "--reference", "Paris", "--ns", "1,3", "--json"], capsys)
    assert out["encoder"] == "fake" and len(out["candidates"]) == 3
    probs = out["selection_probability_at_max_n"]["beta=inf"]
    assert abs(sum(probs) - 1) < 1e-5 and np.argmax(probs) == int(np.argmax(out["proxy_cosine"]))
