"""Every image watermark of the lab on the second held-out set (:mod:`backend.watermark.photos`), per photo.

Two reports, read by the rewatermark and attribution pages beside their first held-out set (scikit-image's held-out
photos and procedural images):

- ``assets/rewatermark_photos_eval.json``: every re-watermarking victim (:data:`backend.watermark.rewatermark.core.MODELS`:
  SRW, the plain twin, the ablation variants, TinyHiDDeN, dwtDctSvd, dwtDct) through
  :func:`backend.watermark.rewatermark.core.evaluate` with :data:`REWATERMARK_CFG`: clean bit accuracy, PSNR/SSIM,
  five self-re-watermarking rounds, the cross-model attacker, PGD overwrite (learned models) and the distortions of
  :data:`ATTACKS`, per photo, with the worst photos named; plus :data:`ONE_FRAME`, SRW reading each photo as a single
  32 x 32 frame instead of the shipped 4 x 4 frames (the cause of its lost bits on this set, kept beside the fix);
- ``assets/attribution_photos_eval.json``: the attribution page's evaluation
  (:func:`backend.watermark.attribution.evaluation.evaluate`, 10^4 users of the shipped A-BSTA pool) of TinyHiDDeN,
  dwtDctSvd and dwtDct after the claims' attacks (none, JPEG-50, half resize, 25 % crop), per photo.

Each report holds the development and the test split separately (the test split is the final evaluation; the
development split served the diagnosis and model selection).

    python -m backend.watermark.photo_eval [--splits dev,test] [--what rewatermark,attribution] [--models srw,plain]

``--models`` takes model ids and :data:`ONE_FRAME`; by default every available model and :data:`ONE_FRAME`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from backend.runtime import ASSETS, Progress, provenance, sub_progress

REWATERMARK_OUT = ASSETS / "rewatermark_photos_eval.json"
ATTRIBUTION_OUT = ASSETS / "attribution_photos_eval.json"
ATTACKS = ("jpeg:75", "jpeg:50", "resize:0.5", "crop:0.25", "noise:8", "blur:5")
ATTRIBUTION_ATTACKS = ("none", "jpeg:50", "resize:0.5", "crop:0.25")
ATTRIBUTION_BACKENDS = ("tinyhidden", "dwtDctSvd", "dwtDct")
SEED = 0
#: The report's row of SRW with one frame per photo (``tiles=1``); the rows named by a model id use the shipped tiling.
ONE_FRAME = "srw (one frame)"


def rewatermark_cfg(model: str, seed: int = SEED):
    """The evaluation settings of one re-watermarking victim: five rounds, PGD at eps 0.03 and 0.06 (50 iterations;
    TinyHiDDeN, whose decoder searches scales and phases, 0.03 with 20 iterations), the distortions of
    :data:`ATTACKS`; no matched-PSNR pass. :data:`ONE_FRAME` is srw's with one frame per photo."""
    from backend.watermark.rewatermark import core as R

    if model == ONE_FRAME:
        return dataclasses.replace(rewatermark_cfg("srw", seed), tiles=1)
    if model == "tinyhidden":
        return R.EvalConfig(rounds=5, pgd_eps=(0.03,), pgd_iters=20, distortions=ATTACKS, matched_psnr=None,
                            seed=seed)
    return R.EvalConfig(rounds=5, pgd_eps=(0.03, 0.06), pgd_iters=50, distortions=ATTACKS, matched_psnr=None,
                        seed=seed)


def evaluate_rewatermark(models: list[str], split: str, seed: int = SEED,
                         progress: Progress | None = None) -> dict[str, dict]:
    """``{model: result}`` of :func:`backend.watermark.rewatermark.core.evaluate` on one split of the photo set, with
    ``per_image`` rows named by photo id."""
    from backend.watermark import photos as P
    from backend.watermark.rewatermark import core as R

    images = P.load_split(split)
    out = {}
    for k, m in enumerate(models):
        t = time.perf_counter()
        res = R.evaluate(["srw" if m == ONE_FRAME else m], list(images.values()), rewatermark_cfg(m, seed),
                         progress=sub_progress(progress, k / len(models), (k + 1) / len(models)), names=list(images))
        out[m] = next(iter(res.values()))
        out[m]["seconds"] = round(time.perf_counter() - t, 1)
    return out


def evaluate_attribution(backends: list[str], split: str, seed: int = SEED) -> dict[str, dict]:
    """``{backend: result}`` of the attribution evaluation on one split (rows per attack with per-photo bit
    accuracies in photo-id order)."""
    from backend.watermark import photos as P
    from backend.watermark.attribution import bounds as A
    from backend.watermark.attribution import evaluation as E

    images = P.load_split(split)
    out = {}
    for b in backends:
        cfg = E.EvalConfig(backend=b, attacks=ATTRIBUTION_ATTACKS, num_users=10_000, strategy="absta", seed=seed)
        pool = None
        if b == "tinyhidden":
            pool = A.UserPool(E.cached_pool("absta", 10_000, n=64, seed=seed, depth=4), 64)
        res = E.evaluate(list(images.values()), cfg, pool=pool).to_dict()
        from backend.watermark.registry import get_method

        be = get_method(b)
        res["images"] = [i for i, im in images.items() if min(im.shape[:2]) >= be.min_side
                         and im.shape[0] * im.shape[1] >= (65536 if be.min_side >= 256 else 0)]
        out[b] = res
    return out


def _merge(path: Path, split: str, part: dict, command: str, seed: int, note: str) -> None:
    from backend.watermark import photos as P

    old = json.loads(path.read_text()) if path.is_file() else {}
    splits = old.get("splits", {})
    splits.setdefault(split, {}).update(part)
    report = {"set": "photos", "note": note, "splits": {s: splits[s] for s in ("dev", "test", "all") if s in splits},
              "photos": {s: P.split(s) for s in splits}, "command": command,
              "provenance": provenance(seed, [], splits=sorted(splits))}
    path.write_text(json.dumps(report, indent=1, default=float) + "\n")


REWATERMARK_NOTE = ("Second held-out set: real photographs from Debian wallpaper packages, scikit-learn and matplotlib "
                    "(256-1600 px, JPEG and PNG; assets/photos/SOURCES.json), never used in training; 'dev' served the "
                    "diagnosis and model selection, 'test' is the final evaluation. Messages A and B random per photo "
                    "(seed 0); five self-re-watermarking rounds with B; cross-model attacker TinyHiDDeN (plain for "
                    "TinyHiDDeN); PGD overwrite 50 iterations at eps 0.03 and 0.06 ([-1, 1] units; TinyHiDDeN: 0.03, "
                    "20 iterations; classical backends: none); distortions at full resolution; the classical "
                    "backends need 256 px per side, so smaller photos are left out of their rows (column images).")
ATTRIBUTION_NOTE = ("Second held-out set (see the rewatermark report): each photo watermarked for a random user of the "
                    "shipped 10^4-user A-BSTA pool (TinyHiDDeN; the classical backends use their own pool), decoded "
                    "after each attack through the real image pipeline; 'dev' and 'test' as split by "
                    "backend.watermark.photos.")


def main(argv: list[str] | None = None) -> int:
    from backend.watermark.rewatermark import core as R

    ap = argparse.ArgumentParser(prog="python -m backend.watermark.photo_eval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", default="dev,test")
    ap.add_argument("--what", default="rewatermark,attribution")
    ap.add_argument("--models", default=None, help="re-watermarking victims (default: every available one)")
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    what = {w.strip() for w in args.what.split(",")}
    models = [m.strip() for m in args.models.split(",")] if args.models else R.available_models()
    if not args.models and "srw" in models:
        models.append(ONE_FRAME)
    for split in [s.strip() for s in args.splits.split(",")]:
        if "rewatermark" in what:
            for m in models:
                res = evaluate_rewatermark([m], split, args.seed)
                print(split, m, f"{res[m]['seconds']:.0f}s", {k: res[m][k] for k in ("clean_acc", "clean_acc_min",
                                                                                   "psnr", "self_acc_a", "worst")},
                      flush=True)
                _merge(REWATERMARK_OUT, split, res, f"python -m backend.watermark.photo_eval --what rewatermark "
                       f"--seed {args.seed}", args.seed, REWATERMARK_NOTE)
        if "attribution" in what:
            res = evaluate_attribution(list(ATTRIBUTION_BACKENDS), split, args.seed)
            for b, r in res.items():
                print(split, b, {row["attack"]: (round(row["bit_accuracy"], 3), round(row["attribution_accuracy"], 3))
                                 for row in r["rows"]}, flush=True)
            _merge(ATTRIBUTION_OUT, split, res, f"python -m backend.watermark.photo_eval --what attribution "
                   f"--seed {args.seed}", args.seed, ATTRIBUTION_NOTE)
    return 0


def table_rows(report: dict, split: str) -> list[dict]:
    """Flat per-model rows of a rewatermark photo report's split (for the page's table and CSV)."""
    rows = []
    for m, d in report.get("splits", {}).get(split, {}).items():
        pgd = d.get("pgd", {})
        rows.append({"model": m, "photos": d["n_images"], "clean acc": d["clean_acc"],
                     "clean acc (worst photo)": d.get("clean_acc_min"), "PSNR (dB)": d["psnr"], "SSIM": d["ssim"],
                     "self round 1: A": d["self_acc_a"][0], "self round 5: A": d["self_acc_a"][-1],
                     "self round 5: B": d["self_acc_b"][-1], "cross: A": d.get("cross", {}).get("acc_a"),
                     **{f"PGD {e}: A": a for e, a in zip(pgd.get("eps", []), pgd.get("acc_a", []), strict=True)},
                     **{f"PGD {e}: B": b for e, b in zip(pgd.get("eps", []), pgd.get("acc_b", []), strict=True)},
                     **d["distortions"], "worst photos": ", ".join(d.get("worst", []))})
    return rows


def worst_photo_rows(report: dict, split: str) -> list[dict]:
    """Per model, its worst photos with their clean accuracy, PSNR and accuracy on A after the last round."""
    rows = []
    for m, d in report.get("splits", {}).get(split, {}).items():
        by = {r["image"]: r for r in d.get("per_image", [])}
        for name in d.get("worst", []):
            r = by[name]
            rows.append({"model": m, "photo": name, "size": r["size"], "clean acc": r["clean_acc"],
                         "PSNR (dB)": r["psnr"], "self round 5: A": r["self_acc_a"][-1] if r["self_acc_a"] else None,
                         **{k: v for k, v in r["distortions"].items()}})
    return rows


SET1 = "set 1: scikit-image held-out photos + procedural"
SET2 = "set 2: real photographs ({split} split)"


def rewatermark_side_by_side(first: dict[str, dict] | None, report: dict | None, split: str = "test") -> list[dict]:
    """Rows (model x held-out set) of the numbers both sets share: ``first`` = the ``models`` of
    ``rewatermark_eval.json`` (set 1), ``report`` = ``rewatermark_photos_eval.json`` (set 2, one split)."""
    sets = [(SET1, first or {})]
    if report:
        sets.append((SET2.format(split=split), report.get("splits", {}).get(split, {})))
    rows = []
    for m in dict.fromkeys([m for _, d in sets for m in d]):
        for name, d in sets:
            if m not in d:
                continue
            r, pgd = d[m], d[m].get("pgd", {})
            rows.append({"model": m, "held-out set": name, "images": r["n_images"], "clean acc": r["clean_acc"],
                         "clean acc (worst image)": r.get("clean_acc_min"), "PSNR (dB)": r["psnr"],
                         "self round 1: A": r["self_acc_a"][0], "self round 5: A": r["self_acc_a"][-1],
                         "self round 5: B": r["self_acc_b"][-1], "cross: A": r.get("cross", {}).get("acc_a"),
                         **{f"PGD {e}: A": a for e, a in zip(pgd.get("eps", []), pgd.get("acc_a", []), strict=True)
                            if e in (0.03, 0.06)},
                         **{k: r["distortions"].get(k) for k in ("jpeg:75", "blur:5", "noise:8")}})
    return rows


def attribution_side_by_side(first: dict | None, report: dict | None, split: str = "test") -> list[dict]:
    """Rows (backend x attack x held-out set): bit and attribution accuracy after the claims' attacks; ``first`` =
    ``attribution_eval.json`` (set 1, A-BSTA rows of its sweeps at the same strengths), ``report`` =
    ``attribution_photos_eval.json`` (set 2, one split)."""
    want = {"jpeg:50": ("jpeg", 50.0), "resize:0.5": ("resize", 0.5), "crop:0.25": ("crop", 0.25)}
    rows = []
    for sweep in (first or {}).get("sweeps", []):
        for spec, (attack, strength) in want.items():
            if sweep["attack"] != attack:
                continue
            for r in sweep["rows"]:
                if r["strategy"] == "absta" and r["strength"] == strength:
                    rows.append({"backend": r["backend"], "attack": spec, "held-out set": SET1,
                                 "bit accuracy": r["bit_accuracy"], "attribution accuracy": r["attribution_accuracy"],
                                 "PSNR (dB)": r["psnr"], "worst image bit accuracy": None})
    for b, d in ((report or {}).get("splits", {}).get(split, {})).items():
        for r in d["rows"]:
            rows.append({"backend": b, "attack": r["attack"], "held-out set": SET2.format(split=split),
                         "bit accuracy": r["bit_accuracy"], "attribution accuracy": r["attribution_accuracy"],
                         "PSNR (dB)": d["psnr_mean"], "worst image bit accuracy": min(r["per_image_bit_accuracy"]),
                         "worst photo": d["images"][int(min(range(len(r["per_image_bit_accuracy"])),
                                                            key=r["per_image_bit_accuracy"].__getitem__))]})
    return sorted(rows, key=lambda r: (r["backend"], r["attack"], r["held-out set"]))


if __name__ == "__main__":
    raise SystemExit(main())

