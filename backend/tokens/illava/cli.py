"""CLI group ``illava`` (iLLaVA token merging in the tiny VLM, arXiv 2412.06263), a thin layer over
:mod:`backend.tokens.illava.jobs`:

- ``python -m backend illava run --image FILE --method illava --layers 5,6,7,8 --r 32 --question "..." --json``
  answers a question about an image with and without reduction and prints the answers, the tokens per layer, the
  multiply-adds and the prefill times (``--scene SEED`` uses a procedural scene instead of a file; ``--keep 0.33``
  builds the method's default plan for that budget instead of ``--layers/--r/--llm-layers/--llm-r``);
- ``python -m backend illava eval --method illava --keep 0.33 --scenes 100 --json``: accuracy on held-out scenes;
- ``python -m backend illava sweep --json``: accuracy / tokens kept / prefill time of every method at several budgets;
- ``python -m backend illava diagnose --scenes 36 --out assets/illava_diagnosis.json --json``: why the encoder stage
  costs the counting answers (ranking signal per block, object tokens kept per merge, counting controls).

Handlers return their result (and text lines); :mod:`backend.cli_common` prints it (JSON with ``--json``) and turns
bad input into exit code 2. Method names are checked by the registry of :mod:`backend.tokens.illava.merging` (an
unknown one lists the valid names); models load only inside the handlers.
"""

from __future__ import annotations

import argparse
from typing import Any

from ...cli_common import Output, add_action, add_group, int_list

GROUP = "illava"
DEFAULT_SCENE = 1_000_000  # the first held-out scene
DEFAULT_QUESTION = "What color is the circle?"  # for an image file without --question


def plan_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~backend.tokens.illava.jobs.PlanConfig` fields of the arguments: ``--keep`` (the method's default
    placement for that budget) or explicit ``--layers/--r/--llm-layers/--llm-r``."""
    common = {"method": args.method, "m": args.m, "n_recycled": args.n_recycled, "seed": args.seed}
    if getattr(args, "keep", None) is not None:
        return {**common, "keep": args.keep, "split": args.split}
    return {**common, "vit_layers": args.layers, "r": args.r, "llm_layers": args.llm_layers, "llm_r": args.llm_r}


def _load_image(args: argparse.Namespace) -> tuple[Any, str, list[str]]:
    from ...io.registry import read_path

    notes: list[str] = []
    if args.image:
        img = read_path("image", args.image)
        if max(img.size) > 224:
            notes.append(f"the {img.size[0]}x{img.size[1]} image is downscaled to 224x224 for the encoder")
        return img, args.image, notes
    from .scenes import make_scene

    scene = make_scene(args.scene)
    return scene.pil(), f"scene {args.scene}", notes


def cmd_run(args: argparse.Namespace) -> Output:
    """Answer one question with and without reduction; print tokens per layer and prefill times."""
    from ...runtime import provenance
    from .jobs import AnalysisConfig, run_analysis
    from .projector import PROJECTOR_FILE

    config = AnalysisConfig(**plan_settings(args), repeats=args.repeats, projector=args.projector)
    image, source, notes = _load_image(args)
    question = args.question
    if question is None:
        from .scenes import make_scene

        question = DEFAULT_QUESTION if args.image else make_scene(args.scene).questions[0].text
    weights = args.projector or PROJECTOR_FILE
    res = run_analysis(image, question, config)
    out = {"image": source, "notes": notes, **res.summary(),
           "provenance": provenance(args.seed, [weights], command="run", repeats=args.repeats)}
    lines = [
        f"image: {source}; question: {question}",
        f"plan: {res.label}",
        f"answer unreduced: {res.full.answer} {dict(zip(res.full.candidates, res.full.probs, strict=True))}",
        f"answer reduced:   {res.reduced.answer} {dict(zip(res.reduced.candidates, res.reduced.probs, strict=True))}",
        f"encoder tokens per block: {res.vit_tokens}",
        f"LLM image tokens per layer: {res.llm_image_tokens}",
        f"multiply-adds: {res.costs_full.total / 1e9:.2f} G -> {res.costs_reduced.total / 1e9:.2f} G",
        f"prefill: {res.time_full_s:.3f} s -> {res.time_reduced_s:.3f} s "
        f"(x{res.time_full_s / max(res.time_reduced_s, 1e-9):.2f})",
        *notes,
    ]
    return Output(out, lines)


def cmd_eval(args: argparse.Namespace) -> Output:
    """Accuracy of one plan (and of the unreduced model) on held-out scene questions."""
    from ...runtime import provenance
    from .jobs import EvalConfig, run_eval
    from .projector import PROJECTOR_FILE

    config = EvalConfig(**plan_settings(args), scenes=args.scenes, start=args.start, positions=args.positions,
                        projector=args.projector)
    weights = args.projector or PROJECTOR_FILE
    out = run_eval(config)
    base, res = out["unreduced"], out["reduced"]
    out["provenance"] = provenance(args.seed, [weights], command="eval", scenes=args.scenes, start=args.start,
                                   positions=args.positions)
    lines = [f"{args.scenes} held-out scenes, {base['n_questions']} questions (chance {base['chance']:.3f})",
             f"unreduced: accuracy {base['accuracy']:.3f} {base['per_type']}",
             f"{res['label']}: accuracy {res['accuracy']:.3f} {res['per_type']}, {res['tokens_to_llm']} tokens "
             "reach the LLM"]
    return Output(out, lines)


def cmd_sweep(args: argparse.Namespace) -> Output:
    """Accuracy vs tokens kept vs prefill time for every method."""
    from ...runtime import provenance
    from .jobs import SweepConfig, run_sweep
    from .projector import PROJECTOR_FILE

    settings = {"methods": tuple(args.methods)} if args.methods else {}
    config = SweepConfig(scenes=args.scenes, keeps=tuple(args.keeps), repeats=args.repeats, start=args.start,
                         **settings)
    out = run_sweep(config)
    out["provenance"] = provenance(0, [PROJECTOR_FILE], command="sweep", scenes=args.scenes, keeps=list(args.keeps),
                                   methods=list(config.methods))
    if args.out:
        from ...runtime import write_json_atomic

        write_json_atomic(args.out, out)
    lines = [f"{'method':<13} {'keep':>5} {'to LLM':>6} {'acc':>6} {'GMACs':>6} {'prefill s':>9} {'speedup':>7}"]
    for r in out["rows"]:
        lines.append(f"{r['method']:<13} {r['keep']:>5.2f} {r['tokens_to_llm']:>6} {r['accuracy']:>6.3f} "
                     f"{r['macs'] / 1e9:>6.2f} {r['prefill_s']:>9.3f} {r['speedup']:>7.2f}")
    return Output(out, lines)


def cmd_diagnose(args: argparse.Namespace) -> Output:
    """Ranking signal, object tokens kept and counting controls of iLLaVA's encoder stage (see ``diagnose``)."""
    from ...runtime import provenance
    from .jobs import DiagnoseConfig, run_diagnose
    from .projector import PROJECTOR_FILE

    config = DiagnoseConfig(scenes=args.scenes, keep=args.keep, start=args.start, projector=args.projector)
    weights = args.projector or PROJECTOR_FILE
    out = run_diagnose(config)
    out["provenance"] = provenance(0, [weights], command="diagnose", scenes=args.scenes, keep=args.keep,
                                   start=args.start)
    if args.out:
        from ...runtime import write_json_atomic

        write_json_atomic(args.out, out)
    lines = [f"{out['scenes']} held-out scenes, plan {out['plan']}"]
    lines += [f"{name} merge block {i}: object patches kept {d['object_kept']:.2f} (interior "
              f"{d.get('object_interior_kept', float('nan')):.2f}, edge {d.get('object_edge_kept', float('nan')):.2f}),"
              f" background {d['background_kept']:.2f}"
              for name, blocks in out["kept_per_merge_layer"].items() for i, d in blocks.items()]
    lines.append(f"object share reaching the LM / image: {out['object_share_reaching_lm_over_image']}")
    lines += [f"counting, {k}: {v['accuracy']:.3f} (over {v['overcounts']}, under {v['undercounts']} of "
              f"{v['questions']})" for k, v in out["counting"].items()]
    lines += [f"counting, unreduced, object radius x{k}: {v['accuracy']:.3f} (over {v['overcounts']}, under "
              f"{v['undercounts']})" for k, v in out["counting_unreduced_by_object_scale"].items()]
    return Output(out, lines)


def _plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default="illava",
                   help="reduction method (illava = illava_code; an unknown name lists the valid ones)")
    p.add_argument("--keep", type=float, default=None,
                   help="keep this fraction of the 256 image tokens with the method's default placement")
    p.add_argument("--split", type=float, default=0.75, help="with --keep: share of the reduction in the encoder")
    p.add_argument("--layers", type=int_list, default=(3, 4, 5, 6), help="encoder merge blocks, e.g. 5,6,7,8")
    p.add_argument("--r", type=int, default=32, help="tokens removed per encoder merge block")
    p.add_argument("--llm-layers", type=int_list, default=(), help="LLM reduction layers K (before 0-based layer K)")
    p.add_argument("--llm-r", type=int, default=0, help="image tokens removed per LLM reduction layer")
    p.add_argument("--m", type=int, default=5, help="illava_paper: tokens absorbed per recycled token")
    p.add_argument("--n-recycled", type=int, default=None,
                   help="illava_paper: recycling tokens (default max(1, round(0.05 x kept)), as the released code)")
    p.add_argument("--seed", type=int, default=0)


def _projector_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--projector", default=None,
                   help="projector file to use instead of the shipped one (e.g. a training run's --out)")


def add_parser(subparsers: Any) -> argparse._SubParsersAction:
    """Add the ``illava`` group to ``python -m backend``."""
    sub = add_group(subparsers, GROUP, "iLLaVA token merging in a tiny VLM vs ToMe and FastV", description=__doc__)
    run = add_action(sub, "run", cmd_run, "answer a question about an image with and without reduction")
    run.add_argument("--image", default=None, help="PNG/JPEG/WebP file (default: a procedural scene)")
    run.add_argument("--scene", type=int, default=DEFAULT_SCENE, help="scene seed when no --image is given")
    run.add_argument("--question", default=None)
    run.add_argument("--repeats", type=int, default=3, help="timed repeats (median)")
    _projector_arg(run)
    _plan_args(run)
    ev = add_action(sub, "eval", cmd_eval, "accuracy of one plan on held-out scenes")
    ev.add_argument("--scenes", type=int, default=100)
    ev.add_argument("--start", type=int, default=0, help="first held-out scene index")
    _projector_arg(ev)
    _plan_args(ev)
    ev.add_argument("--positions", choices=("sequence", "source"), default="sequence",
                    help="LM position ids of the reduced image tokens: consecutive (as the released code feeds them) "
                         "or, as a diagnostic, each token at its own patch's unreduced position")
    sw = add_action(sub, "sweep", cmd_sweep, "accuracy / tokens / prefill time of every method at several budgets")
    sw.add_argument("--scenes", type=int, default=40)
    sw.add_argument("--start", type=int, default=0)
    sw.add_argument("--keeps", type=float, nargs="+", default=[2 / 3, 1 / 3, 2 / 9])
    sw.add_argument("--methods", nargs="+", default=None,
                    help="reduction methods (default: every method of kind ours or baseline)")
    sw.add_argument("--repeats", type=int, default=3)
    sw.add_argument("--out", default=None, help="also write the JSON to this file (e.g. assets/illava_sweep.json)")
    dg = add_action(sub, "diagnose", cmd_diagnose,
                    "why the encoder merges cost the counting answers (signals and controls)")
    dg.add_argument("--scenes", type=int, default=36)
    dg.add_argument("--start", type=int, default=0)
    dg.add_argument("--keep", type=float, default=1 / 3, help="share of the 256 image tokens kept")
    _projector_arg(dg)
    dg.add_argument("--out", default=None, help="also write the JSON to this file (e.g. assets/illava_diagnosis.json)")
    return sub
