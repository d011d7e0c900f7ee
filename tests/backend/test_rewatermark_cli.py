"""The ``rewatermark`` CLI group through argparse: run, evaluate, bad input."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from PIL import Image

from backend.watermark.rewatermark import cli as rewatermark_cli


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m backend")
    rewatermark_cli.add_parser(p.add_subparsers(dest="group", required=True))
    return p


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    args = _parser().parse_args(argv)
    rc = args.func(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("imgs")
    rng = np.random.default_rng(0)
    for i in range(2):
        Image.fromarray((rng.random((64, 72, 3)) * 255).astype(np.uint8)).save(d / f"im{i}.png")
    (d / "notes.png").write_bytes(b"not an image at all")
    return d


def test_run_json(image_dir, tmp_path, capsys) -> None:
    rc, out, _ = _run(["rewatermark", "run", str(image_dir / "im0.png"), "--model", "srw", "--rounds", "3",
                       "--pgd-eps", "0.03", "--out", str(tmp_path), "--json"], capsys)
    assert rc == 0
    res = json.loads(out)
    assert res["model"] == "srw" and len(res["self_acc_a"]) == 3 and len(res["self_acc_b"]) == 3
    assert {"acc_a", "attacker_acc_b", "attacker"} <= set(res["cross"])
    assert {"acc_a", "acc_b", "eps"} <= set(res["pgd"])
    assert res["provenance"]["seed"] == 0 and "assets/rewatermark_srw.safetensors" in res["provenance"][
        "assets_sha256"]
    assert (tmp_path / "srw_rw3.png").is_file()


def test_evaluate_json(image_dir, capsys) -> None:
    # the folder also holds a non-image named .png: a clear error
    rc, _, err = _run(["rewatermark", "evaluate", "--images", str(image_dir), "--json"], capsys)
    assert rc == 2 and "notes.png" in err
    (image_dir / "notes.png").unlink()
    rc, out, _ = _run(["rewatermark", "evaluate", "--images", str(image_dir), "--models", "plain,srw", "--limit",
                       "2", "--rounds", "2", "--pgd-iters", "2", "--json"], capsys)
    assert rc == 0
    res = json.loads(out)
    assert set(res["models"]) == {"plain", "srw"} and res["n_images"] == 2
    assert len(res["models"]["srw"]["self_acc_a"]) == 2


def test_bad_input(image_dir, tmp_path, capsys) -> None:
    rc, out, err = _run(["rewatermark", "run", str(tmp_path / "missing.png"), "--json"], capsys)
    assert rc == 2 and "No such file" in err and "No such file" in json.loads(out)["error"]
    Image.fromarray(np.zeros((20, 20, 3), np.uint8)).save(tmp_path / "tiny.png")
    rc, _, err = _run(["rewatermark", "run", str(tmp_path / "tiny.png"), "--json"], capsys)
    assert rc == 2 and "32 px" in err
    rc, _, err = _run(["rewatermark", "run", str(image_dir / "im0.png"), "--model", "nope"], capsys)
    assert rc == 2 and "Valid names" in err
    rc, _, err = _run(["rewatermark", "run", str(image_dir / "im0.png"), "--model", "dwtDct"], capsys)
    assert rc == 2 and "256" in err
    rc, _, err = _run(["rewatermark", "evaluate", "--images", str(tmp_path / "nowhere")], capsys)
    assert rc == 2 and "not a folder" in err
