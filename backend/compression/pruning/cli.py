"""CLI group ``pruning``: ``python -m backend pruning <action> ... [--json]``.

- ``run``: prune a Llama-family causal LM (default: the embedded SmolLM2-135M-Instruct) and report perplexity,
  parameters and speed against the dense model; ``--out DIR`` writes the pruned model as a standard Hugging Face
  folder (fp16 safetensors) plus ``pruning_recipe.json``. Example:
  ``python -m backend pruning run --ratio 0.2 --score variance --compensation rotation --calib FILE --out DIR --json``
- ``lab``: one layer's calibration vs held-out sublayer errors for every compensation as N_calib grows.
- ``sweep``: one score over prune ratios x compensations (the MiniLM encoder by default, ``--target lm`` for SmolLM2),
  one case per cell, ``--executor ray`` for one Ray task per cell with the same numbers. Example:
  ``python -m backend pruning sweep --ratios 0.2,0.3 --compensation none --compensation rotation --executor ray --json``
- ``methods``: the scores, compensations and named methods.

Every action but ``methods`` builds the config of a job of :mod:`.jobs` and runs it (``run``: ``run_prune``,
``encoder``: ``run_encoder``, ``lab``: ``run_lab``, ``sweep``: ``run_sweep``).

Every bad input (empty or non-UTF-8 text, too little text for the calibration size, a model that is not a Llama-family
causal LM, an output folder that is not empty) is reported before anything is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.cli_common import Output, add_action, add_group, int_list


def add_parser(subparsers: Any) -> argparse._SubParsersAction:
    from .pruning import COMPENSATIONS, METHODS, SCORES

    sub = add_group(subparsers, "pruning", "RCPU structured pruning of an LLM (rotation-constrained compensation)")

    r = add_action(sub, "run", cmd_run, "prune a causal LM, measure it, optionally write it to --out")
    r.add_argument("--model", default=None, help="local folder or cached hub name (default: embedded SmolLM2-135M)")
    r.add_argument("--method", default=None, help=f"named preset ({', '.join(METHODS)}); overrides "
                   "--score/--compensation")
    r.add_argument("--ratio", type=float, default=0.2, help="fraction of heads and MLP channels removed per layer")
    r.add_argument("--score", default="variance", help=" | ".join(SCORES))
    r.add_argument("--compensation", default="rotation", help=" | ".join(COMPENSATIONS))
    r.add_argument("--lam", type=float, default=1e-4, help="ridge lambda of the ls compensation")
    r.add_argument("--input-stat", default="l2", choices=["l2", "mean_abs"],
                   help="input magnitude in the scores: ||X_j|| (paper) or mean |X_j| (released code)")
    r.add_argument("--n-calib", type=int, default=128, help="calibration segments of --seqlen tokens")
    r.add_argument("--seqlen", type=int, default=128)
    r.add_argument("--n-eval", type=int, default=32, help="held-out windows for perplexity")
    r.add_argument("--calib", default=None, help="UTF-8 text file for calibration (default: built-in corpus)")
    r.add_argument("--eval", default=None, help="UTF-8 text file for held-out perplexity (default: built-in)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--prompt", default="", help="also generate greedily from this prompt with both models")
    r.add_argument("--max-new-tokens", type=int, default=32)
    r.add_argument("--out", default=None, help="write the pruned model here (must not exist or be empty)")
    r.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])

    lab = add_action(sub, "lab", cmd_lab, "one layer: calibration vs held-out error of each compensation as N grows")
    lab.add_argument("--model", default=None)
    lab.add_argument("--layer", type=int, default=15)
    lab.add_argument("--ratio", type=float, default=0.3)
    lab.add_argument("--score", default="variance")
    lab.add_argument("--lam", type=float, default=1e-4)
    lab.add_argument("--n-list", default="8,16,32,64", help="comma-separated calibration sizes (segments)")
    lab.add_argument("--n-held", type=int, default=16)
    lab.add_argument("--seed", type=int, default=0)

    e = add_action(sub, "encoder", cmd_encoder, "prune the MiniLM sentence encoder; report embedding cosine to the "
                   "dense model")
    e.add_argument("--model", default=None, help="local folder or cached hub name of a BERT-style encoder")
    e.add_argument("--ratio", type=float, default=0.3)
    e.add_argument("--score", default="variance")
    e.add_argument("--compensation", default="rotation")
    e.add_argument("--n-calib", type=int, default=32, help="calibration paragraphs")
    e.add_argument("--n-eval", type=int, default=64, help="held-out paragraphs")
    e.add_argument("--text", default=None, help="UTF-8 text file (default: built-in corpus), split 70 / 30")
    e.add_argument("--seed", type=int, default=0)

    sw = add_action(sub, "sweep", cmd_sweep, "one score over prune ratios x compensations (encoder or LM), locally "
                    "or on Ray")
    sw.add_argument("--target", default="encoder", choices=["encoder", "lm"],
                    help="encoder: MiniLM, embedding cosine; lm: SmolLM2, held-out perplexity")
    sw.add_argument("--model", default=None, help="local folder or cached hub name (default: the embedded model)")
    sw.add_argument("--ratios", default="0.1,0.2,0.3", help="comma-separated prune ratios")
    sw.add_argument("--compensation", action="append", default=None,
                    help=f"repeatable: {' | '.join(COMPENSATIONS)} (default: all)")
    sw.add_argument("--score", default="variance", help=" | ".join(SCORES))
    sw.add_argument("--n-calib", type=int, default=32, help="calibration paragraphs (encoder) or segments (lm)")
    sw.add_argument("--n-eval", type=int, default=32, help="held-out paragraphs (encoder) or windows (lm)")
    sw.add_argument("--text", default=None, help="UTF-8 text file (default: built-in corpus)")
    sw.add_argument("--seed", type=int, default=0, help="calibration sample of every case")
    sw.add_argument("--executor", choices=["local", "ray"], default="local",
                    help="ray: one task per case on $METHOD_LAB_RAY_ADDRESS (unset: a Ray instance here)")

    add_action(sub, "methods", cmd_methods, "list the scores, compensations and named methods")
    return sub


def _read_text(path: str | None, what: str) -> str | None:
    from backend.io.registry import read_path

    if path is None:
        return None
    return read_path("text_corpus", path)


def _check_out(out: str | None) -> None:
    from backend.errors import InputError

    if out is None:
        return
    p = Path(out).expanduser().resolve()
    if p.exists() and (not p.is_dir() or any(p.iterdir())):
        raise InputError(f"The output folder {p} exists and is not empty; choose a new folder.")
    if not p.parent.is_dir():
        raise InputError(f"The parent folder {p.parent} of --out does not exist.")


def cmd_run(args: argparse.Namespace) -> Output:
    from . import lmtools
    from .jobs import RunConfig, Texts, load_lm, run_prune
    from .pruning import PruneConfig, config_for

    calib_text = _read_text(args.calib, "calibration")
    eval_text = _read_text(args.eval, "evaluation")
    _check_out(args.out)
    common = dict(ratio=args.ratio, lam=args.lam, input_stat=args.input_stat, n_calib=args.n_calib,
                  seqlen=args.seqlen, seed=args.seed)
    cfg = (config_for(args.method, **common) if args.method else
           PruneConfig(score=args.score, compensation=args.compensation, **common))
    config = RunConfig(cfg, n_eval=args.n_eval, prompt=args.prompt, max_new_tokens=args.max_new_tokens,
                       model=args.model, keep_model=args.out is not None)
    texts = Texts(calib=calib_text, heldout=eval_text,
                  calib_name=f"the calibration file {Path(args.calib).name}" if args.calib else "",
                  heldout_name=f"the evaluation file {Path(args.eval).name}" if args.eval else "")
    lm = load_lm(args.model)
    result = run_prune(texts, config, lm)
    model, res = result.pop("_model", None), result.pop("_result", None)
    result["settings"]["model_arg"] = args.model
    if args.out is not None:
        result["saved"] = lmtools.save_pruned(model, lm.tokenizer, res, args.out,
                                              {**result["recipe"], "provenance": result["provenance"]}, args.dtype)
    d, p = result["dense"], result["pruned"]
    short = (f"{cfg.score} + {cfg.compensation} at ratio {cfg.ratio:g}: perplexity {d['perplexity']:.2f} -> "
             f"{p['perplexity']:.2f}; parameters {d['params_stored']:,} -> {p['params_effective']:,} effective "
             f"({p['params_stored']:,} stored); prune {result['prune_s']:.1f} s"
             + (f"; written to {result['saved']['folder']}" if args.out else ""))
    return Output(result, lines=[short])


def cmd_lab(args: argparse.Namespace) -> Output:
    from backend.errors import InputError
    from backend.runtime import provenance

    from .jobs import LabConfig, run_lab

    try:
        n_list = tuple(int_list(args.n_list))
    except argparse.ArgumentTypeError:
        raise InputError("--n-list must be comma-separated integers, e.g. 8,16,32,64.") from None
    config = LabConfig(layer=args.layer, ratio=args.ratio, score=args.score, lam=args.lam, n_list=n_list,
                       n_held=args.n_held, seed=args.seed, model=args.model)
    lab = run_lab(None, config)
    rows = lab["rows"]
    result = {"layer": args.layer, "ratio": args.ratio, "score": args.score, "lam": args.lam, "rows": rows,
              "source": lab["source"],
              "provenance": provenance(args.seed, (), layer=args.layer, ratio=args.ratio, score=args.score,
                                       lam=args.lam, n_list=list(config.n_list), n_held=args.n_held)}
    lines = [f"{r['sublayer']:4} N={r['n_calib']:4} {r['compensation']:15} calib {r['calib_err']:.4f} "
             f"held-out {r['heldout_err']:.4f}" for r in rows]
    return Output(result, lines=lines)


def cmd_encoder(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import EncoderConfig, run_encoder
    from .pruning import PruneConfig, pairing

    text = _read_text(args.text, "text")
    cfg = PruneConfig(ratio=args.ratio, score=args.score, compensation=args.compensation, n_calib=args.n_calib,
                      seed=args.seed, propagate=pairing(args.compensation).propagate)
    result = run_encoder(text, EncoderConfig(cfg, n_eval=args.n_eval, model=args.model))
    result["provenance"] = provenance(args.seed, (), model=args.model, ratio=args.ratio, score=args.score,
                                      compensation=args.compensation, n_calib=args.n_calib, n_eval=args.n_eval)
    return Output(result, lines=[f"{args.score} + {args.compensation} at ratio {args.ratio:g}: mean embedding cosine "
                                 f"{result['cosine_mean']:.4f} (min {result['cosine_min']:.4f}); parameters "
                                 f"{result['params_dense']:,} -> {result['params_pruned']:,}"])


def cmd_sweep(args: argparse.Namespace) -> Output:
    from backend.errors import InputError
    from backend.runtime import provenance

    from .jobs import SweepConfig, run_sweep

    try:
        ratios = tuple(float(r) for r in args.ratios.split(",") if r.strip())
    except ValueError:
        raise InputError("--ratios must be comma-separated numbers, e.g. 0.1,0.2,0.3.") from None
    config = SweepConfig(target=args.target, ratios=ratios, compensations=tuple(args.compensation or ()),
                         score=args.score, n_calib=args.n_calib, n_eval=args.n_eval, model=args.model,
                         seed=args.seed, executor=args.executor)
    text = _read_text(args.text, "text")
    res = run_sweep(text, config)
    metric = res["metric"]
    result = {**res, "provenance": provenance(args.seed, (), target=args.target, model=args.model,
                                              ratios=list(ratios), compensations=list(config.compensations),
                                              score=args.score, n_calib=args.n_calib, n_eval=args.n_eval,
                                              executor=args.executor)}
    return Output(result, lines=[f"ratio {r['ratio']:g} {r['compensation']:15} {metric} {r[metric]:.4f}"
                                 for r in res["rows"]])


def cmd_methods(args: argparse.Namespace) -> Output:  # noqa: ARG001
    from .pruning import COMPENSATIONS, METHODS, SCORES

    result = {"scores": SCORES.labels(), "compensations": COMPENSATIONS.labels(),
              "methods": {k: {"score": m.score, "compensation": m.compensation, "propagate": m.propagate,
                              "label": m.label} for k, m in METHODS.items()}}
    return Output(result, lines=[f"{k}: {v['label']}" for k, v in result["methods"].items()])
