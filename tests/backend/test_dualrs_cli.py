"""``python -m backend dualrs certify ...`` through argparse: the JSON report and the error path."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest

from backend.robustness.dualrs import cli, configs, jobs  # jobs binds the real TrainConfig before the patch below


def test_certify_json(capsys: pytest.CaptureFixture[str], monkeypatch, tmp_path) -> None:
    quick = dataclasses.make_dataclass(
        "QuickTrain", [("expert_steps", int, 80), ("estimator_steps", int, 80)], bases=(configs.TrainConfig,),
        frozen=True,
    )
    monkeypatch.setattr(configs, "TrainConfig", quick)  # the CLI builds its TrainConfig from configs when it runs
    assert jobs.TrainConfig is not quick
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="group"))
    args = parser.parse_args(
        [
            "dualrs",
            "certify",
            "--data",
            "moons",
            "--n",
            "300",
            "--max-test",
            "30",
            "--sigmas",
            "0.25,1",
            "--finetune-steps",
            "20",
            "--json",
        ]
    )
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "dualrs" and [r["method"] for r in out["table"]] == ["sigma=0.25", "sigma=1", "dual"]
    assert out["certify"]["n"] == 300 and out["provenance"]["seed"] == 0
    assert len(out["curves"]["dual"]) == len(out["curves"]["radius"])
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y,label\n1,2,a\n", encoding="utf-8")
    args = parser.parse_args(["dualrs", "certify", "--csv", str(bad), "--json"])
    from backend.errors import InputError

    with pytest.raises(InputError, match="at least 20"):
        args.func.handler(args)
    capsys.readouterr()
    assert args.func(args) == 2 and "at least 20" in json.loads(capsys.readouterr().out)["error"]
