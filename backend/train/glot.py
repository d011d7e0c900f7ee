"""``python -m backend.train glot``: train the shipped GLOT heads and record the stress-test results.

Writes (``assets/``):

- ``glot_heads_<variant>.safetensors`` for ``released``, ``hard`` and ``relational``: the five poolings (mean, max, CLS,
  AdaPool, GLOT) with their linear heads, trained on cached MiniLM states of the stress test at 90% distractors (2000
  train texts, data seed 0, head seed 0); the settings and eval accuracies are in the file's metadata.
- ``glot_results.json``: every measured number the page shows as "recorded": per-variant accuracies at ratio 0.9 (head
  seeds 0-2 for mean/AdaPool/GLOT on the relational variant), bag-of-words controls, the LoRA reference (accuracy,
  trainable parameters, time per epoch), and with ``--sweep`` the accuracy-vs-ratio curves (0.2/0.5/0.8/0.9) of every
  pooling on the three variants, at the sizes given (the recorded sweep used ``--n-train 500 --n-eval 250``).

Reproduce the shipped files: ``python -m backend.train glot`` (heads + LoRA reference), then
``python -m backend.train glot --sweep-only --n-train 500 --n-eval 250`` (the recorded curves). Steps can be skipped
(``--no-lora``, ``--skip-heads``), split over processes (``--variants``; results merge into the JSON), resumed
(``--states-dir``: backbone states kept on disk) or smoke-tested (``--quick --out DIR``).

Time on an idle 2-core machine, one torch thread (measured pieces: MiniLM 49 ms per 131-token text, GLOT head 1.0 s and
LoRA 54 s per 256-text epoch): about 4 minutes of backbone states, 15 minutes of heads (relational with 3 seeds),
8 minutes of LoRA; the sweep about 10 more. On the shared development machine under load 9-15 the recorded run took
about 2.5 hours of process time. Nothing here runs in the tests; the tests load the shipped heads.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

VARIANTS = ("released", "hard", "relational")
RATIO = 0.9
SWEEP_RATIOS = (0.2, 0.5, 0.8, 0.9)
EXTRA_SEEDS = (1, 2)  # relational: every pooling with head seeds 0, 1, 2


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` merged into the file's current content (the per-variant blocks of ``heads`` and ``sweep`` of a
    concurrent run with other ``--variants`` are kept), atomically."""
    current: dict[str, Any] = {}
    if path.is_file():
        try:
            current = json.loads(path.read_text())
        except ValueError:
            current = {}
    merged = {**current, **data}
    for key in ("heads", "sweep"):
        if isinstance(current.get(key), dict) or isinstance(data.get(key), dict):
            merged[key] = {**current.get(key, {}), **data.get(key, {})}
    tmp = path.with_suffix(f".json.tmp{os.getpid()}")
    tmp.write_text(json.dumps(merged, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.train glot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="output folder (default: assets/)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-eval", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--sweep", action="store_true", help="also record the accuracy-vs-ratio curves")
    parser.add_argument("--sweep-only", action="store_true", help="only the sweep (merged into glot_results.json)")
    parser.add_argument("--no-lora", action="store_true")
    parser.add_argument("--skip-heads", action="store_true", help="skip the heads (e.g. to run only the LoRA reference)")
    parser.add_argument("--lora-train", type=int, default=2000, help="training texts of the LoRA reference")
    parser.add_argument("--lora-epochs", type=int, default=1)
    parser.add_argument("--smollm2", action="store_true", help="also run SmolLM2 on a subset + LoRA timing")
    parser.add_argument("--smollm2-n", type=int, nargs=2, default=(400, 200), metavar=("TRAIN", "EVAL"),
                        help="SmolLM2 subset sizes (default 400 200)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 120/60 texts, 2 epochs, LoRA 2 steps")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: $OMP_NUM_THREADS, else all cores up to 2)")
    parser.add_argument("--states-dir", default=None,
                        help="keep the backbone states on disk here and reuse them (default: memory only)")
    args = parser.parse_args(argv)

    import torch

    from backend.runtime import ASSETS, package_versions
    from backend.tokens.glot import stress
    from backend.tokens.glot.backbone import load_backbone
    from backend.tokens.glot.experiments import StressConfig, run_stress
    from backend.tokens.glot.heads import TrainConfig, save_heads
    from backend.tokens.glot.layers import GlotConfig
    from backend.tokens.glot.lora import lora_reference

    env_threads = os.environ.get("OMP_NUM_THREADS", "")
    torch.set_num_threads(args.threads or (int(env_threads) if env_threads.isdigit() else min(2, os.cpu_count() or 1)))
    if args.quick:
        args.n_train, args.n_eval, args.epochs, args.lora_train = 120, 60, 2, 64
    out = Path(args.out) if args.out else ASSETS
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "glot_results.json"
    results: dict[str, Any] = {}
    if results_path.is_file():
        try:
            results = json.loads(results_path.read_text())
        except ValueError:
            results = {}
    glot_cfg = GlotConfig()
    train_cfg = TrainConfig(lr=args.lr, epochs=args.epochs)
    words = list(argv if argv is not None else sys.argv[1:])
    if "--states-dir" in words:  # a cache folder: it does not change the results, and it is a path of this machine
        i = words.index("--states-dir")
        del words[i : i + 2]
    command = "python -m backend.train glot " + " ".join(words)
    results.update({
        "about": "Recorded GLOT stress-test results of `python -m backend.train glot` (MiniLM, cached states).",
        "command": command.strip(),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "python": platform.python_version()},
        "packages": package_versions(("torch", "transformers", "peft", "scikit-learn", "safetensors")),
    })
    if not (args.sweep_only or args.skip_heads):
        results.update({"glot_config": asdict(glot_cfg), "train_config": asdict(train_cfg),
                        "sizes": {"n_train": args.n_train, "n_eval": args.n_eval}})

    states_dir = args.states_dir
    start = time.perf_counter()
    bb = load_backbone("minilm")
    _log(f"MiniLM loaded ({bb.num_parameters():,} parameters), threads {torch.get_num_threads()}")

    if not args.sweep_only:
        heads: dict[str, Any] = results.setdefault("heads", {})
        for variant in [] if args.skip_heads else args.variants:
            t0 = time.perf_counter()
            seeds = (0, *EXTRA_SEEDS) if variant == "relational" else (0,)
            cfg = StressConfig(variant=variant, ratios=(RATIO,), n_train=args.n_train, n_eval=args.n_eval, seeds=seeds)
            res = run_stress(cfg, glot_cfg, train_cfg, backbone=bb, keep_models=True, example=False,
                             states_dir=states_dir)
            rows = list(res.rows)
            acc = {r["pooling"]: r["accuracy"] for r in res.rows if r["seed"] == 0}
            path = out / f"glot_heads_{variant}.safetensors"
            save_heads(res.models, path, command=results["command"],
                       config={"backbone": "minilm", "hidden_size": bb.hidden_size, "is_decoder": False,
                               "n_classes": 2, "glot_config": asdict(glot_cfg), "max_tokens": cfg.max_tokens},
                       data_seeds={"variant": variant, "ratio": RATIO, "position": cfg.position,
                                   "data_seed": cfg.data_seed, "head_seed": 0, "n_train": cfg.n_train,
                                   "n_eval": cfg.n_eval},
                       quality={"accuracy": acc,
                                "measured_on": f"the {cfg.n_eval} eval texts of the training run (data seed "
                                               f"{cfg.data_seed})",
                                "command": 'python -m pytest tests/backend/test_glot_claims.py -m "not full"'},
                       extra={"train_config": asdict(train_cfg)})
            heads[variant] = {"rows": rows, "bow": res.bow, "encode_seconds": res.encode_seconds,
                              "file": path.name, "summary": res.summary(), "command": results["command"],
                              "seconds": round(time.perf_counter() - t0, 1)}
            _write_json(results_path, results)
            accs = ", ".join(f"{k} {v:.3f}" for k, v in acc.items())
            bows = ", ".join(f"{b['name']} {b['accuracy']:.3f}" for b in res.bow)
            _log(f"{variant}: {accs}; bow {bows} ({time.perf_counter() - t0:.0f} s)")

        if not args.no_lora:
            t0 = time.perf_counter()
            tr, ev = stress.splits("hard", RATIO, n_train=args.lora_train, n_eval=args.n_eval)
            lora = lora_reference(bb, tr.texts, tr.labels, ev.texts, ev.labels, epochs=args.lora_epochs,
                                  max_steps=2 if args.quick else None)
            results["lora"] = {"variant": "hard", "ratio": RATIO, "n_train": args.lora_train, **asdict(lora)}
            _write_json(results_path, results)
            _log(f"LoRA: accuracy {lora.accuracy}, {lora.trainable_params:,} params, "
                 f"{lora.seconds_per_epoch:.0f} s/epoch ({time.perf_counter() - t0:.0f} s)")

        if args.smollm2:
            t0 = time.perf_counter()
            sm = load_backbone("smollm2")
            n_tr, n_ev = (40, 20) if args.quick else tuple(args.smollm2_n)
            res = run_stress(StressConfig(variant="hard", ratios=(RATIO,), n_train=n_tr, n_eval=n_ev), glot_cfg,
                             train_cfg, backbone=sm, example=False, states_dir=states_dir)
            tr, _ = stress.splits("hard", RATIO, n_train=64, n_eval=8)
            lora = lora_reference(sm, tr.texts, tr.labels, None, None, max_steps=2 if args.quick else 4,
                                  batch_size=16)
            results["smollm2"] = {"variant": "hard", "ratio": RATIO, "n_train": n_tr, "n_eval": n_ev, "lora_batch": 16,
                                  "command": command.strip(),
                                  "summary": res.summary(), "encode_seconds": res.encode_seconds,
                                  "lora_timing": asdict(lora)}
            _write_json(results_path, results)
            _log(f"SmolLM2 subset done ({time.perf_counter() - t0:.0f} s)")

    if args.sweep or args.sweep_only:
        sweep: dict[str, Any] = results.setdefault("sweep", {})
        for variant in args.variants:
            t0 = time.perf_counter()
            seeds = (0, *EXTRA_SEEDS) if variant == "relational" else (0,)
            res = run_stress(StressConfig(variant=variant, ratios=SWEEP_RATIOS, n_train=args.n_train,
                                          n_eval=args.n_eval, seeds=seeds), glot_cfg, train_cfg, backbone=bb,
                             example=False, states_dir=states_dir)
            sweep[variant] = res.summary()
            results["sweep_config"] = {"command": command.strip(), "n_train": args.n_train, "n_eval": args.n_eval,
                                       "ratios": list(SWEEP_RATIOS),
                                       "head_seeds": {"relational": [0, *EXTRA_SEEDS], "others": [0]},
                                       "train_config": asdict(train_cfg),
                                       "glot_config": asdict(glot_cfg)}
            _write_json(results_path, results)
            _log(f"sweep {variant} ({time.perf_counter() - t0:.0f} s)")

    results["total_seconds"] = round(time.perf_counter() - start, 1)
    _write_json(results_path, results)
    _log(f"done in {results['total_seconds']:.0f} s -> {out}")
    return 0
