"""``python -m backend mcd <action>``: MCD any-subset channel imputation vs its baselines.

Actions:
  impute    impute the unobserved channels of a stack (an NPZ file or a preset) from the observed ones with MCD (mean of
            M samples and one sample), the most correlated channel, per-pixel ridge, the per-target U-Nets (their one
            trained pattern only) and, for presets, the Bayes ceiling; per-channel Pearson r against the true channels
  patterns  the channel list, the held-out observation patterns (never drawn in training), the channel groups that
            ``--apart`` training never observes together and the far patterns, with their distances to the shipped
            model's training patterns

Examples::

    python -m backend mcd impute --stack tissue-0 --observed 0,1,3,5,7 --json
    python -m backend mcd impute --stack my_stack.npz --observed 0,1,2 --samples 8 --json
    python -m backend mcd patterns --json
"""

from __future__ import annotations

import argparse

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``mcd`` group to ``python -m backend``."""
    acts = add_group(subparsers, "mcd", "MCD: one diffusion model imputes any missing channels from any observed subset")
    q = add_action(acts, "impute", cmd_impute, "impute unobserved channels; Pearson r per channel and method")
    q.add_argument("--stack", default="tissue-0", help="an NPZ (12, H, W) stack, or a preset tissue-0..tissue-3")
    q.add_argument("--observed", default="0,1,3,5,7", help="comma-separated observed channel indices (default "
                                                          "0,1,3,5,7: held-out pattern 0)")
    q.add_argument("--samples", type=int, default=4, help="posterior samples M averaged (1-32, default 4)")
    q.add_argument("--steps", type=int, default=18, help="Heun sampler steps (1-200, default 18)")
    q.add_argument("--seed", type=int, default=0)
    add_action(acts, "patterns", cmd_patterns, "channel names and the held-out observation patterns")
    return acts


def load_stack(spec: str):  # noqa: ANN201 - a preset name or a (12, H, W) array
    """A preset name as given, or the stack read from an NPZ path (the ``channel_stack`` input kind)."""
    from ...io.registry import read_path
    from .tissue import PRESETS

    return spec if spec in PRESETS else read_path("channel_stack", spec)


def cmd_impute(args: argparse.Namespace) -> Output:
    from .evaluate import METHODS
    from .jobs import ImputeConfig, run_impute

    cfg = ImputeConfig(observed=args.observed, samples=args.samples, steps=args.steps, seed=args.seed)
    res = run_impute(load_stack(args.stack), cfg)
    ev = res.evaluation
    out = res.summary(digits=None)
    out.update({"stack": args.stack, "source": res.source, "shape": res.shape, "samples": cfg.samples,
                "steps": cfg.steps, "seed": cfg.seed})
    lines = [f"observed {ev.observed}  imputed {ev.missing}  held-out pattern: {ev.heldout} (distance to training "
             f"{ev.distance})"]
    lines += [f"{METHODS.label(k):40s} mean r {v:.3f}" for k, v in out["mean_r"].items()]
    best = ev.ranking()[0]
    lines += [f"best on this stack: {METHODS.label(best)} (mean r {ev.mean_r(best):.3f})"]
    return Output(out, lines=lines)


def cmd_patterns(args: argparse.Namespace) -> dict:  # noqa: ARG001
    from ... import weights
    from . import mcd as M
    from . import tissue as T
    from .evaluate import TISSUE_FILE

    cfg = M.config_from(weights.read_meta(TISSUE_FILE).config)  # the shipped model's masking rule
    return {"channels": list(T.CHANNELS), "heldout_patterns": [list(p) for p in M.HELDOUT_PATTERNS],
            "apart_groups": [list(g) for g in M.APART], "far_patterns": [list(p) for p in M.FAR_PATTERNS],
            "shipped_model_apart": [list(g) for g in cfg.apart],
            "distance_to_training": {",".join(map(str, p)): M.distance_to_training(p, cfg)
                                     for p in (*M.HELDOUT_PATTERNS, *M.FAR_PATTERNS)},
            "presets": list(T.PRESETS)}
