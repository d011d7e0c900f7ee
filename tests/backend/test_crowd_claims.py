"""STDDN's headline claims on our miniature, with the shipped weights (assets/crowd_*.safetensors).

* On held-out scenes, STDDN beats its no-density ablation and constant velocity on long-horizon MAE and OT.
* Its inference cost per step equals that of the trajectory network alone (the ODE only regularises training).
* The shipped weights reach the scores recorded in assets/crowd_eval.json (quoted in assets/manifest.json).

ci tier: the 4 held-out scenes, 15 s clips (seed 7). Full tier (@pytest.mark.full): 60 s clips (seed 300), every
method, as recorded by ``python -m backend.train crowd --evaluate``.
"""

from __future__ import annotations

import json

import pytest

from backend.forecast.crowd.evaluate import eval_clip, evaluate
from backend.forecast.crowd.methods import Learned, load_model, seed_weights, shipped_seeds, weights_path
from backend.forecast.crowd.rollout import simulate
from backend.forecast.crowd.scenes import get_scene
from backend.forecast.crowd.stddn import count_parameters, micro_macs
from backend.runtime import ASSETS

CI = {"seconds": 15.0, "seed": 7, "stride": 3}
RECORDED = ASSETS / "crowd_eval.json"
# density-term gradient / acceleration-term gradient: 4.5e-3 for the shipped model; about 1e-7 when the DDM
# temperature is left free to collapse (see the STDDN module docstring)
GRAD_RATIO_FLOOR = 1e-3

pytestmark = pytest.mark.skipif(not weights_path("stddn").is_file() or not weights_path("micro").is_file(),
                                reason="shipped crowd weights missing (python -m backend.train crowd)")


@pytest.fixture(scope="module")
def ci_table() -> dict[str, dict]:
    res = evaluate(seconds=CI["seconds"], seed=CI["seed"], methods=["stddn", "micro", "constant_velocity"],
                   stride=CI["stride"])
    return {r["method"]: r for r in res.table}


def test_stddn_beats_constant_velocity_on_held_out_scenes(ci_table: dict[str, dict], record_claim) -> None:
    s, cv = ci_table["stddn"], ci_table["constant_velocity"]
    record_claim(stddn_MAE=s["MAE"], stddn_OT=s["OT"], constant_velocity_MAE=cv["MAE"], constant_velocity_OT=cv["OT"])
    print({k: {x: round(v[x], 4) for x in ("MAE", "OT", "MMD")} for k, v in ci_table.items()})
    assert s["MAE"] < cv["MAE"] and s["OT"] < cv["OT"]


ABLATION_NOTE = (
    "Not reproduced on our miniature. With the stages and the ODE's outflow of the released code (released "
    "supervisor: trajectory terms only / ODE only with the network frozen / joint; edge-flux outflow) the ODE's density "
    "loss is 61% below 'the density stays put' and its gradient on the network 4.5e-3 of the acceleration term's. "
    "Mean over 3 training seeds (0-2, same data and budget), STDDN vs its "
    "ablation: 60 s held-out MAE 2.273 vs 2.316 m (-1.8%, ahead for all 3 seeds) but OT 1.791 vs 1.601 (+11.9%, "
    "behind for all 3; spread 1.684-1.888 vs 1.557-1.653); ci subset MAE 1.204 vs 1.211 m (-0.6%), OT 0.950 vs 0.904 "
    "(+5.1%). The OT deficit is the held-out bottleneck (OT 1.91 vs 1.04; the other three scenes 1.75 vs 1.79), where "
    "STDDN's agents cross the wall with the gap more often (0.30 vs 0.20 wall crossings per agent). The "
    "released network sees the same obstacle context as ours (top-5 obstacle points within 4 m in view, 1-layer "
    "obstacle EGNN) and its rollouts have no wall handling either, so nothing was missing; but the trained networks "
    "barely use the walls (a walker 0.5 m from a wall is pushed away by +0.015 m/s^2 for STDDN, +0.028 for the "
    "ablation, mean over seeds, vs 2.29 for the generator's social force), and near the bottleneck's walls STDDN "
    "accelerates toward them more (-0.180 vs -0.125 m/s^2 along the normal, every seed; ground truth -0.064): the "
    "released loss has no wall term and the ground truth's wall barrier is short-range, so the learned models leak "
    "through walls (the generator, social force and ORCA never do). With walls enforced for both models (diagnostic "
    "WallGuard, in neither the paper nor the code) the 60 s means are MAE 2.268 vs 2.321 m (-2.3%, 3/3 seeds) and OT "
    "1.642 vs 1.585 (+3.6%, 1/3 seeds; bottleneck 1.78 vs 1.22): the guard stops the leaks but not STDDN's pull toward "
    "the walls, so the deficit shrinks but remains. A schedule-matched density control (STDDN's stages, frozen "
    "physics epochs and batches, density gradient cut: --joint-lambda2 0) gives MAE 2.264 m / OT 1.778 over the same "
    "seeds: STDDN is +0.4% / +0.8% against it, so the density term barely moves the network (gradient 0.0045 of the "
    "acceleration term's; seed 2's best checkpoint is epoch 7, before any density gradient) and the differences from "
    "the ablation, walls included, come from the schedule (25 network epochs against 30), not the density ODE."
)


@pytest.fixture(scope="module")
def ci_seed_tables(ci_table: dict[str, dict]) -> dict[int, dict[str, dict]]:
    """STDDN and its ablation of every shipped training seed on the ci subset (seed 0 = the default weights)."""
    out = {0: ci_table}
    for s in shipped_seeds():
        if s:
            nets = {k: load_model(k, seed_weights(k, s))[0].micro for k in ("stddn", "micro")}
            res = evaluate(seconds=CI["seconds"], seed=CI["seed"], methods=["stddn", "micro"], stride=CI["stride"],
                           nets=nets)
            out[s] = {r["method"]: r for r in res.table}
    return out


def _seed_means(tables: dict[int, dict[str, dict]]) -> dict[str, dict[str, float]]:
    return {m: {k: sum(t[m][k] for t in tables.values()) / len(tables) for k in ("MAE", "OT")}
            for m in ("stddn", "micro")}


@pytest.mark.xfail(strict=False, reason=ABLATION_NOTE)
def test_stddn_beats_the_no_density_ablation_on_held_out_scenes(ci_seed_tables: dict[int, dict[str, dict]],
                                                                record_claim) -> None:
    """The paper's ablation claim: STDDN beats the same network trained without the density ODE (same data, network,
    seed and budget), decided on the mean over the shipped training seeds."""
    mean = _seed_means(ci_seed_tables)
    record_claim(stddn_MAE=mean["stddn"]["MAE"], stddn_OT=mean["stddn"]["OT"], ablation_MAE=mean["micro"]["MAE"],
                 ablation_OT=mean["micro"]["OT"], seeds=len(ci_seed_tables))
    print({s: {m: {k: round(t[m][k], 4) for k in ("MAE", "OT")} for m in ("stddn", "micro")}
           for s, t in ci_seed_tables.items()}, mean)
    assert mean["stddn"]["MAE"] < mean["micro"]["MAE"] and mean["stddn"]["OT"] < mean["micro"]["OT"]


def test_seed_scores_match_the_recorded_ones(ci_seed_tables: dict[int, dict[str, dict]]) -> None:
    """Every shipped seed pair reaches the ci scores recorded in assets/crowd_eval_seed<S>.json."""
    for s, t in ci_seed_tables.items():
        if s == 0:
            continue
        rec = json.loads((ASSETS / f"crowd_eval_seed{s}.json").read_text())
        assert rec["ci"]["config"] == CI
        for row in rec["ci"]["table"]:
            for k in ("MAE", "OT"):
                assert t[row["method"]][k] == pytest.approx(row[k], rel=0.05), (s, row["method"], k)


def test_density_gradient_reaches_the_network() -> None:
    """Without the temperature floor STDDN's density term is inert: its learned DDM temperature collapses (T 1 -> 0.03,
    a nearly uniform density), and the density loss's gradient on the trajectory network is about 1e-7 of the
    acceleration term's. With the floor (T >= 1), the released stage semantics and the edge-flux outflow the shipped
    model's ODE fits the density flow and its pull on the network is measured here on fixed windows of a
    held-out clip and recorded in assets/crowd_eval.json."""
    from backend.forecast.crowd.training import ClipTensors, collate, loss_gradient_norms, make_window

    model, _ = load_model("stddn")
    clip = eval_clip(get_scene("bottleneck"), 6.0, 11)
    ct = ClipTensors.from_clip(clip)
    batch = collate([make_window(ct, t0, 10) for t0 in (5, 20, 35, 50)], clip.dt)
    g = loss_gradient_norms(model, batch)
    print({k: f"{v:.3g}" for k, v in g.items()})
    assert g["T"] >= 1.0
    assert g["rho_over_a"] > GRAD_RATIO_FLOOR
    # the trained ODE models the flow: well below "the density stays as at the window's start" (the relaxed outflow of
    # the STDDN docstring reaches only -13%)
    assert g["loss_rho"] < 0.5 * g["loss_rho_still"]
    rec = json.loads(RECORDED.read_text())["gradients"]
    assert g["rho_over_a"] == pytest.approx(rec["rho_over_a"], rel=0.05)


def test_recorded_wall_diagnostic_matches_the_shipped_weights() -> None:
    """The wall diagnostic the manifest and the page quote (assets/crowd_eval.json["walls"]) covers every
    shipped seed and is what the shipped networks give (``evaluate.wall_response``: a lone walker near a straight
    wall). It documents a limit (the networks barely react to walls), so it is checked for reproducibility, not
    bounded."""
    from backend.forecast.crowd.evaluate import wall_response

    rec = json.loads(RECORDED.read_text())["walls"]
    assert sorted(int(s) for s in rec["seeds"]) == shipped_seeds()
    for kind in ("stddn", "micro"):
        w = wall_response(load_model(kind)[0].micro)
        assert w["distances"] == rec["distances"]
        assert w["learned"] == pytest.approx(rec["seeds"]["0"][kind]["wall_response"], abs=1e-4), kind


def test_recorded_density_control_covers_the_shipped_seeds() -> None:
    """The schedule-matched density control (assets/crowd_eval.json["density_control"]) was recorded for
    every shipped seed against these weights (the STDDN best epochs it quotes are the shipped ones), and the manifest /
    page sentence reads it."""
    from backend.forecast.crowd.evaluate import ablation_summary, control_text

    ev = json.loads(RECORDED.read_text())
    ctl = ev["density_control"]
    assert sorted(int(s) for s in ctl["seeds"]) == shipped_seeds()
    for s, rec in ctl["seeds"].items():
        meta = load_model("stddn", seed_weights("stddn", int(s)))[1]
        assert rec["stddn_best_epoch"] == meta.extra["training"]["best_epoch"]
        assert set(rec["table"]) >= {"MAE", "OT"} and len(rec["per_scene"]) == 4
    text = control_text(ctl, ablation_summary(), ev.get("walls"))
    assert "Density control" in text and "STDDN against this control" in text


def test_ci_scores_match_the_recorded_ones(ci_table: dict[str, dict]) -> None:
    rec = json.loads(RECORDED.read_text())["ci"]
    assert rec["config"] == CI
    for row in rec["table"]:
        if row["method"] in ci_table:
            for k in ("MAE", "OT"):
                assert ci_table[row["method"]][k] == pytest.approx(row[k], rel=0.05), (row["method"], k)


def test_inference_cost_per_step_equals_the_trajectory_network(record_claim) -> None:
    """At inference STDDN is its trajectory network alone: the same architecture, parameters and multiply-adds as the
    ablation, and its rollout never touches the ODE (wall times are in benchmarks/results/crowd.md, not asserted)."""
    stddn, _ = load_model("stddn")
    micro, _ = load_model("micro")
    record_claim(parameters=count_parameters(stddn.micro), macs_per_step_100_agents=micro_macs(stddn.micro_cfg, 100))
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
def test_full_scale_stddn_beats_constant_velocity_and_physics(full_table: dict[str, dict], record_claim) -> None:
    s = full_table["stddn"]
    record_claim(**{f"{m}_{k}": full_table[m][k] for m in ("stddn", "constant_velocity", "social_force", "orca")
                    for k in ("MAE", "OT")})
    for other in ("constant_velocity", "social_force", "orca"):
        assert s["MAE"] < full_table[other]["MAE"] and s["OT"] < full_table[other]["OT"], other


@pytest.mark.full
@pytest.mark.xfail(strict=False, reason=ABLATION_NOTE)
def test_full_scale_stddn_beats_the_no_density_ablation(full_table: dict[str, dict], record_claim) -> None:
    """60 s held-out clips, mean over the shipped training seeds."""
    tables = {0: full_table}
    for s in shipped_seeds():
        if s:
            nets = {k: load_model(k, seed_weights(k, s))[0].micro for k in ("stddn", "micro")}
            res = evaluate(seconds=60.0, seed=300, methods=["stddn", "micro"], stride=2, nets=nets)
            tables[s] = {r["method"]: r for r in res.table}
    mean = _seed_means(tables)
    print(mean)
    record_claim(stddn_MAE=mean["stddn"]["MAE"], stddn_OT=mean["stddn"]["OT"], ablation_MAE=mean["micro"]["MAE"],
                 ablation_OT=mean["micro"]["OT"], seeds=len(tables))
    assert mean["stddn"]["MAE"] < mean["micro"]["MAE"] and mean["stddn"]["OT"] < mean["micro"]["OT"]
