"""``python -m backend slowness <action>``: the temporal-slowness encoders (2 x 2 ablation, shipped seeds).

Actions:
  probe       linear-probe accuracies (instance, category, background) and swap scores per arm and seed
  sweep       probe accuracy of the central + temporal encoders over crop sides and DeltaT (seed 0)
  stream      one stream clip: gaze points from saliency, crops, sampled positive pairs (no pictures in the JSON)
  neighbours  nearest neighbours of an image among scene photos and real photographs, per arm

Examples::

    python -m backend slowness probe --model central-temporal --json
    python -m backend slowness probe --seeds 0,1,2 --train-per-instance 20 --test-per-instance 12 --json
    python -m backend slowness stream --clip 3 --crop 24 --delta-t 6 --json
    python -m backend slowness neighbours --image photo.jpg --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def _ints(text: str) -> tuple[int, ...]:
    from ...errors import InputError

    try:
        return tuple(int(v) for v in str(text).split(",") if v.strip())
    except ValueError:
        raise InputError(f"--seeds must be whole numbers separated by commas, e.g. 0,1,2; got {text!r}.") from None


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``slowness`` group to ``python -m backend``."""
    acts = add_group(subparsers, "slowness",
                     "temporal slowness in central vision: gaze crops + time-contrastive SSL vs full frames")
    p = add_action(acts, "probe", cmd_probe, "probe accuracies per arm and seed (shipped encoders)")
    p.add_argument("--model", default="", help="arm names separated by commas (default: all four)")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--train-per-instance", type=int, default=10)
    p.add_argument("--test-per-instance", type=int, default=6)
    p.add_argument("--c", type=float, default=1.0, help="the probes' inverse L2 strength")
    s = add_action(acts, "sweep", cmd_sweep, "probe accuracy over crop sides and DeltaT (central + temporal, seed 0)")
    s.add_argument("--train-per-instance", type=int, default=10)
    s.add_argument("--test-per-instance", type=int, default=6)
    c = add_action(acts, "stream", cmd_stream, "one clip: saliency gaze, crops and sampled positive pairs")
    c.add_argument("--clip", type=int, default=0)
    c.add_argument("--crop", type=int, default=32, help="crop side in pixels of the 64-pixel frame (16-64)")
    c.add_argument("--delta-t", type=int, default=3, help="largest frame offset of a temporal pair (1-12)")
    c.add_argument("--pairs", type=int, default=4)
    c.add_argument("--seed", type=int, default=0)
    n = add_action(acts, "neighbours", cmd_neighbours, "nearest neighbours of an image for each arm's encoder")
    n.add_argument("--image", type=Path, default=None, help="an image file (default: scikit-image's chelsea)")
    n.add_argument("--k", type=int, default=5)
    n.add_argument("--seed", type=int, default=0)
    return acts


def cmd_probe(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import ProbeConfig, run_probe

    res = run_probe(ProbeConfig(models=args.model, seeds=_ints(args.seeds),
                                train_per_instance=args.train_per_instance,
                                test_per_instance=args.test_per_instance, c=args.c))
    out = res.to_dict()
    out["provenance"] = provenance(None, **res.config)
    lines = [f"{res.photos['train']} training and {res.photos['test']} test photos of {res.photos['instances']} "
             "instances"]
    lines += [f"{res.labels[r['arm']]:28} seed {r['seed']}  instance {r['instance']:.3f}  category {r['category']:.3f}"
              f"  background {r['background']:.3f}  fg swap {r['fg_swap']:.3f}  bg swap {r['bg_swap']:.3f}"
              for r in res.rows]
    if "instance" in res.paired:
        g = res.paired["instance"]
        lines.append(f"instance gain, central + temporal minus full frame: {g['gain']:+.3f} "
                     f"[{g['low']:+.3f}, {g['high']:+.3f}] over {g['n']} seeds")
    return Output(out, lines=lines)


def cmd_sweep(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import SweepConfig, run_sweep

    res = run_sweep(SweepConfig(train_per_instance=args.train_per_instance, test_per_instance=args.test_per_instance))
    out = res.to_dict()
    out["provenance"] = provenance(0, **res.config)
    lines = [f"crop {r['crop']:3d}: instance {r['instance']:.3f} category {r['category']:.3f} "
             f"background {r['background']:.3f}" for r in res.crop]
    lines += [f"DeltaT {r['delta_t']:2d}: instance {r['instance']:.3f} category {r['category']:.3f} "
              f"background {r['background']:.3f}" for r in res.delta_t]
    return Output(out, lines=lines)


def cmd_stream(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import StreamConfig, run_stream

    res = run_stream(StreamConfig(clip=args.clip, crop=args.crop, delta_t=args.delta_t, pairs=args.pairs,
                                  seed=args.seed))
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, clip=args.clip, crop=args.crop, delta_t=args.delta_t)
    lines = [f"clip {args.clip}: {res.labels['instance']} on {res.labels['background']}; gaze on the object in "
             f"{res.gaze_on_object:.0%} of the frames"]
    lines += [f"{res.arm_labels[a]:28} pairs (t, t'): {fr}" for a, fr in res.pair_frames.items()]
    return Output(out, lines=lines)


def cmd_neighbours(args: argparse.Namespace) -> Output:
    import numpy as np

    from ...runtime import provenance
    from .jobs import NeighbourConfig, run_neighbours

    if args.image is None:
        from ...watermark.datasets import load_photo

        image, name = load_photo("chelsea"), "chelsea"
    else:
        from ...io.registry import read_path

        image, name = np.asarray(read_path("image", args.image).convert("RGB")), str(args.image.name)
    res = run_neighbours(image, NeighbourConfig(k=args.k, seed=args.seed))
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, image=name, k=args.k)
    lines = [f"{res.labels[a]:28} " + "; ".join(f"{n['label']} ({n['similarity']:.2f})" for n in ns)
             for a, ns in res.neighbours.items()]
    return Output(out, lines=lines)
