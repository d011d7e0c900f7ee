"""``python -m backend.train pruning``: the sweep behind the pruning page's presets (nothing is trained: RCPU is a
one-shot method). It prunes SmolLM2-135M-Instruct with every score x compensation pair over prune ratios and
calibration sizes, measures held-out perplexity at context 128 on the built-in corpus, and writes

- ``assets/pruning_sweep.json``: one row per run (perplexity, stored / effective parameters, heads removed, pruning
  time, mean calibration and held-out sublayer errors, per-layer errors), the dense reference, provenance;
- ``assets/pruning_lab.json``: the one-layer lab (layer 15 by default) on captured activations: calibration vs
  held-out error of none / ridge LS / rotation / rotation + scale for N_calib in 8..128, both scores, ratios 10-50 %,
  and binned histograms of output norms and angles at the default point.

Runs are appended as they finish and skipped when already present, so an interrupted sweep resumes where it stopped
(``--fresh`` starts over). Sized for under an hour on two CPU cores (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from backend.runtime import ASSETS, provenance, timed

# (score, compensation, propagate): every pair at the headline ratios; every compensation of the variance score
# (plus FLAP) at the other ratios
HEADLINE = [
    ("wanda_sp", "none", "pruned"), ("wanda_sp", "rotation", "pruned"),
    ("variance", "none", "pruned"), ("variance", "ls", "pruned"), ("variance", "rotation", "pruned"),
    ("variance", "rotation_scale", "pruned"), ("fluctuation", "bias", "dense"),
]
MAIN = [("variance", "none", "pruned"), ("variance", "ls", "pruned"), ("variance", "rotation", "pruned"),
        ("variance", "rotation_scale", "pruned"), ("fluctuation", "bias", "dense")]
N_SWEEP = [("variance", "none", "pruned"), ("variance", "ls", "pruned"), ("variance", "rotation", "pruned")]
HEADLINE_RATIOS = (0.2, 0.3)


def plan(ratios: tuple[float, ...], n_main: int, n_extra: tuple[int, ...], n_ratio: float = 0.3) -> list[tuple]:
    """The runs of the sweep, most important first: (score, compensation, propagate, ratio, n_calib)."""
    runs = [(s, c, p, r, n_main) for r in ratios if r in HEADLINE_RATIOS for (s, c, p) in HEADLINE]
    runs += [(s, c, p, n_ratio, n) for n in n_extra for (s, c, p) in N_SWEEP]
    runs += [(s, c, p, r, n_main) for r in ratios if r not in HEADLINE_RATIOS for (s, c, p) in MAIN]
    return runs


def _write_json(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    os.chmod(path, 0o644)


def _row_key(score: str, comp: str, ratio: float, n: int) -> str:
    return f"{score}|{comp}|{ratio:.2f}|{n}"


def _summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("attn", "mlp"):
        rs = [r for r in records if r["sublayer"] == kind]
        if rs:
            out[f"{kind}_calib_err"] = sum(r["calib_err"] for r in rs) / len(rs)
            held = [r["heldout_err"] for r in rs if r["heldout_err"] is not None]
            out[f"{kind}_heldout_err"] = sum(held) / len(held) if held else None
    out["per_layer"] = [{"layer": r["layer"], "sublayer": r["sublayer"], "calib": round(r["calib_err"], 5),
                         "heldout": None if r["heldout_err"] is None else round(r["heldout_err"], 5)}
                        for r in records]
    return out


def sweep(lm: Any, path: Path, runs: list[tuple[str, str, str, float, int]], n_eval: int, n_track: int,
          fresh: bool, meta: dict[str, Any]) -> dict[str, Any]:
    from backend.compression import corpus
    from backend.compression.lm import perplexity
    from backend.compression.pruning import lmtools
    from backend.compression.pruning.pruning import PruneConfig, prune_llama

    data: dict[str, Any] = {} if fresh or not path.exists() else json.loads(path.read_text())
    if data.get("settings", {}).get("n_eval") not in (None, n_eval):
        data = {}
    rows = {(_row_key(r["score"], r["compensation"], r["ratio"], r["n_calib"])): r for r in data.get("rows", [])}
    split = corpus.tokenize_split(lm.tokenizer)
    eval_ids = split.heldout_segments(n_eval, 128)
    if "dense" not in data:
        clock = timed()
        data["dense"] = {"perplexity": perplexity(lm.model, eval_ids), "eval_s": clock(),
                         "params": lmtools.stored_parameters(lm.model)}
    data["settings"] = {"n_eval": n_eval, "seqlen": 128, "n_track": n_track, "corpus": split.source,
                        "calib_tokens": int(split.calib_tokens.numel()),
                        "heldout_tokens": int(split.heldout_tokens.numel()), "seed": 0, **meta}
    print(f"dense perplexity {data['dense']['perplexity']:.3f}", flush=True)
    for i, (score, comp, prop, ratio, n) in enumerate(runs):
        key = _row_key(score, comp, ratio, n)
        if key in rows:
            continue
        cfg = PruneConfig(ratio=ratio, score=score, compensation=comp, propagate=prop, n_calib=n)
        model = copy.deepcopy(lm.model)
        calib = split.calib_segments(n, 128, 0)
        res = prune_llama(model, calib, cfg, heldout_ids=eval_ids[:n_track])
        clock = timed()
        ppl = perplexity(model, eval_ids)
        records = [asdict(r) for r in res.records]
        rows[key] = {"score": score, "compensation": comp, "propagate": prop, "ratio": ratio, "n_calib": n,
                     "perplexity": ppl, "prune_s": res.seconds, "eval_s": clock(),
                     "params_stored": lmtools.stored_parameters(model),
                     "params_effective": lmtools.effective_parameters(model),
                     "heads_dropped": res.heads_dropped, "groups_removed": res.groups_removed,
                     "intermediate_size": res.intermediate_size,
                     "heads_kept_per_layer": [sum(h) for h in res.head_keep], **_summarise(records)}
        del model
        data["rows"] = list(rows.values())
        data["provenance"] = provenance(0, (), script="backend/train/pruning.py", **meta)
        _write_json(path, data)
        print(f"[{i + 1}/{len(runs)}] {key}: ppl {ppl:.3f} (prune {res.seconds:.0f} s)", flush=True)
    data["rows"] = list(rows.values())
    _write_json(path, data)
    return data


def lab_preset(lm: Any, path: Path, layer: int, n_list: tuple[int, ...], ratios: tuple[float, ...],
               meta: dict[str, Any]) -> dict[str, Any]:
    from backend.compression.pruning import lab
    from backend.compression.pruning.jobs import layer_lab

    clock = timed()
    got = layer_lab(lm, layer, n_list=n_list, n_held=16)
    capture_s = clock()
    rows: list[dict[str, Any]] = []
    points: dict[str, Any] = {}
    for key, cap in got["captured"].items():
        for score in lab.LAB_SCORES:
            for ratio in ratios:
                for r in lab.n_sweep(cap, ratio, 1e-4, score):
                    rows.append({**r, "score": score, "ratio": ratio})
        p = lab.study_point(cap, 0.3, n_list[0], 1e-4, "variance")
        pub = lab.public(p)
        for k in ("gamma", "gamma_no_var", "spectrum"):
            pub[k] = [float(f"{v:.5g}") for v in pub[k]]
        points[key] = {**pub, "head_dim": cap.head_dim, **lab.binned_geometry(cap, p)}
    data = {"layer": layer, "n_list": list(n_list), "ratios": list(ratios), "n_held": got["n_held"], "lam": 1e-4,
            "source": got["source"], "capture_s": capture_s, "rows": rows, "default_point": points,
            "provenance": provenance(0, (), script="backend/train/pruning.py", layer=layer, **meta)}
    _write_json(path, data)
    print(f"lab preset written ({len(rows)} rows, capture {capture_s:.0f} s)", flush=True)
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend.train pruning", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", default=str(ASSETS))
    ap.add_argument("--ratios", default="0.1,0.2,0.3,0.4,0.5")
    ap.add_argument("--n-main", type=int, default=32, help="calibration segments of the ratio sweep")
    ap.add_argument("--n-extra", default="8", help="extra calibration sizes at 30 %% (N sweep; e.g. 8,128)")
    ap.add_argument("--n-eval", type=int, default=32)
    ap.add_argument("--n-track", type=int, default=4, help="held-out windows that track per-layer errors")
    ap.add_argument("--lab-layer", type=int, default=15)
    ap.add_argument("--skip-lab", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--quick", action="store_true", help="a tiny smoke run into a temporary folder")
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args(argv)

    from backend.models import load

    ratios = tuple(float(r) for r in args.ratios.split(","))
    extra = tuple(int(n) for n in args.n_extra.split(",") if n.strip())
    out = Path(args.out_dir)
    if args.quick:
        out = Path(tempfile.mkdtemp(prefix="pruning-quick-"))
        ratios, extra, args.n_main, args.n_eval, args.lab_layer = (0.4,), (), 4, 4, 2
    out.mkdir(parents=True, exist_ok=True)
    import torch

    meta = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch_threads":
                        torch.get_num_threads(), "python": sys.version.split()[0]}, "argv": list(argv or []),
            "n_main": args.n_main}
    start = time.perf_counter()
    lm = load("smollm2")
    runs = plan(ratios, args.n_main, extra)
    first = [r for r in runs if r[3] in HEADLINE_RATIOS and r[4] == args.n_main]
    if not args.skip_sweep:  # the headline cells first, then the lab, then the rest of the sweep
        sweep(lm, out / "pruning_sweep.json", first, args.n_eval, args.n_track, args.fresh, meta)
    if not args.skip_lab:
        lab_n = (4, 8) if args.quick else (8, 16, 32, 64, 128)
        lab_preset(lm, out / "pruning_lab.json", args.lab_layer, lab_n, ratios, meta)
    if not args.skip_sweep:
        sweep(lm, out / "pruning_sweep.json", runs, args.n_eval, args.n_track, False, meta)
    print(f"done in {time.perf_counter() - start:.0f} s -> {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
