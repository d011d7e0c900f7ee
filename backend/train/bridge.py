"""``python -m backend.train bridge``: Bridge blocks on the shipped tiny reasoner and the independent-sampling arm
with the same data and budget, 3 seeds each (``assets/bridge_checkpoints.safetensors``), and the training log with
held-out accuracy against rollout tokens and the final evaluation at several widths (``assets/bridge_log.json``).

Both arms start from the shipped tiny reasoner (its sha256 is in the log) and train the same base tensors
(:data:`backend.reasoning.bridge.checkpoints.TRAIN_BASE`, the last decoder layer's feed-forward output projection);
the Bridge arm also trains its blocks (zero-initialised, so it starts as the base model). Per seed and arm:

1. SFT warm-up: ``--sft-epochs`` passes over sets of ``--width`` right solutions of ``--sft-problems`` problems of the
   ``grammar`` split (5-8 operations, ``checkpoints.OPS``, generator seed 100; the base policy's right samples at temperature 1, topped up
   with the reference solution; the same sets for both arms), ``--sft-batch`` sets per step.
2. GRPO: ``--steps`` steps of ``--batch`` problems (generator seed 200 + seed, the same for both arms) x ``--width``
   rollouts at temperature 1, reward 1 for the right final answer; every rollout token is counted. Every
   ``--eval-every`` steps: accuracy on the first 16 held-out problems at the training width (sampling seed 1).
3. Final evaluation: ``--eval-problems`` held-out problems (``grammar``, 5-8 operations, generator seed 2024) at widths 1, 2, 4, 8
   (sampling seed 7), per problem; the untrained base model the same way.

Timing: about 19 minutes of one shared core at the defaults. ``--out-dir`` writes elsewhere (a smoke test:
``--seeds 0 --sft-problems 4 --steps 1 --eval-problems 4 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

COMMAND = "python -m backend.train bridge"


def main(argv: list[str] | None = None) -> int:
    import hashlib

    import torch

    from .. import weights
    from ..models.tinyreasoner import WEIGHTS as BASE_FILE
    from ..models.tinyreasoner import load_tinyreasoner
    from ..reasoning.bridge.checkpoints import CHECKPOINTS, EVAL_SEED, LOG_FILE, OPS, TRAIN_BASE, WIDTHS, eval_problems
    from ..reasoning.bridge.jobs import MODES
    from ..reasoning.bridge.model import BridgeConfig, bridged_from_reasoner
    from ..reasoning.bridge.rl import grpo_update, sample_width, score, sft_sets, sft_step
    from ..reasoning.tasks import generate

    ap = argparse.ArgumentParser(prog=COMMAND)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--width", type=int, default=4)
    ap.add_argument("--sft-problems", type=int, default=32)
    ap.add_argument("--sft-epochs", type=int, default=2)
    ap.add_argument("--sft-batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--bridge-lr", type=float, default=2e-3)
    ap.add_argument("--eval-every", type=int, default=8)
    ap.add_argument("--eval-problems", type=int, default=24)
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)

    t_start = time.perf_counter()
    reasoner = load_tinyreasoner()
    base_sha = hashlib.sha256(BASE_FILE.read_bytes()).hexdigest()
    W = args.width
    sft_probs = generate(args.sft_problems, "grammar", seed=100, steps=OPS)
    sets = sft_sets(reasoner, sft_probs, W, seed=100)
    own = sum(1 for _, cs in sets for c in cs) if sets else 0
    print(f"SFT sets: {len(sets)} x {W} ({time.perf_counter() - t_start:.1f} s)", flush=True)
    evals = eval_problems(args.eval_problems)
    curve_probs = evals[:16]

    def final_eval(model) -> dict:
        out = {}
        for w in WIDTHS:
            s = sample_width(reasoner, model, [p.question for p in evals], w, 1.0, EVAL_SEED)
            sc = score(s, evals)
            out[str(w)] = {"right": sc.right.tolist(), "passed": sc.passed.tolist(), "majority": sc.majority.tolist(),
                           "distinct": sc.distinct.tolist(), "tokens": sc.tokens.tolist(), "summary": sc.summary()}
        return out

    log: dict = {"command": COMMAND, "base_sha256": base_sha, "config": vars(args) | {"out_dir": None},
                 "train_base": list(TRAIN_BASE), "sft_sets": len(sets), "sft_completions": own, "runs": {}}
    t0 = time.perf_counter()
    base_model = bridged_from_reasoner(reasoner, bridge=False)
    log["base"] = final_eval(base_model)
    acc = log["base"][str(W)]["summary"]["accuracy"]
    print(f"base: {acc:.3f} at width {W} ({time.perf_counter() - t0:.1f} s)", flush=True)
    state: dict = {}
    arms = [a for a in MODES.values() if a.trained]  # the Bridge arm, then the independent arm
    for seed in args.seeds:
        grpo_probs = generate(args.steps * args.batch, "grammar", seed=200 + seed, steps=OPS)
        for arm in arms:
            t0 = time.perf_counter()
            torch.manual_seed(seed)
            model = bridged_from_reasoner(reasoner, BridgeConfig(), bridge=arm.bridge)
            for name, p in model.named_parameters():
                p.requires_grad_(name.startswith("blocks.") or name.removeprefix("base.") in TRAIN_BASE)
            groups = [{"params": [p for n, p in model.named_parameters() if n.startswith("base.") and p.requires_grad],
                       "lr": args.lr}]
            if model.has_bridge:
                groups.append({"params": list(model.blocks.parameters()), "lr": args.bridge_lr})
            opt = torch.optim.Adam(groups)
            g = torch.Generator().manual_seed(seed)
            sft_losses = []
            for _ in range(args.sft_epochs):
                order = torch.randperm(len(sets), generator=g).tolist()
                for i in range(0, len(order), args.sft_batch):
                    sft_losses.append(sft_step(model, opt, [sets[j] for j in order[i:i + args.sft_batch]]))
            curve, tokens, steps = [], 0, []

            def point(model, step: int, tokens: int) -> dict:
                s = sample_width(reasoner, model, [p.question for p in curve_probs], W, 1.0, 1)
                return {"step": step, "rollout_tokens": tokens, "accuracy": score(s, curve_probs).accuracy}

            curve.append(point(model, 0, 0))
            for k in range(args.steps):
                st = grpo_update(reasoner, model, opt, grpo_probs[k * args.batch:(k + 1) * args.batch], W,
                                 seed=1000 * seed + k)
                tokens += st["tokens"]
                steps.append({k2: round(v, 4) if isinstance(v, float) else v for k2, v in st.items()})
                if (k + 1) % args.eval_every == 0 or k + 1 == args.steps:
                    curve.append(point(model, k + 1, tokens))
            run = {"sft_loss_first": sft_losses[0] if sft_losses else None,
                   "sft_loss_last": sft_losses[-1] if sft_losses else None,
                   "curve": curve, "steps": steps, "rollout_tokens": tokens,
                   "bridge_parameters": model.bridge_parameters(), "base_parameters": model.base_parameters(),
                   "train_seconds": round(time.perf_counter() - t0, 1)}
            run["eval"] = final_eval(model)
            run["seconds"] = round(time.perf_counter() - t0, 1)
            log["runs"][arm.run_key(seed)] = run
            for k2, v in model.trainable_state(TRAIN_BASE).items():
                state[f"{arm.key}.s{seed}.{k2}"] = v.detach().clone()
            fin = run["eval"][str(W)]["summary"]
            print(f"{arm.key} seed {seed}: curve {[round(c['accuracy'], 3) for c in curve]}, final width {W} "
                  f"{fin['accuracy']:.3f} pass {fin['pass_at_n']:.3f} ({run['seconds']} s)", flush=True)
    log["seconds"] = round(time.perf_counter() - t_start, 1)
    out_ck = (args.out_dir / CHECKPOINTS.name) if args.out_dir else CHECKPOINTS
    out_log = (args.out_dir / LOG_FILE.name) if args.out_dir else LOG_FILE
    out_log.parent.mkdir(parents=True, exist_ok=True)
    out_log.write_text(json.dumps(log, indent=1, sort_keys=True) + "\n")
    weights.save(out_ck, state, config={"bridge": BridgeConfig().to_dict(), "width": W, "seeds": args.seeds,
                                        "arms": [a.key for a in arms], "train_base": list(TRAIN_BASE)},
                 command=COMMAND, data_seeds={"sft": [100], "grpo": [200 + s for s in args.seeds], "eval": [2024]},
                 quality={"log": LOG_FILE.name, "base_sha256": base_sha,
                          "command": "pytest tests/backend/test_bridge.py -m full"},
                 extra={"base": "tinyreasoner"})
    print(f"wrote {out_ck} and {out_log} ({log['seconds']} s)")
    return 0
