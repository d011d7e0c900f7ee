"""``python -m backend jigsaw <action>``: jigsaw puzzles solved by Plackett-Luce policies trained with GRPO on a graded
or a binary reward, and the tiny VLM before and after jigsaw post-training.

Actions:
  solve      cut an image into a 2 x 2 or 3 x 3 grid, shuffle it, and let each shipped policy answer (per-tile
             correctness and rewards); --answer scores your own answer against the models
  order      clip ordering: shuffle the frames of a held-out clip (or of a pan over --image) and let each shipped
             clip policy put them in time order
  evaluate   every shipped policy re-scored on held-out puzzles (or clips); graded minus binary solve rate over seeds
  vlm        the tiny VLM's jigsaw solve rate and scene-question accuracy before and after post-training

Examples::

    python -m backend jigsaw solve --image photo.png --grid 3 --json
    python -m backend jigsaw solve --preset "Held-out scene 3" --grid 2 --answer "2, 4, 1, 3" --json
    python -m backend jigsaw order --source photo_pans --index 2 --json
    python -m backend jigsaw evaluate --source photos --json
    python -m backend jigsaw evaluate --source clips_val --json
    python -m backend jigsaw vlm --recheck-scenes 5 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, int_list


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``jigsaw`` group to ``python -m backend``."""
    acts = add_group(subparsers, "jigsaw", "jigsaw puzzles solved by policies trained with a graded vs a binary "
                                           "reward; the tiny VLM before and after jigsaw post-training")
    s = add_action(acts, "solve", cmd_solve, "shuffle an image's tiles and let each shipped policy order them")
    s.add_argument("--image", type=Path, default=None, help="an image file (PNG, JPEG, WebP); centre-cropped, 168 px")
    s.add_argument("--preset", default=None, help="a preset image instead of --image")
    s.add_argument("--grid", type=int, default=3, help="tiles per side: 2 or 3")
    s.add_argument("--seed", type=int, default=0, help="which shipped seed's policies (0-2)")
    s.add_argument("--shuffle", type=int, default=0, help="seed of the shuffle")
    s.add_argument("--answer", default="", help="your answer to race the models, e.g. '3, 1, 4, 2'")
    o = add_action(acts, "order", cmd_order, "shuffle a clip's frames and let each shipped clip policy order them")
    o.add_argument("--source", default="clips_val", help="clips_val (held-out procedural clips) or photo_pans")
    o.add_argument("--index", type=int, default=0, help="which clip of the source (with --image: seeds the pan)")
    o.add_argument("--image", type=Path, default=None, help="pan over this image instead (PNG, JPEG, WebP)")
    o.add_argument("--seed", type=int, default=0, help="which shipped seed's policies (0-2)")
    o.add_argument("--shuffle", type=int, default=0, help="seed of the shuffle")
    o.add_argument("--answer", default="", help="your answer to race the models, e.g. '3, 1, 4, 2'")
    e = add_action(acts, "evaluate", cmd_evaluate, "re-score every shipped policy on held-out puzzles")
    e.add_argument("--source", default="scenes_val",
                   help="scenes_val (held-out scenes) or photos; clips_val or photo_pans for clip ordering")
    e.add_argument("--count", type=int, default=None, help="images of the source (default all)")
    e.add_argument("--grids", type=int_list, default="2,3")
    e.add_argument("--seeds", type=int_list, default="0,1,2")
    v = add_action(acts, "vlm", cmd_vlm, "the tiny VLM before and after jigsaw post-training")
    v.add_argument("--recheck-scenes", type=int, default=0, help="re-answer the questions of k held-out scenes")
    return acts


def _answer_lines(res, order: str) -> list[str]:  # noqa: ANN001 - a SolveResult
    lines = [f"truth ({order}): {', '.join(map(str, res.truth))}"]
    lines += [f"{a['label']:24} {', '.join(map(str, a['answer']))}  correct {sum(a['correct'])}/{len(a['correct'])}"
              f"  reward {a['reward_graded']:.3f}" for a in res.answers]
    if res.race:
        lines.append(f"your answer: valid {res.race['valid']}, exact {res.race['exact']}, "
                     f"reward {res.race['reward_graded']:.3f}")
    return lines


def cmd_solve(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from ...runtime import provenance
    from .inputs import PRESETS
    from .jobs import SolveConfig, preset_image, run_solve

    cfg = SolveConfig(grid=args.grid, seed=args.seed, shuffle=args.shuffle, answer=args.answer or "")
    image = read_path("image", args.image) if args.image is not None else preset_image(args.preset or next(iter(PRESETS)))
    res = run_solve(image, cfg)
    out = res.summary()
    out["provenance"] = provenance(args.seed, image=str(args.image) if args.image else (args.preset or next(iter(PRESETS))),
                                   grid=cfg.grid, shuffle=cfg.shuffle)
    return Output(out, lines=_answer_lines(res, "raster order"))


def cmd_order(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from ...runtime import provenance
    from .jobs import OrderConfig, run_order

    cfg = OrderConfig(source=args.source, index=args.index, seed=args.seed, shuffle=args.shuffle,
                      answer=args.answer or "")
    image = read_path("image", args.image) if args.image is not None else None
    res = run_order(cfg, image)
    out = res.summary()
    out["provenance"] = provenance(args.seed, source=res.config["source"], index=cfg.index, shuffle=cfg.shuffle,
                                   image=str(args.image) if args.image else None)
    return Output(out, lines=_answer_lines(res, "time order"))


def cmd_evaluate(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import EvalConfig, run_evaluate

    res = run_evaluate(EvalConfig(source=args.source, count=args.count, grids=args.grids,
                                  seeds=args.seeds))
    out = res.to_dict()
    out["provenance"] = provenance(None, **res.config)
    name = {g: (f"{g} x {g}" if g.isdigit() else g) for g in res.means}
    lines = [f"{name[g]} {res.labels[rw]:24} solve {m['solve']:.3f}  tile acc {m['tile_acc']:.3f}"
             for g, d in res.means.items() for rw, m in d.items()]
    lines += [f"{name[g]} graded minus binary: {p['gain']:+.3f} [{p['low']:+.3f}, {p['high']:+.3f}] over {p['n']} "
              f"seeds" for g, p in res.paired.items()]
    return Output(out, lines=lines)


def cmd_vlm(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import VLMConfig, run_vlm

    res = run_vlm(VLMConfig(recheck_scenes=args.recheck_scenes))
    out = res.to_dict()
    out["provenance"] = provenance(None, **res.config)
    r = res.recorded
    lines = [f"jigsaw solve before {r['jigsaw_solve_before']} after {r['jigsaw_solve_after']}",
             f"questions ({r['qa_questions']}): {r['qa_accuracy_before']:.3f} -> {r['qa_accuracy_after']:.3f} "
             f"change {r['qa_change']:+.3f} {r['qa_change_ci']}"]
    return Output(out, lines=lines)
