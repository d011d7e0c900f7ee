"""``python -m backend.train vintix``: pretrain the decision-pretrained transformers of the ``vintix`` page.

Writes ``assets/vintix_flow.safetensors`` (the rectified-flow head; trained on all three task families of
:mod:`backend.icrl.vintix.tasks`, round robin: K-armed bandits, continuous bandits, dark room), and
``assets/vintix_gaussian.safetensors`` / ``assets/vintix_mixture.safetensors`` (the same trunk with the Gaussian and
the Gaussian-mixture heads, trained on the continuous bandits only with as many continuous-bandit steps as the flow
model gets: the heads are compared on equal continuous-task data), plus ``assets/vintix_training.json`` (loss curves). ``--heads ad`` writes ``assets/vintix_ad.safetensors``: the
Algorithm Distillation baseline (:mod:`backend.icrl.vintix.ad`), a causal transformer of the same width and depth
trained on the same training priors (K-armed bandits and the dark room, the discrete families; ``--ad-steps`` steps per
family, windows of 64 steps of Thompson-sampling and goal-posterior-sampling learning histories; the dark-room
histories come from a pool of ``--ad-pool`` rollouts made once).

Every step draws fresh tasks of the training prior (data seed ``seed * 1_000_000 + step``), a batch of ``--batch``
contexts of ``max_context`` tuples, and averages the DPT loss over all L + 1 prefix lengths. AdamW (lr 1e-3,
weight decay 1e-4, warm-up 100 steps, cosine to 5e-5), gradient clip 1.0. ``--steps`` counts steps per family;
``--flow-draws`` is the number of (x_0, t) pairs per target in the flow loss (default 8).
Wall times on one thread of a 2-core machine shared with other jobs (load average 5-10): flow model 4,152 s,
Gaussian 271 s, mixture 366 s (about 80 min in all; the flow model's velocity net, 3 hidden layers of 256 with
Fourier features of x_t, is most of it; on a quiet core the flow model runs at about 0.32 s per step, 48 min).
AD: 630 s for 1,500 steps per family on the same busy machine (load average 10-20).
``--out-dir DIR`` writes elsewhere (a smoke run: ``--steps 3 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from backend.runtime import ASSETS

HEAD_FAMILIES = {"flow": ("karm", "cont", "dark"), "gaussian": ("cont",), "mixture": ("cont",)}


def _lr(step: int, total: int, peak: float) -> float:
    if step < 100:
        return peak * (step + 1) / 100
    frac = (step - 100) / max(1, total - 100)
    return 5e-5 + 0.5 * (peak - 5e-5) * (1 + math.cos(math.pi * min(1.0, frac)))


def train_one(head: str, steps: int, batch: int, seed: int, lr: float = 1e-3, flow_draws: int = 8, log=print):
    import numpy as np
    import torch

    from backend.icrl.vintix.dpt import DPT, DPTConfig
    from backend.icrl.vintix.tasks import make_batch

    torch.manual_seed(seed)
    cfg = DPTConfig(head=head, flow_draws=flow_draws)
    model = DPT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    fams = HEAD_FAMILIES[head]
    total = steps * len(fams)
    hist: dict[str, list] = {f: [] for f in fams}
    run = {f: [] for f in fams}
    t0 = time.perf_counter()
    for step in range(total):
        fam = fams[step % len(fams)]
        for g in opt.param_groups:
            g["lr"] = _lr(step, total, lr)
        rng = np.random.default_rng(seed * 1_000_000 + step)
        loss = model.loss(make_batch(fam, batch, cfg.max_context, rng))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        run[fam].append(float(loss))
        if (step + 1) % (50 * len(fams)) == 0:
            for f in fams:
                hist[f].append([step + 1, round(float(np.mean(run[f])), 4)])
                run[f] = []
            log(
                f"{head} step {step + 1}/{total} "
                + " ".join(f"{f} {hist[f][-1][1]:.4f}" for f in fams)
                + f" {time.perf_counter() - t0:.0f}s"
            )
    return model, cfg, {"history": hist, "train_seconds": round(time.perf_counter() - t0, 1), "steps": total}


def train_ad(steps: int, batch: int, seed: int, pool_size: int = 1024, lr: float = 1e-3, log=print):
    import numpy as np
    import torch

    from backend.icrl.vintix.ad import AD, AD_FAMILIES, ADConfig, dark_pool, source_batch

    torch.manual_seed(seed)
    cfg = ADConfig()
    model = AD(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    t0 = time.perf_counter()
    pool = dark_pool(pool_size, np.random.default_rng(seed * 1_000_000 + 999_999))
    total = steps * len(AD_FAMILIES)
    hist: dict[str, list] = {f: [] for f in AD_FAMILIES}
    run: dict[str, list] = {f: [] for f in AD_FAMILIES}
    for step in range(total):
        fam = AD_FAMILIES[step % len(AD_FAMILIES)]
        for g in opt.param_groups:
            g["lr"] = _lr(step, total, lr)
        rng = np.random.default_rng(seed * 1_000_000 + step)
        tok, act, mask = source_batch(fam, batch, rng, window=cfg.window, pool=pool)
        loss = model.loss(fam, tok, act, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        run[fam].append(float(loss.detach()))
        if (step + 1) % (50 * len(AD_FAMILIES)) == 0:
            for f in AD_FAMILIES:
                hist[f].append([step + 1, round(float(np.mean(run[f])), 4)])
                run[f] = []
            log(f"ad step {step + 1}/{total} " + " ".join(f"{f} {hist[f][-1][1]:.4f}" for f in AD_FAMILIES)
                + f" {time.perf_counter() - t0:.0f}s")
    return model, cfg, {"history": hist, "train_seconds": round(time.perf_counter() - t0, 1), "steps": total,
                        "pool": pool_size}


def main(argv: list[str] | None = None) -> int:
    import torch

    from backend import weights
    from backend.icrl.vintix.dpt import count_parameters

    ap = argparse.ArgumentParser(prog="python -m backend.train vintix", description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000, help="steps per task family")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--heads", default="flow,gaussian,mixture,ad")
    ap.add_argument("--flow-draws", type=int, default=8, help="(x_0, t) pairs per target in the flow loss")
    ap.add_argument("--ad-steps", type=int, default=1500, help="Algorithm Distillation steps per family")
    ap.add_argument("--ad-pool", type=int, default=1024, help="dark-room source histories of the AD pool")
    ap.add_argument("--out-dir", type=Path, default=ASSETS)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    record = {}
    rec_path = args.out_dir / "vintix_training.json"
    if rec_path.is_file():
        record = json.loads(rec_path.read_text())
    command = "python -m backend.train vintix" + (f" --steps {args.steps}" if args.steps != 3000 else "")
    command += f" --flow-draws {args.flow_draws}" if args.flow_draws != 8 else ""
    for head in args.heads.split(","):
        if head == "ad":
            model, cfg, info = train_ad(args.ad_steps, args.batch, args.seed + 3, pool_size=args.ad_pool)
            info["parameters"] = count_parameters(model)
            info["families"] = ["karm", "dark"]
            record[head] = info
            ad_command = "python -m backend.train vintix --heads ad" + (
                f" --ad-steps {args.ad_steps}" if args.ad_steps != 1500 else "")
            weights.save(
                args.out_dir / "vintix_ad.safetensors",
                model.state_dict(),
                config=cfg.to_dict(),
                command=ad_command,
                data_seeds={
                    "train": "seed * 1_000_000 + step (source runs), training priors of backend.icrl.vintix.tasks",
                    "pool": "seed * 1_000_000 + 999_999 (dark-room PSRL rollouts on the 20 training goals)",
                },
                quality={"train_seconds": info["train_seconds"], "steps": info["steps"],
                         "final_loss": {f: v[-1][1] for f, v in info["history"].items() if v}},
            )
            rec_path.write_text(json.dumps(record, indent=1))
            print(f"wrote vintix_ad.safetensors ({info['train_seconds']} s)", flush=True)
            continue
        model, cfg, info = train_one(
            head,
            args.steps,
            args.batch,
            args.seed + {"flow": 0, "gaussian": 1, "mixture": 2}[head],
            flow_draws=args.flow_draws,
        )
        info["parameters"] = count_parameters(model)
        info["families"] = list(HEAD_FAMILIES[head])
        record[head] = info
        weights.save(
            args.out_dir / f"vintix_{head}.safetensors",
            model.state_dict(),
            config=cfg.to_dict(),
            command=command,
            data_seeds={
                "train": "seed * 1_000_000 + step, training priors of backend.icrl.vintix.tasks",
                "heldout": "held-out priors of backend.icrl.vintix.tasks",
            },
            quality={
                "train_seconds": info["train_seconds"],
                "steps": info["steps"],
                "final_loss": {f: v[-1][1] for f, v in info["history"].items() if v},
            },
        )
        rec_path.write_text(json.dumps(record, indent=1))
        print(f"wrote vintix_{head}.safetensors ({info['train_seconds']} s)", flush=True)
    return 0
