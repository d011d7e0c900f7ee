"""``python -m backend.train crowd``: generate the crowd clips, train STDDN and its no-density ablation, evaluate both
on the held-out scenes, and write ``assets/crowd_stddn.safetensors``, ``assets/crowd_micro.safetensors`` and
``assets/crowd_training.json`` (training curves and scores).

Both models share the data, the network, the seed and the number of epochs; only lambda2 differs (STDDN's staged
schedule vs lambda2 = 0). Wall times on one thread of 2 cores shared with other jobs (load average about 4-5): STDDN
16-19 min, the ablation 7-13 min, the 60 s held-out evaluation of every method about 5 min; on 2 quiet cores roughly
half (``--quick`` for a smoke run).

Options: ``--only stddn|micro`` trains one model (two processes can run side by side), ``--evaluate`` only re-scores the
shipped weights, ``--seed``, ``--epochs-scale``; ``--out-dir DIR --seed S`` trains another seed into DIR and
``--out-dir DIR --seed S --seed-eval`` scores it on the same held-out clips; ``--walls`` re-measures the wall
diagnostics of every shipped seed (how strongly the networks react to walls, where they cross them, and the ablation
with walls enforced for both models; about 6 min) into ``assets/crowd_eval.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from backend.runtime import ASSETS, seed_everything

TRAIN_SECONDS = 60.0
VAL_SECONDS = 20.0


def _clips(progress: bool = True, quick: bool = False) -> tuple[list, list]:
    from backend.forecast.crowd.generate import GeneratorConfig, generate_clip
    from backend.forecast.crowd.scenes import TRAIN_SCENES

    secs = 15.0 if quick else TRAIN_SECONDS
    train = [generate_clip(s, 100 + i, GeneratorConfig(seconds=secs)) for i, s in enumerate(TRAIN_SCENES)]
    val = [generate_clip(s, 200 + i, GeneratorConfig(seconds=VAL_SECONDS)) for i, s in enumerate(TRAIN_SCENES)]
    if progress:
        for c in train + val:
            print("clip", json.dumps(c.summary()), flush=True)
    return train, val


def _train_one(kind: str, train: list, val: list, seed: int, scale: float, quick: bool,
               out_dir: Path | None = None, joint_lambda2: float | None = None) -> dict:
    import torch

    from backend.forecast.crowd.methods import save_weights, weights_path
    from backend.forecast.crowd.stddn import STDDN, StddnConfig, count_parameters
    from backend.forecast.crowd.training import TrainConfig
    from backend.forecast.crowd.training import train as fit

    seed_everything(seed)
    torch.manual_seed(seed)
    macro = StddnConfig()
    if joint_lambda2 is not None:  # control experiment (--joint-lambda2): the joint stage's density weight
        macro.stages = {**macro.stages, "joint": (macro.stages["joint"][0], joint_lambda2)}
    model = STDDN(macro=macro)
    cfg = TrainConfig(seed=seed, density=(kind == "stddn"))
    cfg.stage_epochs = {k: max(1, int(round(v * scale))) for k, v in cfg.stage_epochs.items()}
    if quick:
        cfg.batches_per_epoch = cfg.physics_batches_per_epoch = 3
        cfg.stage_epochs = {"trajectory": 1, "physics": 1, "joint": 1}
        cfg.val_windows = 8
    # validation rollouts: one clip per scene kind (training geometries, new seeds)
    val_roll = [val[1], val[3], val[6]]  # corridor, bottleneck, concourse (training geometries, new seeds)

    def log(rec: dict) -> None:
        print(kind, json.dumps({k: (round(v, 5) if isinstance(v, float) else v) for k, v in rec.items()}), flush=True)

    t0 = time.perf_counter()
    res = fit(model, train, val, cfg, val_rollout_clips=val_roll, log=log)
    info = {"kind": kind, "seed": seed, "best_epoch": res.best_epoch, "best_val_rollout_mae": res.best_val_mae,
            "train_seconds": round(time.perf_counter() - t0, 1), "parameters_micro": count_parameters(model.micro),
            "parameters_ode": count_parameters(model.ode), "epochs": len(res.history), "train_config": vars(cfg)}
    path = weights_path(kind) if out_dir is None else out_dir / f"crowd_{kind}_seed{seed}.safetensors"
    command = "python -m backend.train crowd" + (f" --out-dir {out_dir} --seed {seed} --only {kind}" if out_dir else
                                                 (f" --seed {seed}" if seed else ""))
    if scale != 1.0:
        command += f" --epochs-scale {scale:g}"
    if joint_lambda2 is not None:
        command += f" --joint-lambda2 {joint_lambda2:g}"
    save_weights(model, path, micro_only=(kind == "micro"), training=info, command=command)
    print(kind, "saved", path, flush=True)
    hist_path = (ASSETS / f"crowd_history_{kind}.json" if out_dir is None
                 else out_dir / f"crowd_history_{kind}_seed{seed}.json")
    hist_path.write_text(json.dumps({"info": info, "history": res.history}, indent=1))
    return info


CI = {"seconds": 15.0, "seed": 7, "stride": 3}  # the ci-tier subset of tests/backend/test_crowd_claims.py


def evaluate_shipped(seconds: float = 60.0, seed: int = 300) -> dict:
    """Score the shipped weights and the baselines on the held-out scenes (the manifest's numbers), plus the ci-tier
    subset the tests rerun."""
    from backend.forecast.crowd.evaluate import evaluate

    res = evaluate(seconds=seconds, seed=seed, stride=2)
    ci = evaluate(seconds=CI["seconds"], seed=CI["seed"], methods=["stddn", "micro", "constant_velocity"],
                  stride=CI["stride"])
    out = {"seconds": seconds, "seed": seed, "stride": 2, "table": res.table, "per_scene": res.per_scene,
           "ci": {"config": CI, "table": ci.table, "per_scene": ci.per_scene},
           "gradients": measure_gradients(), "walls": measure_walls(),
           "command": "python -m backend.train crowd --evaluate"}
    print(json.dumps(out["table"], indent=1), flush=True)
    print(json.dumps(out["ci"]["table"], indent=1), flush=True)
    return out


def evaluate_seed(out_dir: Path, seed: int, seconds: float = 60.0) -> dict:
    """Score STDDN and/or its ablation trained with ``--out-dir DIR --seed S`` on the same held-out clips as the shipped
    weights (60 s, seed 300, stride 2) and on the ci subset; writes ``DIR/crowd_eval_seed<S>.json``."""
    from backend.forecast.crowd.evaluate import evaluate
    from backend.forecast.crowd.methods import load_model

    files = {k: out_dir / f"crowd_{k}_seed{seed}.safetensors" for k in ("stddn", "micro")}
    nets = {k: load_model(k, f)[0].micro for k, f in files.items() if f.is_file()}  # whichever were trained
    if not nets:
        raise FileNotFoundError(f"no crowd_*_seed{seed}.safetensors in {out_dir}")
    res = evaluate(seconds=seconds, seed=300, methods=list(nets), stride=2, nets=nets)
    ci = evaluate(seconds=CI["seconds"], seed=CI["seed"], methods=list(nets), stride=CI["stride"], nets=nets)
    out = {"train_seed": seed, "seconds": seconds, "seed": 300, "stride": 2, "table": res.table,
           "per_scene": res.per_scene, "ci": {"config": CI, "table": ci.table, "per_scene": ci.per_scene},
           "command": f"python -m backend.train crowd --out-dir {out_dir} --seed {seed} --seed-eval"}
    (out_dir / f"crowd_eval_seed{seed}.json").write_text(json.dumps(out, indent=1))
    print(json.dumps(out["table"], indent=1), flush=True)
    print(json.dumps(out["ci"]["table"], indent=1), flush=True)
    return out


def measure_gradients() -> dict:
    """The density term's pull on the shipped STDDN's trajectory network (``training.loss_gradient_norms``) on fixed
    windows of a held-out bottleneck clip (6 s, seed 11, windows at frames 5, 20, 35, 50)."""
    from backend.forecast.crowd.evaluate import eval_clip
    from backend.forecast.crowd.methods import load_model
    from backend.forecast.crowd.scenes import get_scene
    from backend.forecast.crowd.training import ClipTensors, collate, loss_gradient_norms, make_window

    model, _ = load_model("stddn")
    clip = eval_clip(get_scene("bottleneck"), 6.0, 11)
    ct = ClipTensors.from_clip(clip)
    batch = collate([make_window(ct, t0, 10) for t0 in (5, 20, 35, 50)], clip.dt)
    return loss_gradient_norms(model, batch)


def measure_walls() -> dict:
    """Why learned agents cross walls: for STDDN and its ablation of every shipped training seed, the
    trajectory network's wall response (``evaluate.wall_response``: a lone walker near a straight wall) and its
    one-step normal acceleration near the walls of the held-out bottleneck clip of the 60 s evaluation (seed 301,
    ``evaluate.near_wall_bias``) beside the ground truth's, and where the 60 s rollout on that clip crosses walls
    (crossings per wall segment; ``gap_wall`` = the two segments of the wall that holds the gap, x = 12 m)."""
    import numpy as np

    from backend.forecast.crowd.evaluate import eval_clip, near_wall_bias, wall_response
    from backend.forecast.crowd.interface import get_method
    from backend.forecast.crowd.methods import load_model, seed_weights, shipped_seeds
    from backend.forecast.crowd.metrics import wall_crossings
    from backend.forecast.crowd.rollout import simulate
    from backend.forecast.crowd.scenes import get_scene

    clip = eval_clip(get_scene("bottleneck"), 60.0, 301)
    walls = clip.walls()
    gap = [i for i, (x0, _, x1, _) in enumerate(walls) if np.isclose(x0, 12.0) and np.isclose(x1, 12.0)]
    out: dict = {"clip": "bottleneck-g1.6, 60 s, seed 301 (the 60 s evaluation's clip)", "walls": walls.tolist(),
                 "gap_wall": gap, "seeds": {}}
    for s in shipped_seeds():
        out["seeds"][str(s)] = {}
        for kind in ("stddn", "micro"):
            net = load_model(kind, seed_weights(kind, s))[0].micro
            wr, nb = wall_response(net), near_wall_bias(net, clip)
            pos = simulate(clip, get_method(kind, net=net)).positions
            out["distances"], out["generator_sf"] = wr["distances"], wr["generator_sf"]
            out["near_wall_truth"], out["near_wall_samples"] = nb["truth"], nb["samples"]
            out["seeds"][str(s)][kind] = {"wall_response": wr["learned"], "near_wall": nb["predicted"],
                                          "crossings_per_wall": [wall_crossings(pos, walls[i:i + 1])
                                                                 for i in range(len(walls))]}
    return out


def measure_wall_guard(seconds: float = 60.0) -> dict:
    """Diagnostic: STDDN and its ablation of every shipped seed on the same 60 s held-out clips with
    ``evaluate.WallGuard`` (steps through walls cancelled) -- how the ablation comparison reads once neither model can
    leak through walls. Not a property of either method: neither the paper nor the released code constrains walls."""
    from backend.forecast.crowd.evaluate import evaluate
    from backend.forecast.crowd.methods import load_model, seed_weights, shipped_seeds

    out: dict = {"seconds": seconds, "seed": 300, "stride": 2, "seeds": {}}
    for s in shipped_seeds():
        nets = {k: load_model(k, seed_weights(k, s))[0].micro for k in ("stddn", "micro")}
        res = evaluate(seconds=seconds, seed=300, methods=["stddn", "micro"], stride=2, nets=nets, guard_walls=True)
        keys = ("MAE", "OT", "MMD", "wall_crossings")
        out["seeds"][str(s)] = {
            "table": {r["method"]: {k: float(r[k]) for k in keys} for r in res.table},
            "per_scene": [{"scene": r["scene"], "method": r["method"], **{k: float(r[k]) for k in keys}}
                          for r in res.per_scene]}
        print(s, json.dumps(out["seeds"][str(s)]["table"]), flush=True)
    return out


def record_control(out_dir: Path) -> dict:
    """``--record-control DIR``: store the control experiment trained by ``--out-dir DIR --seed S --only stddn
    --joint-lambda2 0`` and scored by ``--out-dir DIR --seed S --seed-eval`` (STDDN's stages, frozen physics epochs and
    batches, but the density term never reaches the network) in assets/crowd_eval.json["density_control"], with the
    wall diagnostics of its networks. It tells which part of STDDN's difference from the
    ablation comes from the density gradient and which from the schedule (5 fewer network epochs)."""
    from backend.forecast.crowd.evaluate import eval_clip, near_wall_bias, wall_response
    from backend.forecast.crowd.methods import load_model, seed_weights
    from backend.forecast.crowd.scenes import get_scene

    clip = eval_clip(get_scene("bottleneck"), 60.0, 301)
    out: dict = {"command": f"python -m backend.train crowd --out-dir {out_dir} --seed S --only stddn "
                            "--joint-lambda2 0; ... --out-dir DIR --seed S --seed-eval", "seeds": {}}
    for f in sorted(out_dir.glob("crowd_eval_seed*.json")):
        ev_s = json.loads(f.read_text())
        seed = int(ev_s["train_seed"])
        model, meta = load_model("stddn", out_dir / f"crowd_stddn_seed{seed}.safetensors")
        net = model.micro
        shipped_meta = load_model("stddn", seed_weights("stddn", seed))[1]
        keys = ("MAE", "OT", "MMD", "wall_crossings")
        row = {r["method"]: r for r in ev_s["table"]}["stddn"]
        ci = {r["method"]: r for r in ev_s["ci"]["table"]}["stddn"]
        out["seeds"][str(seed)] = {
            "table": {k: float(row[k]) for k in keys}, "ci": {k: float(ci[k]) for k in ("MAE", "OT")},
            "per_scene": [{"scene": r["scene"], **{k: float(r[k]) for k in keys}} for r in ev_s["per_scene"]
                          if r["method"] == "stddn"],
            "wall_response": wall_response(net)["learned"], "near_wall": near_wall_bias(net, clip)["predicted"],
            "best_epoch": int(meta.extra["training"]["best_epoch"]),
            "stddn_best_epoch": int(shipped_meta.extra["training"]["best_epoch"])}
    ev_path = ASSETS / "crowd_eval.json"
    ev = json.loads(ev_path.read_text())
    ev["density_control"] = out
    ev_path.write_text(json.dumps(ev, indent=1))
    return out


def update_wall_diagnostics() -> None:
    """``--walls``: re-measure both wall diagnostics into assets/crowd_eval.json."""
    ev_path = ASSETS / "crowd_eval.json"
    ev = json.loads(ev_path.read_text())
    ev["walls"] = measure_walls()
    ev["wall_guard"] = measure_wall_guard()
    ev_path.write_text(json.dumps(ev, indent=1))


def write_sample(path: Path | None = None) -> Path:
    """The upload example: the held-out bottleneck, seed 42, 20 s, subsampled to 2.5 fps (0.4 s, like GC's
    annotations), as ``frame,id,x,y``."""
    from backend.forecast.crowd.csvio import clip_to_frame
    from backend.forecast.crowd.evaluate import eval_clip
    from backend.forecast.crowd.scenes import get_scene

    path = path or ASSETS / "crowd_sample_bottleneck.csv"
    clip_to_frame(eval_clip(get_scene("bottleneck"), 20.0, 42), fps=2.5).to_csv(path, index=False)
    print("wrote", path, flush=True)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend.train crowd", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=["stddn", "micro"], default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs-scale", type=float, default=1.0)
    ap.add_argument("--joint-lambda2", type=float, default=None,
                    help="control experiment, only with --out-dir: STDDN's schedule with this density weight in the "
                         "joint stage (0: the network never receives the density gradient, while the stages, the "
                         "frozen physics epochs and the batches stay those of STDDN)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run (tiny data and epochs) writing to a temporary folder, not assets/")
    ap.add_argument("--evaluate", action="store_true", help="only evaluate the shipped weights")
    ap.add_argument("--out-dir", type=Path, default=None,
                    help="train into this folder (crowd_<kind>_seed<S>.safetensors and history; no evaluation), "
                         "e.g. for extra seeds; see --seed-eval")
    ap.add_argument("--eval-seconds", type=float, default=60.0)
    ap.add_argument("--seed-eval", action="store_true",
                    help="score the --out-dir models of --seed on the held-out clips (60 s) and the ci subset")
    ap.add_argument("--sample", action="store_true", help="only (re)write assets/crowd_sample_bottleneck.csv")
    ap.add_argument("--record-control", type=Path, default=None, metavar="DIR",
                    help="store the --joint-lambda2 0 control experiment scored in DIR into assets/crowd_eval.json")
    ap.add_argument("--walls", action="store_true",
                    help="only (re)measure the wall diagnostics of every shipped seed into assets/crowd_eval.json "
                         "(wall response, near-wall bias, crossings per wall, rollouts with walls enforced)")
    args = ap.parse_args(argv)
    if args.walls:
        update_wall_diagnostics()
        return 0
    if args.record_control is not None:
        record_control(args.record_control)
        return 0
    if args.sample:
        write_sample()
        return 0
    if args.quick:
        import tempfile

        from backend.forecast.crowd import methods

        tmp = Path(tempfile.mkdtemp(prefix="crowd_quick_"))
        methods.WEIGHTS_DIR = tmp
        global ASSETS  # noqa: PLW0603
        ASSETS = tmp
    if args.seed_eval:
        if args.out_dir is None:
            ap.error("--seed-eval needs --out-dir")
        evaluate_seed(args.out_dir, args.seed, args.eval_seconds)
        return 0
    if args.out_dir is not None:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        train, val = _clips(quick=args.quick)
        for kind in [args.only] if args.only else ["stddn", "micro"]:
            _train_one(kind, train, val, args.seed, args.epochs_scale, args.quick, out_dir=args.out_dir,
                       joint_lambda2=args.joint_lambda2)
        return 0
    if not args.evaluate:
        train, val = _clips(quick=args.quick)
        kinds = [args.only] if args.only else ["stddn", "micro"]
        for kind in kinds:
            _train_one(kind, train, val, args.seed, args.epochs_scale, args.quick)
    if args.only is None and not args.quick and not args.evaluate:
        write_sample()
    if args.only is None or args.evaluate:
        out = evaluate_shipped(seconds=15.0 if args.quick else args.eval_seconds)
        (ASSETS / "crowd_eval.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
