"""STDDN's headline claims on our miniature, with the shipped weights (assets/crowd_*.safetensors).

* On held-out scenes, STDDN beats its no-density ablation and constant velocity on long-horizon MAE and OT.
* Its inference cost per step equals that of the trajectory network alone (the ODE only regularises training).
* The shipped weights reach the scores recorded in assets/crowd_eval.json (and assets/MANIFEST_crowd.md).

ci tier: the 4 held-out scenes, 15 s clips (seed 7). Full tier (@pytest.mark.full): 60 s clips (seed 300), every
method, as recorded by ``python -m backend.train crowd --evaluate``.
"""

from __future__ import annotations

import json

import pytest
import torch

from backend.forecast.crowd.evaluate import evaluate, eval_clip
from backend.forecast.crowd.methods import WEIGHTS, Learned, load_model
from backend.forecast.crowd.rollout import simulate
from backend.forecast.crowd.scenes import get_scene
from backend.forecast.crowd.stddn import count_parameters, micro_macs
from backend.runtime import ASSETS

CI = {"seconds": 15.0, "seed": 7, "stride": 3}
RECORDED = ASSETS / "crowd_eval.json"
GRAD_RATIO_FLOOR = 1e-4  # density-term gradient / acceleration-term gradient; shipped 5.5e-4, session 1 1.5e-7

pytestmark = pytest.mark.skipif(not WEIGHTS["stddn"].is_file() or not WEIGHTS["micro"].is_file(),
                                reason="shipped crowd weights missing (python -m backend.train crowd)")


@pytest.fixture(scope="module")
def ci_table() -> dict[str, dict]:
    res = evaluate(seconds=CI["seconds"], seed=CI["seed"], methods=["stddn", "micro", "constant_velocity"],
                   stride=CI["stride"])
    return {r["method"]: r for r in res.table}


def test_stddn_beats_constant_velocity_on_held_out_scenes(ci_table: dict[str, dict]) -> None:
    s, cv = ci_table["stddn"], ci_table["constant_velocity"]
    print({k: {x: round(v[x], 4) for x in ("MAE", "OT", "MMD")} for k, v in ci_table.items()})
    assert s["MAE"] < cv["MAE"] and s["OT"] < cv["OT"]


ABLATION_NOTE = (
    "Not reproduced on our miniature (see assets/MANIFEST_crowd.md). After the session-2 fixes (DDM temperature kept "
    ">= 1 instead of collapsing to 0.03; goal-term velocity and acceleration input attached in training rollouts as in "
    "the released code; the density gradient on the network rose from 1.5e-7 to 5.5e-4 of the acceleration term's), "
    "the shipped seed-0 STDDN leads its no-density ablation on the 60 s held-out clips by 1.2% MAE (2.275 vs 2.302 m) "
    "and 2.6% OT (1.552 vs 1.593) but trails it on the 15 s ci subset (MAE 1.216 vs 1.210 m, OT 0.891 vs 0.875); "
    "with training seed 1 STDDN has lower MAE (60 s 2.252 vs 2.297; ci 1.192 vs 1.206) but clearly higher OT (60 s "
    "1.753 vs 1.557; ci 0.983 vs 0.924). Mean over the 2 seeds at 60 s: MAE 2.264 vs 2.300 (-1.6%), OT 1.652 vs 1.575 "
    "(+4.9%): no consistent gain beyond the seed-to-seed spread (STDDN's OT moves 13% between seeds)."
)


@pytest.mark.xfail(strict=False, reason=ABLATION_NOTE)
def test_stddn_beats_the_no_density_ablation_on_held_out_scenes(ci_table: dict[str, dict]) -> None:
    """The paper's ablation claim: STDDN beats the same network trained without the density ODE."""
    s, m = ci_table["stddn"], ci_table["micro"]
    assert s["MAE"] < m["MAE"] and s["OT"] < m["OT"]


def test_density_gradient_reaches_the_network() -> None:
    """Session 1's STDDN had an inert density term: its learned DDM temperature collapsed (T 1 -> 0.03, a nearly
    uniform density), and the density loss's gradient on the trajectory network was about 1e-7 of the acceleration
    term's. With the temperature floor (T >= 1) the shipped model's density term is measured here on fixed windows of a
    held-out clip and recorded in assets/crowd_eval.json."""
    from backend.forecast.crowd.training import ClipTensors, collate, loss_gradient_norms, make_window

    model, _ = load_model("stddn")
    clip = eval_clip(get_scene("bottleneck"), 6.0, 11)
    ct = ClipTensors.from_clip(clip)
    batch = collate([make_window(ct, t0, 10) for t0 in (5, 20, 35, 50)], clip.dt)
    g = loss_gradient_norms(model, batch)
    print({k: f"{v:.3g}" for k, v in g.items()})
    assert g["T"] >= 1.0
    assert g["rho_over_a"] > GRAD_RATIO_FLOOR  # session 1: 1.5e-7
    rec = json.loads(RECORDED.read_text())["gradients"]
    assert g["rho_over_a"] == pytest.approx(rec["rho_over_a"], rel=0.05)


def test_ci_scores_match_the_recorded_ones(ci_table: dict[str, dict]) -> None:
    rec = json.loads(RECORDED.read_text())["ci"]
    assert rec["config"] == CI
    for row in rec["table"]:
        if row["method"] in ci_table:
            for k in ("MAE", "OT"):
                assert ci_table[row["method"]][k] == pytest.approx(row[k], rel=0.05), (row["method"], k)


def test_inference_cost_per_step_equals_the_trajectory_network() -> None:
    """At inference STDDN is its trajectory network alone: the same architecture, parameters and multiply-adds as the
    ablation, and its rollout never touches the ODE (wall times are in benchmarks/RESULTS_crowd.md, not asserted)."""
    stddn, _ = load_model("stddn")
    micro, _ = load_model("micro")
    assert count_parameters(stddn.micro) == count_parameters(micro.micro)
    assert micro_macs(stddn.micro_cfg, 100) == micro_macs(micro.micro_cfg, 100)
    assert count_parameters(stddn.ode) > 0  # the ODE exists only in training
    calls = {"n": 0}

    def spy(*args: object, **kwargs: object) -> None:
        calls["n"] += 1

    handle = stddn.ode.register_forward_pre_hook(spy)
    try:
        simulate(eval_clip(get_scene("bottleneck"), 3.0, 11), Learned(stddn.micro, "stddn"))
    finally:
        handle.remove()
    assert calls["n"] == 0


@pytest.fixture(scope="module")
def full_table() -> dict[str, dict]:
    res = evaluate(seconds=60.0, seed=300, stride=2)
    return {r["method"]: r for r in res.table}


@pytest.mark.full
def test_full_scale_recorded_table(full_table: dict[str, dict]) -> None:
    rec = {r["method"]: r for r in json.loads(RECORDED.read_text())["table"]}
    for mth, row in rec.items():
        for k in ("MAE", "OT", "MMD"):
            assert full_table[mth][k] == pytest.approx(row[k], rel=0.05), (mth, k)


@pytest.mark.full
def test_full_scale_stddn_beats_constant_velocity_and_physics(full_table: dict[str, dict]) -> None:
    s = full_table["stddn"]
    for other in ("constant_velocity", "social_force", "orca"):
        assert s["MAE"] < full_table[other]["MAE"] and s["OT"] < full_table[other]["OT"], other


@pytest.mark.full
@pytest.mark.xfail(strict=False, reason=ABLATION_NOTE)
def test_full_scale_stddn_beats_the_no_density_ablation(full_table: dict[str, dict]) -> None:
    s, m = full_table["stddn"], full_table["micro"]
    assert s["MAE"] < m["MAE"] and s["OT"] < m["OT"]
