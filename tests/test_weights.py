"""Shipped weights: every ``assets/*.safetensors`` has the one metadata layout of :mod:`backend.weights`, its tensors
are the recorded ones (``tests/weights_tensors.json``: per-tensor sha256 of dtype, shape and bytes), and a missing or
altered file gives a clear :class:`~backend.weights.WeightsError`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from backend import weights

ROOT = Path(__file__).resolve().parents[1]
RECORDED = json.loads((ROOT / "tests" / "weights_tensors.json").read_text())
SHIPPED = sorted(p.name for p in (ROOT / "assets").glob("*.safetensors"))


def test_every_shipped_file_is_recorded() -> None:
    assert sorted(RECORDED) == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_tensors_are_the_recorded_ones(name: str) -> None:
    assert weights.tensor_hashes(ROOT / "assets" / name) == RECORDED[name]


@pytest.mark.parametrize("name", SHIPPED)
def test_one_metadata_layout(name: str) -> None:
    from safetensors import safe_open

    with safe_open(str(ROOT / "assets" / name), framework="pt") as f:
        header = f.metadata() or {}
    assert set(header) == {weights.META_KEY}, f"{name}: metadata keys {sorted(header)}"
    meta = weights.read_meta(ROOT / "assets" / name)
    assert meta.config, f"{name}: no config"
    assert meta.command.startswith(("python -m backend.train", "OMP_NUM_THREADS=1 python -m backend.train")), meta.command
    assert "/tmp" not in json.dumps(json.loads(header[weights.META_KEY]))


def test_round_trip_and_errors(tmp_path: Path) -> None:
    import torch

    m = torch.nn.Linear(3, 2)
    p = weights.save(tmp_path / "w.safetensors", m, config={"d": 3}, command="python -m backend.train demo",
                     data_seeds={"train": [0, 9]}, quality={"acc": 0.5, "command": "pytest x"})
    m2 = torch.nn.Linear(3, 2)
    meta = weights.load_into(m2, p)
    assert meta.config == {"d": 3} and meta.data_seeds == {"train": [0, 9]} and meta.quality["acc"] == 0.5
    assert torch.equal(m.weight, m2.weight)
    with pytest.raises(weights.WeightsError, match="python -m backend.train demo"):
        weights.load(tmp_path / "missing.safetensors", made_by="python -m backend.train demo")


def test_altered_shipped_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = weights.manifest_rows()
    name = next((n for n in SHIPPED if n in rows), None)
    if name is None:
        pytest.skip("no shipped weights listed in assets/manifest.json")
    fake_assets = tmp_path / "assets"
    fake_assets.mkdir()
    shutil.copy(ROOT / "assets" / name, fake_assets / name)
    with open(fake_assets / name, "ab") as f:
        f.write(b" ")
    monkeypatch.setattr(weights, "ASSETS", fake_assets)
    with pytest.raises(weights.WeightsError, match="sha256"):
        weights.check(fake_assets / name)
