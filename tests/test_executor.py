"""The executor interface (backend.executor): the in-process default and Ray (a local cluster of 2 CPUs)."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

from backend.errors import InputError, JobCancelled
from backend.executor import ExecutorError, LocalExecutor, RayExecutor, case_seed, map_cases
from backend.runtime import CancelToken, JobLock


def counting_job(n: int, progress=None) -> int:  # noqa: ANN001
    for i in range(n):
        progress((i + 1) / n, f"step {i + 1}")
    return n * 2


def bad_job(progress=None) -> None:  # noqa: ANN001
    raise InputError("Pick a ratio between 0 and 1.")


def slow_job(steps: int, progress=None) -> int:  # noqa: ANN001
    for i in range(steps):
        time.sleep(0.05)
        progress(i / steps, "working")
    return steps


def noisy_case(case: int, seed: int) -> float:
    return float(np.random.default_rng(seed).normal(size=case + 1).sum())


def pid_job(progress=None) -> int:  # noqa: ANN001
    progress(1.0, "pid")
    return os.getpid()


# ------------------------------------------------------------------------------------------------------ local
def test_local_runs_and_reports_progress() -> None:
    seen: list[tuple[float, str]] = []
    out = LocalExecutor(JobLock()).run(counting_job, (3,), {}, progress=lambda f, m="": seen.append((f, m)),
                                       token=CancelToken(time_cap_s=10))
    assert out == 6 and seen[-1] == (1.0, "step 3")


def test_local_input_error_and_cancel() -> None:
    ex = LocalExecutor(JobLock())
    with pytest.raises(InputError, match="ratio"):
        ex.run(bad_job, (), {}, progress=None, token=CancelToken())
    token = CancelToken()
    token.cancel()
    with pytest.raises(JobCancelled):
        ex.run(counting_job, (3,), {}, progress=None, token=token)


def test_case_seeds_are_per_index() -> None:
    assert case_seed(7, 3) == case_seed(7, 3)
    assert len({case_seed(7, i) for i in range(50)}) == 50
    assert case_seed(7, 0) != case_seed(8, 0)
    a = map_cases(noisy_case, [1, 2, 3], sweep_seed=5)
    b = [noisy_case(c, seed=case_seed(5, i)) for i, c in enumerate([1, 2, 3])]
    assert a == b


# -------------------------------------------------------------------------------------------------------- ray
@pytest.fixture(scope="module")
def ray_ex():
    ray = pytest.importorskip("ray")
    ex = RayExecutor("local", workers=1, num_cpus=2, grace_s=3)
    yield ex
    ray.shutdown()


def test_ray_job_progress_equal_sweep_and_model_reuse(ray_ex: RayExecutor) -> None:
    seen: list[tuple[float, str]] = []
    out = ray_ex.run(counting_job, (4,), {}, progress=lambda f, m="": seen.append((f, m)), token=CancelToken(10))
    assert out == 8 and seen[-1] == (1.0, "step 4")
    # one worker process for every job: whatever it loaded stays loaded
    pids = {ray_ex.run(pid_job, (), {}, progress=None, token=CancelToken(10)) for _ in range(2)}
    assert len(pids) == 1 and os.getpid() not in pids
    with pytest.raises(InputError, match="Pick a ratio"):
        ray_ex.run(bad_job, (), {}, progress=None, token=CancelToken(10))
    cases = [0, 1, 2, 3]
    assert map_cases(noisy_case, cases, 11, executor="ray") == map_cases(noisy_case, cases, 11)


def test_ray_cancel_and_time_cap(ray_ex: RayExecutor) -> None:
    token = CancelToken(time_cap_s=30)
    t0 = time.monotonic()
    import threading

    threading.Timer(0.5, token.cancel).start()
    with pytest.raises(JobCancelled, match="cancelled"):
        ray_ex.run(slow_job, (400,), {}, progress=None, token=token)
    assert time.monotonic() - t0 < 5
    with pytest.raises(JobCancelled, match="time cap"):
        ray_ex.run(slow_job, (400,), {}, progress=None, token=CancelToken(time_cap_s=0.5))
    # the same worker is still usable afterwards (cooperative cancel keeps it)
    assert ray_ex.run(counting_job, (2,), {}, progress=None, token=CancelToken(10)) == 4


def test_ray_refuses_streamlit_closures(ray_ex: RayExecutor) -> None:
    import streamlit as st

    box = st.empty()

    def job(progress=None):  # noqa: ANN001, ANN202
        box.write("x")

    with pytest.raises(ExecutorError, match="Streamlit objects"):
        ray_ex.run(job, (), {}, progress=None, token=CancelToken(10))


def test_bad_address_message() -> None:
    pytest.importorskip("ray")
    import subprocess
    import sys

    code = ("from backend.executor import RayExecutor, ExecutorError\n"
            "try:\n RayExecutor('127.0.0.1:1')\nexcept ExecutorError as e:\n print('MSG', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                         env={**os.environ, "RAY_gcs_rpc_server_connect_timeout_s": "3"})
    assert "MSG The Ray cluster at '127.0.0.1:1'" in out.stdout, out.stdout + out.stderr


def test_ray_nowcast_evaluation_equals_local(ray_ex: RayExecutor) -> None:
    from backend.forecast.nowcast.pipeline import evaluate

    seeds, methods = [20000, 20001], ["persistence", "extrapolation", "steps"]

    def scores(summaries: dict) -> str:  # every score; wall times (seconds_*) differ between any two runs
        kept = {m: {k: v for k, v in s.items() if not k.startswith("seconds")} for m, s in summaries.items()}
        return json.dumps(kept, sort_keys=True)  # NaN-aware: NaN != NaN inside a dict comparison

    local = scores(evaluate(seeds, methods, n_leads=4))
    assert scores(evaluate(seeds, methods, n_leads=4, executor="ray")) == local


def test_cli_bad_address_exits_2_with_message() -> None:
    pytest.importorskip("ray")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "backend", "nowcast", "evaluate", "--executor", "ray", "--cases", "1",
                          "--leads", "2", "--json"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "METHOD_LAB_RAY_ADDRESS": "127.0.0.1:1"})
    assert out.returncode == 2, out.stderr
    assert "could not be reached" in json.loads(out.stdout)["error"]
