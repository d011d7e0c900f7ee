"""Many visitors at once (``benchmarks/load.py``): concurrent browser sessions against a real ``streamlit run app.py``
server with each executor, isolation between them, and Ray results equal to local ones.

ci tier: 4 concurrent sessions on the lightest page job (a DADA race on an uploaded CSV) on the in-process server and
on a server whose jobs run on a local Ray cluster of 2 CPUs; the same page job on both servers gives the same
results, and a small sweep on that Ray cluster equals the local sweep (run before the server's first job: its worker
actors then hold one CPU each, every CPU of this cluster). Every session sees
its own upload, result and query-string value and none of another session's.
Full tier: 10 sessions and a soak of 100 sequential jobs over several pages per executor; the server's median RSS
over jobs 91-100 must stay within 1.10x its median over jobs 11-20.
p50 / p95 are printed, not asserted (the machine's load decides them); ``benchmarks/load.py`` records them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import load as L

pytestmark = pytest.mark.e2e
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(scope="module")
def chromium_present() -> None:
    if not Path(L.chromium()).exists():
        pytest.fail(f"Chromium not found at {L.chromium()}: `make install-test` installs Debian's chromium")


@pytest.fixture(scope="module")
def local_server(chromium_present):  # noqa: ARG001
    with L.streamlit_server(None, ARTIFACTS) as server:
        yield server


@pytest.fixture(scope="module")
def ray_server(chromium_present):  # noqa: ARG001
    pytest.importorskip("ray")
    with L.ray_cluster(2) as address, L.streamlit_server(address, ARTIFACTS) as server:
        yield server


def check_load(results: list[L.SessionResult], executor: str) -> None:
    summary = L.summarise(results)
    print(f"\n{executor}: {summary}")
    assert summary["all_done"], [r.status for r in results]
    assert not summary["isolation_problems"], summary["isolation_problems"]
    assert len({r.result_line for r in results}) == len(results)  # each session's own data, own result


def test_four_sessions_in_process(local_server) -> None:
    L.page_job_numbers(local_server.url)  # warm-up: the first job's imports are not part of the load
    check_load(L.load_sessions(local_server.url, 4), "in-process")


def test_ray_sweep_and_page_job_equal_local_and_four_sessions(local_server, ray_server) -> None:
    assert L.small_sweep("ray") == L.small_sweep("local")
    assert L.page_job_numbers(ray_server.url) == L.page_job_numbers(local_server.url)
    check_load(L.load_sessions(ray_server.url, 4), "ray")


@pytest.mark.full
@pytest.mark.parametrize("executor", ["local", "ray"])
def test_full_ten_sessions_and_soak(executor, chromium_present) -> None:  # noqa: ARG001
    if executor == "ray":
        pytest.importorskip("ray")
    out = L.run_executor(executor, 10, 100, ARTIFACTS)
    assert out["load"]["all_done"] and not out["load"]["isolation_problems"], out["load"]
    assert out["soak_all_done"]
    early, late = out["soak_rss_medians_mb"]
    print(f"\n{executor}: load {out['load']}; soak RSS median jobs 11-20 {early:.0f} MiB, 91-100 {late:.0f} MiB")
    assert late <= L.RSS_BOUND * early
