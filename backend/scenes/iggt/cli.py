"""``python -m backend iggt <action>``: instance masks matched across 2-4 views, from the miniature IGGT network's
features and from the baselines.

Actions:
  segment    one scene: rendered views of a split (with ground truth: T-mIoU / T-SR per segmenter) or 2-4 photos
             (``--views A.png B.png`` or ``--zip views.zip``); masks and cross-view matches per view
  evaluate   held-out scenes x shipped seeds x segmenters: mean T-mIoU / T-SR, pairs within the margin

Examples::

    python -m backend iggt segment --views A.png B.png --json
    python -m backend iggt segment --split heldout_shape --scene 0 --n-views 2 --json
    python -m backend iggt evaluate --scenes 6 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, int_list


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``iggt`` group to ``python -m backend``."""
    acts = add_group(subparsers, "iggt", "IGGT: instance masks consistent across views from learned per-pixel "
                                         "features (joint HDBSCAN) vs per-view clustering matched by the Hungarian "
                                         "algorithm")
    s = add_action(acts, "segment", cmd_segment, "masks and cross-view matches of one scene, every segmenter")
    s.add_argument("--views", type=Path, nargs="+", default=None, help="2-4 photos of one scene (PNG, JPEG, WebP)")
    s.add_argument("--zip", type=Path, default=None, help="a ZIP of 2-4 photos of one scene")
    s.add_argument("--split", default="heldout_shape",
                   help="rendered scene split: train, val, heldout_shape (cylinders), heldout_texture (checker), "
                        "heldout_colour (all objects one colour)")
    s.add_argument("--scene", type=int, default=0, help="scene index in the split")
    s.add_argument("--n-views", type=int, default=2, help="rendered views (2-4)")
    s.add_argument("--seed", type=int, default=0, help="which shipped network (0-2)")
    s.add_argument("--methods", default="", help="segmenters, comma-separated (default all)")
    s.add_argument("--min-cluster-size", type=int, default=20)
    e = add_action(acts, "evaluate", cmd_evaluate, "T-mIoU / T-SR of every segmenter over held-out scenes and seeds")
    e.add_argument("--splits", default="heldout_shape,heldout_texture,heldout_colour")
    e.add_argument("--scenes", type=int, default=6)
    e.add_argument("--n-views", type=int, default=3)
    e.add_argument("--seeds", type=int_list, default="0,1,2")
    return acts


def cmd_segment(args: argparse.Namespace) -> Output:
    from ...errors import InputError
    from ...io.registry import read_path
    from ...runtime import provenance
    from .inputs import check_view_count
    from .jobs import PHOTOS, SegmentConfig, run_segment

    photos, names = None, ()
    if args.views and args.zip:
        raise InputError("Give the photos either with --views or with --zip, not both.")
    if args.views:
        check_view_count(len(args.views))
        photos = [read_path("image", p) for p in args.views]
        names = tuple(Path(p).name for p in args.views)
    elif args.zip:
        got = read_path("image_views", args.zip)
        photos, names = [im for _, im in got], tuple(n for n, _ in got)
    split = PHOTOS if photos else args.split
    cfg = SegmentConfig(split=split, scene=args.scene, views=len(photos) if photos else args.n_views,
                        seed=args.seed, methods=args.methods, min_cluster_size=args.min_cluster_size)
    res = run_segment(cfg, photos=photos, photo_names=names)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, files=[str(p) for p in args.views] if args.views else None,
                                   zip=str(args.zip) if args.zip else None,
                                   **{k: v for k, v in res.config.items() if k != "seed"})
    lines = [f"{res.source}: {', '.join(res.names)}"] + res.notes
    for m, label in res.labels_of.items():
        met = res.metrics.get(m)
        tracks = [len(v) for v in res.tracks[m]]
        lines.append(f"{label:40} tracks per view {tracks}" + (
            f"  T-mIoU {met['t_miou']:.3f}  T-SR {met['t_sr'] if met['t_sr'] is None else round(met['t_sr'], 3)}"
            if met else ""))
    return Output(out, lines=lines)


def cmd_evaluate(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import EvalConfig, run_eval

    cfg = EvalConfig(splits=tuple(s for s in args.splits.split(",") if s.strip()), scenes=args.scenes,
                     views=args.n_views, seeds=args.seeds)
    res = run_eval(cfg)
    out = res.to_dict()
    out["provenance"] = provenance(None, **{k: v for k, v in out["config"].items()})
    lines = []
    for split, rows in res.summary.items():
        lines.append(split)
        lines += [f"  {res.labels[m]:40} T-mIoU {r['t_miou']:.3f}  T-SR {r['t_sr']}" for m, r in rows.items()]
    return Output(out, lines=lines)
