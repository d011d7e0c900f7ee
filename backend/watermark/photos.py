"""The second held-out set of the image watermarks: 40 real photographs from other sources than scikit-image.

Every image watermark of the lab is trained on scikit-image's training photos and procedural images
(:mod:`backend.watermark.datasets`), and its first held-out set is scikit-image's held-out photos. This set comes from
other packages, so it probes what a user's first own photograph probes: camera noise, JPEG history, colour, sizes.

Sources (all free licences; each photo's author and licence in :data:`SOURCES` and ``assets/photos/SOURCES.json``):

- Debian ``mate-backgrounds`` 1.26.0-1 (``nature/``, GPL-2+), ``plasma-workspace-wallpapers`` 5.27.5-2 (the
  photographs among its wallpapers, LGPL-3 per wallpaper metadata), ``lomiri-wallpapers-16.04`` / ``-20.04``
  (CC-BY-4.0, CC-BY-SA-3.0/4.0, CC0-1.0);
- scikit-learn's two sample photos (``china.jpg``, ``flower.jpg``, CC-BY-2.0) and matplotlib's ``grace_hopper.jpg``
  (a US Navy photograph, public domain), copied unchanged.

Only photographs were taken (no renderings, paintings or abstract art). Build rule (fixed, by the sorted photo id):
photo ``i`` is resized (Lanczos) to a long side of ``LONG_SIDES[i % 6]`` px (256 to 1600, at most 2 MP) unless it is
already at most that size (then its bytes are copied unchanged, with their own JPEG compression); photos with
``i % 4 == 1`` and a long side of at most 768 px are stored as PNG, the others as JPEG at quality
``JPEG_QUALITY[i % 3]``.

Split rule (fixed before any model was evaluated on the set): a photo is in the development set (diagnosis, model
selection) iff ``int(sha256(id), 16) % 3 == 0``; all others form the test set, untouched until the final evaluation.
The ci tier's subset is the :data:`CI_TEST_COUNT` test photos with the smallest ``sha256(id)``.

No training script reads this set: ``tests/backend/test_photos.py`` checks that no module under ``backend/train``
imports this module or names its folder.

    python -m backend.watermark.photos --build   # apt-get download the packages, extract, write assets/photos/

Images are returned as ``(H, W, 3)`` uint8 RGB arrays.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backend.runtime import ASSETS

FOLDER = ASSETS / "photos"
LONG_SIDES = (256, 384, 512, 768, 1024, 1600)
JPEG_QUALITY = (92, 85, 75)
CI_TEST_COUNT = 10
DEBIAN_PACKAGES = ("mate-backgrounds", "plasma-workspace-wallpapers", "lomiri-wallpapers-16.04", "lomiri-wallpapers-20.04")


@dataclass(frozen=True)
class Source:
    id: str
    package: str  # Debian package, or the pip package that ships it
    path: str  # inside the package
    author: str
    licence: str


def _mate(name: str, author: str) -> Source:
    return Source(f"mate-{name.lower()}", "mate-backgrounds", f"usr/share/backgrounds/mate/nature/{name}.jpg", author,
                  "GPL-2+")


def _plasma(name: str, author: str) -> Source:
    return Source(f"plasma-{name.lower()}", "plasma-workspace-wallpapers",
                  f"usr/share/wallpapers/{name}/contents/images/1920x1200.jpg", author, "LGPL-3")


def _lomiri(name: str, author: str, licence: str, release: str = "16.04") -> Source:
    return Source(f"lomiri-{name.split('_by_')[0].lower()}", f"lomiri-wallpapers-{release}",
                  f"usr/share/backgrounds/{name}.jpg", author, licence)


SOURCES: tuple[Source, ...] = (
    _mate("Aqua", "Charles Barbin"), _mate("Blinds", "Lennart Poettering, Andrea Cimitan"),
    _mate("Dune", "Marco Cogoni, Hylke Bons"), _mate("FreshFlower", "Jens Ansorg"),
    _mate("Garden", "Charles Barbin"), _mate("GreenMeadow", "Timothy Schellhase, Lapo Calamandrei"),
    _mate("LadyBird", "Charles Barbin"), _mate("RainDrops", "blackcombwhistler07"),
    _mate("Storm", "Sergey Nazarov"), _mate("TwoWings", "Charles Barbin, Hylke Bons"),
    _mate("Wood", "Jean-Francois Fortin Tam"), _mate("YellowFlower", "Charles Barbin"),
    _plasma("BytheWater", "Maciej Wiklo"), _plasma("ColdRipple", "Risto Saukonpaa"),
    _plasma("DarkestHour", "Risto Saukonpaa"), _plasma("EveningGlow", "Ian Hex"),
    _plasma("FallenLeaf", "Martin Klapetek"), _plasma("Grey", "Sigi Sagi"), _plasma("Kite", "Risto Saukonpaa"),
    _plasma("OneStandsOut", "Risto Saukonpaa"), _plasma("Path", "Risto Saukonpaa"),
    _plasma("summer_1am", "Risto Saukonpaa"),
    Source("plasma-colorfulcups", "plasma-workspace-wallpapers",
           "usr/share/wallpapers/ColorfulCups/contents/images/2560x1600.jpg", "Dmitri Popov", "LGPL-3"),
    _lomiri("Bridge_by_Sander_Klootwijk", "Sander Klootwijk", "CC-BY-SA-4.0"),
    _lomiri("Dragonfly_by_Bolly", "Bolly", "CC-BY-SA-4.0"),
    _lomiri("Picture_0B_by_freespace", "Trevor Freespace", "CC-BY-4.0"),
    _lomiri("Picture_1A_by_freespace", "Trevor Freespace", "CC-BY-4.0"),
    _lomiri("Wine_by_Jakkub_Mede", "Jakub Mede", "CC-BY-4.0"),
    _lomiri("aitzgorri_by_Aitzol_Berasategi", "Aitzol Berasategi", "CC-BY-4.0"),
    _lomiri("free_by_Peter_Nerlich", "Peter Nerlich", "CC-BY-SA-4.0"),
    _lomiri("friends_by_Aitzol_Berasategi", "Aitzol Berasategi", "CC-BY-4.0"),
    _lomiri("greentock_by_Peter_Nerlich", "Peter Nerlich", "CC-BY-SA-4.0"),
    _lomiri("life_by_Aitzol_Berasategi", "Aitzol Berasategi", "CC-BY-4.0"),
    _lomiri("picosdeeuropa_by_Aitzol_Berasategi", "Aitzol Berasategi", "CC-BY-4.0"),
    _lomiri("seeding_by_Clements_Engelhardt", "Clemens Engelhardt", "CC0-1.0"),
    _lomiri("sunset_by_Aitzol_Berasategi", "Aitzol Berasategi", "CC-BY-4.0"),
    _lomiri("Kleiber_by_Lukas_Baubkus", "Lukas Baubkus", "CC-BY-SA-3.0", release="20.04"),
    Source("sklearn-china", "scikit-learn", "sklearn/datasets/images/china.jpg", "danielbuechele (Flickr)", "CC-BY-2.0"),
    Source("sklearn-flower", "scikit-learn", "sklearn/datasets/images/flower.jpg", "vultilion (Flickr)", "CC-BY-2.0"),
    Source("matplotlib-grace-hopper", "matplotlib", "matplotlib/mpl-data/sample_data/grace_hopper.jpg",
           "US Navy", "public domain"),
)


def _hash(photo_id: str) -> int:
    return int(hashlib.sha256(photo_id.encode()).hexdigest(), 16)


def ids() -> list[str]:
    """Every photo id, sorted (the build rule's order)."""
    return sorted(s.id for s in SOURCES)


def split(name: str) -> list[str]:
    """``"dev"``, ``"test"``, ``"ci"`` (the ci tier's fixed test subset) or ``"all"``: photo ids, sorted."""
    dev = [i for i in ids() if _hash(i) % 3 == 0]
    test = [i for i in ids() if i not in dev]
    if name == "dev":
        return dev
    if name == "test":
        return test
    if name == "ci":
        return sorted(sorted(test, key=_hash)[:CI_TEST_COUNT])
    if name == "all":
        return ids()
    raise ValueError(f"unknown split {name!r}; valid: dev, test, ci, all")


def _records() -> dict[str, dict]:
    path = FOLDER / "SOURCES.json"
    if not path.is_file():
        from backend.errors import InputError

        raise InputError("The held-out photographs are missing from assets/photos; run python -m backend.watermark.photos --build.")
    return {r["id"]: r for r in json.loads(path.read_text())["photos"]}


def file_of(photo_id: str) -> Path:
    """The shipped file of one photo."""
    return FOLDER / _records()[photo_id]["file"]


def load(photo_id: str) -> np.ndarray:
    """One photo as ``(H, W, 3)`` uint8 RGB (decoded from its shipped JPEG or PNG)."""
    from PIL import Image

    with Image.open(file_of(photo_id)) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8).copy()


def load_split(name: str) -> dict[str, np.ndarray]:
    """``{id: image}`` for a split (see :func:`split`)."""
    return {i: load(i) for i in split(name)}


def describe(photo_id: str) -> dict:
    """The photo's row of ``SOURCES.json``: id, file, package, path, author, licence, size, format, split."""
    return dict(_records()[photo_id])


# ----------------------------------------------------------------------------------------------------------- build
def _extract(tmp: Path) -> Path:
    root = tmp / "root"
    root.mkdir()
    subprocess.run(["apt-get", "download", *DEBIAN_PACKAGES], cwd=tmp, check=True, capture_output=True)
    for deb in sorted(tmp.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root


def _source_file(src: Source, root: Path) -> Path:
    if src.package in ("scikit-learn", "matplotlib"):
        import importlib.util

        top = src.path.split("/")[0]
        spec = importlib.util.find_spec(top)
        assert spec is not None and spec.origin is not None
        return Path(spec.origin).parent.parent / src.path
    return root / src.path


def build(root: Path, out: Path = FOLDER) -> list[dict]:
    """Write every photo of :data:`SOURCES` by the build rule into ``out`` plus ``SOURCES.json``; returns the rows."""
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    by_id = {s.id: s for s in SOURCES}
    dev = set(split("dev"))
    rows = []
    for i, pid in enumerate(ids()):
        src = by_id[pid]
        path = _source_file(src, root)
        with Image.open(path) as im:
            im = im.convert("RGB")
            long_side = LONG_SIDES[i % len(LONG_SIDES)]
            if max(im.size) <= long_side:
                name = f"{pid}{path.suffix.lower()}"
                shutil.copyfile(path, out / name)
                size, kind = im.size, "copied"
            else:
                scale = long_side / max(im.size)
                size = (max(1, round(im.size[0] * scale)), max(1, round(im.size[1] * scale)))
                small = im.resize(size, Image.LANCZOS)
                if i % 4 == 1 and long_side <= 768:
                    name, kind = f"{pid}.png", "png"
                    small.save(out / name, optimize=True)
                else:
                    q = JPEG_QUALITY[i % len(JPEG_QUALITY)]
                    name, kind = f"{pid}.jpg", f"jpeg q{q}"
                    small.save(out / name, quality=q)
        rows.append({"id": pid, "file": name, "package": src.package, "path": src.path, "author": src.author,
                     "licence": src.licence, "width": size[0], "height": size[1], "stored": kind,
                     "split": "dev" if pid in dev else "test"})
    (out / "SOURCES.json").write_text(json.dumps({"photos": rows}, indent=1) + "\n")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend.watermark.photos", description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="store_true", help="download the Debian packages and write assets/photos/")
    ap.add_argument("--root", type=Path, help="a folder where the packages are already extracted (dpkg-deb -x)")
    args = ap.parse_args(argv)
    if not args.build:
        for pid in ids():
            print(pid, "dev" if pid in split("dev") else "test")
        return 0
    if args.root:
        rows = build(args.root)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            rows = build(_extract(Path(tmp)))
    print(f"wrote {len(rows)} photos to {FOLDER}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
