"""Sweeps fan out: each batch sweep gives the same numbers locally and as Ray tasks (one local Ray instance of 2 CPUs
for the module), on a tiny case: the pruning sweep over ratios x compensations, the SIGMark attack table, the
attribution strength sweep and the MoH training script's multi-seed runs. Wall times (keys ending in ``_s``,
``seconds``, ``_ms``) differ between any two runs and are left out of the comparison."""

from __future__ import annotations

import pytest

from benchmarks.sweeps_ray import numbers  # canonical JSON without timings, shared with the benchmark


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    from backend.executor import RayExecutor

    ex = RayExecutor("local", workers=1, num_cpus=2)
    # start both worker processes and import torch and transformers there once for the module (Ray reuses them)
    ex.map(_warm, [0, 1], [0, 1])
    yield ex
    ray.shutdown()


def _warm(case: int, seed: int) -> int:  # noqa: ARG001
    import time

    import backend.compression.pruning.jobs  # noqa: F401 - torch, transformers

    time.sleep(0.5)  # both tasks at once: one per worker process
    return case


def test_pruning_sweep_equal_on_ray(ray_cluster) -> None:  # noqa: ARG001
    from backend.compression.pruning.jobs import SweepCase, prune_sweep

    cases = [SweepCase("encoder", 0.3, comp, n_calib=4, n_eval=4) for comp in ("none", "rotation")]
    local = prune_sweep(cases, seed=3)
    assert [r["compensation"] for r in local] == ["none", "rotation"] and local[0]["seed"] == 3
    assert 0.0 < local[1]["cosine_mean"] < 1.0
    assert numbers(prune_sweep(cases, seed=3, executor="ray")) == numbers(local)


def sigmark_table(attacks: list[str], methods: list[str] | None, videos: int, executor: str) -> dict:
    from backend.watermark.sigmark.jobs import TableConfig, run_table

    config = TableConfig(attacks=tuple(attacks), videos=videos, seed=0, executor=executor,
                         **({"methods": tuple(methods)} if methods else {}))
    return run_table(config).to_json()


def test_sigmark_attack_table_equal_on_ray(ray_cluster) -> None:  # noqa: ARG001
    # blind GF-PRC extraction without SGO: seconds per video (SGO's search takes about 15 s; the full tier runs it)
    local = sigmark_table(["drop:2"], ["sigmark_nosgo"], 2, "local")
    assert set(local["rows"][0]["methods"]) == {"sigmark_nosgo"}
    assert numbers(sigmark_table(["drop:2"], ["sigmark_nosgo"], 2, "ray")["rows"]) == numbers(local["rows"])


@pytest.mark.full
def test_full_sigmark_attack_table_equal_on_ray_and_to_evaluate(ray_cluster) -> None:  # noqa: ARG001
    from backend.watermark.sigmark.jobs import EvaluateConfig, run_evaluate

    local = sigmark_table(["none", "drop:2"], None, 2, "local")
    assert numbers(sigmark_table(["none", "drop:2"], None, 2, "ray")["rows"]) == numbers(local["rows"])
    # a row of the table is what `sigmark evaluate` reports for that attack
    ev = run_evaluate(EvaluateConfig(attack="drop:2", videos=2, seed=0)).to_json()
    assert numbers(local["rows"][1]["methods"]) == numbers(ev["methods"])


def test_attribution_strength_sweep_equal_on_ray(ray_cluster) -> None:  # noqa: ARG001
    from backend.watermark.attribution.evaluation import clean_decode_set, strength_sweep
    from backend.watermark.datasets import heldout_images

    images, clean = heldout_images(3, seed=0), clean_decode_set(4)
    args = (images, "jpeg", [90.0, 50.0], ["tinyhidden", "dwtDctSvd"], ["random"])
    local = strength_sweep(*args, num_users=1000, clean=clean)
    assert len(local) == 4 and {r["fdr_decodes"] for r in local} == {4}
    assert numbers(strength_sweep(*args, num_users=1000, clean=clean, executor="ray")) == numbers(local)


def test_moh_training_seeds_equal_on_ray(ray_cluster) -> None:  # noqa: ARG001
    from backend.heuristics.moh.moh import MoHConfig
    from backend.train.moh import train_runs

    base = MoHConfig(problem="bpp_online", generations=1, budget=4)
    runs, programs = train_runs(base, 2)
    assert [r["seed"] for r in runs] == [0, 1] and len(programs) == 6
    runs_ray, programs_ray = train_runs(base, 2, executor="ray")
    assert programs_ray == programs and numbers(runs_ray) == numbers(runs)
