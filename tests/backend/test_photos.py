"""The second held-out photo set (:mod:`backend.watermark.photos`): its build and split rules, its disjointness from
every training source, and that no training script reads it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from backend.watermark import photos as P

ROOT = Path(__file__).resolve().parents[2]


def test_at_least_30_distinct_photographs_with_sources_and_licences() -> None:
    rows = json.loads((P.FOLDER / "SOURCES.json").read_text())["photos"]
    assert len(rows) == len(P.SOURCES) >= 30
    assert {r["id"] for r in rows} == set(P.ids())
    for r in rows:
        assert r["author"] and r["licence"] and r["package"] and r["path"]
        assert (P.FOLDER / r["file"]).is_file()
    digests = {hashlib.sha256(P.load(i).tobytes()).hexdigest() for i in P.ids()}
    assert len(digests) == len(rows)
    assert len({r["package"] for r in rows}) >= 4


def test_sizes_and_formats_vary_within_the_stated_limits() -> None:
    rows = json.loads((P.FOLDER / "SOURCES.json").read_text())["photos"]
    longs = [max(r["width"], r["height"]) for r in rows]
    assert min(longs) >= 256 and max(r["width"] * r["height"] for r in rows) <= 2_000_000
    assert len(set(longs)) >= 5
    suffixes = {Path(r["file"]).suffix for r in rows}
    assert {".jpg", ".png"} <= suffixes
    for i in P.ids()[:5]:
        img = P.load(i)
        assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3


def test_split_rule_is_the_written_hash_rule() -> None:
    dev, test, ci = P.split("dev"), P.split("test"), P.split("ci")
    assert sorted(dev + test) == P.ids() and not set(dev) & set(test)
    for i in P.ids():
        assert (i in dev) == (int(hashlib.sha256(i.encode()).hexdigest(), 16) % 3 == 0)
    assert len(ci) == P.CI_TEST_COUNT >= 10 and set(ci) <= set(test)
    assert 0.2 <= len(dev) / len(P.ids()) <= 0.4
    rows = {r["id"]: r for r in json.loads((P.FOLDER / "SOURCES.json").read_text())["photos"]}
    assert all(rows[i]["split"] == "dev" for i in dev) and all(rows[i]["split"] == "test" for i in test)


def test_disjoint_from_the_training_and_first_heldout_photos() -> None:
    from backend.watermark.datasets import HELDOUT_PHOTOS, TRAIN_PHOTOS, load_photo

    shapes = {load_photo(n).shape for n in TRAIN_PHOTOS + HELDOUT_PHOTOS}
    ours = {P.load(i).shape for i in P.ids()}
    # no photo of the set is a copy of a scikit-image photo (same size would be the tell)
    assert not shapes & ours or all(
        not np.array_equal(P.load(i), load_photo(n))
        for i in P.ids()
        for n in TRAIN_PHOTOS + HELDOUT_PHOTOS
        if P.load(i).shape == load_photo(n).shape
    )
    assert not {s.package for s in P.SOURCES} & {"scikit-image"}


def test_no_training_script_reads_the_set() -> None:
    for path in sorted((ROOT / "backend" / "train").glob("*.py")):
        text = path.read_text()
        assert "watermark.photos" not in text and "photos import" not in text, path.name
        assert "assets/photos" not in text and '"photos"' not in text, path.name
