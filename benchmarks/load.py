"""Load and soak: N concurrent browser sessions against one ``streamlit run app.py`` server, with each executor.

Each session is its own Playwright context (its own cookies, websocket and Streamlit session) in Debian's Chromium.
It opens the DADA page from a link that sets its settings in the query string (logistic regression on an uploaded
CSV, a session-specific ``dada_rbar``), uploads its own CSV (a file name and a row count no other session uses), runs
the race and waits for the drawn result. Reported: time from the click to the result (p50 / p95), the queue positions
the page showed while waiting (the in-process executor's FIFO lock shows the position; Ray shows 1 while every worker
is busy), and isolation: every session shows its own upload, result and query-string value and none of another's.

With ``ray`` the server runs its jobs on a local Ray cluster of 2 CPUs that this script starts
(``METHOD_LAB_RAY_ADDRESS`` = that cluster's address): one page job is checked against the in-process server's result
(the downloaded results JSON, timings left out) and one small sweep (the nowcast evaluation) runs on the same cluster,
checked against the local sweep; it runs before the server's first job, because the server's worker actors then hold
one CPU each, which is every CPU of this cluster.

The soak runs sequential jobs, each in a new session, cycling over several pages, and records the server process's
resident memory (``/proc/<pid>/status`` VmRSS) after every job and the ratio of its median over jobs 91-100 to its
median over jobs 11-20 (bound 1.10x: printed here, asserted by the full tier of ``tests/test_load.py``).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/load.py [--concurrent N] [--soak JOBS] [--executors local ray]

``tests/test_load.py`` runs the short version in the ci tier and this full version in the full tier.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import csv
import io
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PRIMARY = "[data-testid='stBaseButton-primary'], [data-testid='stBaseButton-primaryFormSubmit']"
FINISHED = re.compile(r": (done in|stopped after) [0-9.]+ s")  # the status label of ui.runner.run_job
QUEUE = re.compile(r"number (\d+) in the queue")
RSS_BOUND = 1.10
TIMING_KEYS = re.compile(r"(^|_)(seconds|secs|time|times|wall|elapsed)(_|$)|_s$|_ms$")

# the pages of the soak: (name, url path and query, primary-button job) cycled in this order
SOAK_PAGES = [
    ("dada", "/dada?dada_problem=Ill-conditioned+quadratic&dada_dim=20&dada_iters=250&dada_sweep=false"),
    ("dada-l1", "/dada?dada_problem=L1+%28nonsmooth%29&dada_dim=50&dada_iters=250&dada_sweep=false"),
    ("dualrs", "/dualrs"),
    ("softbon", "/softbon"),
]


def chromium() -> str:
    import shutil

    return os.environ.get("METHOD_LAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB (VmRSS of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


# --------------------------------------------------------------------------------------------------- processes
@dataclass
class Server:
    url: str
    proc: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid


def _run(coro):
    """``asyncio.run(coro)``, in a thread of its own when this thread already runs an event loop (Playwright's sync
    API in the same pytest worker leaves one running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@contextlib.contextmanager
def streamlit_server(ray_address: str | None = None, log_dir: Path | None = None,
                     log_name: str | None = None) -> Iterator[Server]:
    """``streamlit run app.py`` on a free port (in-process executor, or Ray at ``ray_address``), with the settings of
    ``make run``; its output goes to ``log_dir / log_name``; stopped on exit. The browser suite's server too."""
    port = free_port()
    env = {"MALLOC_ARENA_MAX": "2", **os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("METHOD_LAB_RAY_ADDRESS", None)
    if ray_address:
        env["METHOD_LAB_RAY_ADDRESS"] = ray_address
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="load-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / (log_name or f"load-server-{'ray' if ray_address else 'local'}.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false", "--global.developmentMode", "false"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not become healthy:\n" + log_path.read_text()[-3000:])
        yield Server(url, proc, log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextlib.contextmanager
def ray_cluster(num_cpus: int = 2) -> Iterator[str]:
    """A local Ray cluster of ``num_cpus`` CPUs owned by this process; yields its address (host:port)."""
    import ray

    from backend.executor import ensure_ray

    ensure_ray("local", num_cpus=num_cpus)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


# ------------------------------------------------------------------------------------------------------ browser
async def wait_for_app(page, timeout: float = 120_000) -> None:  # noqa: ANN001
    """Streamlit's readiness sequence (as tests/e2e): attached, connected, script not running, no skeleton."""
    await page.wait_for_selector("[data-testid='stAppViewContainer']", state="attached", timeout=timeout)
    await page.wait_for_timeout(250)
    await page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout)
    await page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout)
    deadline = time.monotonic() + timeout / 1000
    while await page.get_by_test_id("stSkeleton").count() and time.monotonic() < deadline:
        await page.wait_for_timeout(100)


async def run_primary(page, timeout_s: float = 300) -> tuple[float, list[int], str]:  # noqa: ANN001
    """Click the first visible primary button, poll until the job's status says done; (seconds, queue positions
    seen, status text)."""
    button = page.locator(PRIMARY).filter(visible=True).first
    await button.wait_for(state="visible", timeout=60_000)
    positions: list[int] = []
    t0 = time.monotonic()
    await button.click()
    finished = page.get_by_text(FINISHED).first
    error = page.get_by_test_id("stAlertContentError")
    while not await finished.count():
        if await error.count():  # a job refused before it started (e.g. by the executor) has no status line
            return time.monotonic() - t0, positions, "error: " + (await error.first.inner_text()).strip()
        for text in await page.get_by_text(QUEUE).all_inner_texts():
            if m := QUEUE.search(text):
                positions.append(int(m.group(1)))
        if time.monotonic() - t0 > timeout_s:
            raise TimeoutError(f"no result within {timeout_s:.0f} s")
        await asyncio.sleep(0.1)
    seconds = time.monotonic() - t0
    status = await finished.inner_text()
    await wait_for_app(page)
    return seconds, positions, status


def session_csv(i: int) -> tuple[str, bytes, int]:
    """Session ``i``'s upload: a distinctive name and row count, two numeric features and a two-class label."""
    import numpy as np

    rows = 40 + 7 * i
    rng = np.random.default_rng(1000 + i)
    x = rng.normal(size=(rows, 2))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.5, size=rows) > 0, "yes", "no")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["f1", "f2", "label"])
    for (a, b), lab in zip(x, y, strict=True):
        w.writerow([f"{a:.5f}", f"{b:.5f}", lab])
    return f"s{i:02d}-{int(rng.integers(1 << 24)):06x}.csv", buf.getvalue().encode(), rows  # short: chips elide


RBARS = [-10, -9, -8, -7, -5, -4, -3, -2, -1, 0, 1]  # the slider's range without its default -6 (left out of the URL)


def session_rbar(i: int) -> int:
    return RBARS[i % len(RBARS)]


def url_values(url: str, key: str) -> list[str]:
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(url).query).get(key, [])


@dataclass
class SessionResult:
    index: int
    seconds: float
    positions: list[int]
    status: str
    file_name: str
    rows: int
    rbar: int
    result_line: str = ""
    problems: list[str] = field(default_factory=list)


async def _session(browser, url: str, i: int, start: asyncio.Event,  # noqa: ANN001
                   ready: list[int]) -> tuple[object, SessionResult]:
    name, data, rows = session_csv(i)
    rbar = session_rbar(i)
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await ctx.new_page()
    await page.goto(f"{url}/dada?dada_problem=Logistic+%2F+softmax+regression&dada_data=Upload+a+CSV&dada_iters=250"
                    f"&dada_sweep=false&dada_rbar={rbar}")
    await wait_for_app(page)
    await page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}])
    await wait_for_app(page)
    await page.get_by_text(f"{name}: {rows} rows").first.wait_for(timeout=60_000)
    ready.append(i)
    await start.wait()  # every session clicks at about the same moment
    seconds, positions, status = await run_primary(page)
    res = SessionResult(i, seconds, positions, status, name, rows, rbar)
    line = page.get_by_text(re.compile(r"^logistic, d = \d+, constraint none; f\* = ")).first
    if await line.count():
        res.result_line = (await line.inner_text()).strip()
    return page, res


async def _check_isolation(page, res: SessionResult, others: list[SessionResult]) -> None:  # noqa: ANN001
    """Own upload, result and query-string value shown; no other session's."""
    html = await page.content()
    chips = await page.get_by_test_id("stFileChipName").all_inner_texts()
    if chips != [res.file_name]:
        res.problems.append(f"file chips {chips} != [{res.file_name}]")
    if f"{res.file_name}: {res.rows} rows" not in html:
        res.problems.append("own upload's caption missing")
    if not res.result_line:
        res.problems.append("own result missing")
    slider = page.get_by_role("slider", name=re.compile("initial guess rbar"))
    value = await slider.get_attribute("aria-valuetext")
    if value != str(res.rbar) or url_values(page.url, "dada_rbar") != [str(res.rbar)]:
        res.problems.append(f"query-string state: slider {value}, url {page.url}")
    for o in others:
        if o.file_name in html:
            res.problems.append(f"sees session {o.index}'s upload {o.file_name}")
        if o.result_line and o.result_line != res.result_line and o.result_line in html:
            res.problems.append(f"sees session {o.index}'s result")
        if o.rbar != res.rbar and str(o.rbar) in url_values(page.url, "dada_rbar"):
            res.problems.append(f"sees session {o.index}'s query string")


async def _load(url: str, sessions: int) -> list[SessionResult]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            start, ready = asyncio.Event(), []
            tasks = [asyncio.create_task(_session(browser, url, i, start, ready)) for i in range(sessions)]
            while len(ready) < sessions and not any(t.done() for t in tasks):
                await asyncio.sleep(0.1)
            start.set()  # every upload in place (or a session failed: gather raises its error)
            got = await asyncio.gather(*tasks)
            results = [r for _, r in got]
            for page, res in got:
                await _check_isolation(page, res, [o for o in results if o is not res])
            return results
        finally:
            await browser.close()


def load_sessions(url: str, sessions: int) -> list[SessionResult]:
    """``sessions`` concurrent browser sessions each running one DADA job (see the module docstring)."""
    return _run(_load(url, sessions))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))
    return s[k]


def summarise(results: list[SessionResult]) -> dict[str, object]:
    secs = [r.seconds for r in results]
    return {"sessions": len(results), "p50_s": statistics.median(secs), "p95_s": percentile(secs, 95),
            "max_s": max(secs), "queue_positions_seen": sorted({p for r in results for p in r.positions}),
            "sessions_that_waited": sum(1 for r in results if r.positions),
            "all_done": all("done in" in r.status for r in results),
            "isolation_problems": [f"session {r.index}: {p}" for r in results for p in r.problems]}


# ------------------------------------------------------------------------------------------- one job, compared
async def _page_job_json(url: str, path: str) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            ctx = await browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
            page = await ctx.new_page()
            await page.goto(url + path)
            await wait_for_app(page)
            _, _, status = await run_primary(page)
            if "done in" not in status:
                raise RuntimeError(f"the page job did not finish: {status}")
            async with page.expect_download() as dl:
                await page.get_by_role("button", name="Download results (JSON)").click()
            return json.loads(Path(await (await dl.value).path()).read_text())
        finally:
            await browser.close()


EQUAL_JOB = "/dada?dada_problem=Ill-conditioned+quadratic&dada_dim=20&dada_iters=250&dada_sweep=true"


def page_job_numbers(url: str, path: str = EQUAL_JOB) -> str:
    """The page job's downloaded results JSON without timings and provenance, as canonical JSON."""
    return numbers({k: v for k, v in _run(_page_job_json(url, path)).items() if k != "provenance"})


def numbers(obj: object) -> str:
    def strip(o: object) -> object:
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if not TIMING_KEYS.search(str(k))}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    return json.dumps(strip(obj), sort_keys=True)


def small_sweep(executor: str) -> str:
    """The nowcast evaluation of 2 held-out cases (3 methods, 4 leads) as canonical JSON without wall times."""
    from backend.forecast.nowcast.pipeline import evaluate, heldout_seeds

    got = evaluate(heldout_seeds(2), ["persistence", "extrapolation", "steps"], n_leads=4, executor=executor)
    return json.dumps({m: {k: v for k, v in s.items() if not k.startswith("seconds")} for m, s in got.items()},
                      sort_keys=True)


# ----------------------------------------------------------------------------------------------------------- soak
async def _soak(server: Server, jobs: int, pages: list[tuple[str, str]]) -> list[dict[str, object]]:
    from playwright.async_api import async_playwright

    out = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            for j in range(jobs):
                name, path = pages[j % len(pages)]
                ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
                page = await ctx.new_page()
                await page.goto(server.url + path)
                await wait_for_app(page)
                seconds, _, status = await run_primary(page)
                await ctx.close()  # the session ends with its context
                out.append({"job": j + 1, "page": name, "seconds": seconds, "done": "done in" in status,
                            "rss_mb": rss_mb(server.pid)})
        finally:
            await browser.close()
    return out


def soak(server: Server, jobs: int, pages: list[tuple[str, str]] | None = None) -> list[dict[str, object]]:
    """``jobs`` sequential jobs, each in a new session, cycling over ``pages``; the server's RSS after each."""
    return _run(_soak(server, jobs, pages or SOAK_PAGES))


def soak_medians(rows: list[dict[str, object]]) -> tuple[float, float]:
    """Median server RSS (MiB) over jobs 11-20 and over jobs 91-100."""
    rss = [float(r["rss_mb"]) for r in rows]
    return statistics.median(rss[10:20]), statistics.median(rss[90:100])


# ----------------------------------------------------------------------------------------------------------- main
def run_executor(executor: str, sessions: int, soak_jobs: int, log_dir: Path) -> dict[str, object]:
    """The load (and the soak, if ``soak_jobs``) on one server with ``executor``; Ray: a local cluster of 2 CPUs."""
    out: dict[str, object] = {"executor": executor}
    with contextlib.ExitStack() as stack:
        address = stack.enter_context(ray_cluster(2)) if executor == "ray" else None
        server = stack.enter_context(streamlit_server(address, log_dir))
        if executor == "ray":  # before the server's worker actors take the cluster's CPUs
            out["sweep_equal"] = small_sweep("ray") == small_sweep("local")
        t = time.perf_counter()
        out["warm_up_job"] = page_job_numbers(server.url)  # imports, Ray workers and first loads: not in the load
        out["warm_up_s"] = time.perf_counter() - t
        results = load_sessions(server.url, sessions)
        out["load"] = summarise(results)
        out["load_seconds"] = [round(r.seconds, 2) for r in results]
        if soak_jobs:
            rows = soak(server, soak_jobs)
            out["soak"] = rows
            if soak_jobs >= 100:
                out["soak_rss_medians_mb"] = soak_medians(rows)
            out["soak_all_done"] = all(r["done"] for r in rows)
        out["server_rss_end_mb"] = rss_mb(server.pid)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrent", type=int, default=10, help="concurrent browser sessions")
    ap.add_argument("--soak", type=int, default=100, help="sequential jobs of the soak (0: none)")
    ap.add_argument("--executors", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    ap.add_argument("--json", default=None, help="also write the raw results here")
    args = ap.parse_args()
    log_dir = Path(tempfile.mkdtemp(prefix="load-"))
    runs = [run_executor(ex, args.concurrent, args.soak, log_dir) for ex in args.executors]
    ok = True
    print(f"{args.concurrent} concurrent browser sessions (Playwright contexts, Chromium), each: the DADA page from a "
          "link, its own CSV upload, one race (logistic regression, 250 iterations); time from the click to the "
          "result. Ray: a local cluster of 2 CPUs, 2 worker actors.\n")
    print("| executor | p50 s | p95 s | max s | queue positions seen | sessions that waited | isolation |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        ld = r["load"]
        iso = "ok" if not ld["isolation_problems"] else f"{len(ld['isolation_problems'])} problems"
        ok &= bool(ld["all_done"]) and not ld["isolation_problems"]
        print(f"| {r['executor']} | {ld['p50_s']:.2f} | {ld['p95_s']:.2f} | {ld['max_s']:.2f} | "
              f"{', '.join(map(str, ld['queue_positions_seen'])) or '-'} | {ld['sessions_that_waited']} | {iso} |")
    if len(runs) == 2:
        same = runs[0]["warm_up_job"] == runs[1]["warm_up_job"]
        ok &= same
        print(f"\nThe same DADA page job (quadratic, d = 20, 250 iterations, rbar sweep) on both servers: results "
              f"identical: {same}.")
    for r in runs:
        if "sweep_equal" in r:
            ok &= bool(r["sweep_equal"])
            print(f"Nowcast evaluation (2 cases) on the server's Ray cluster equals the local run: "
                  f"{r['sweep_equal']}.")
    for r in runs:
        if "soak" in r:
            rows = r["soak"]
            rss = [x["rss_mb"] for x in rows]
            print(f"\nSoak, {r['executor']}: {len(rows)} sequential jobs, each in a new session, over "
                  f"{', '.join(dict.fromkeys(x['page'] for x in rows))}; server RSS (MiB) after jobs "
                  + ", ".join(f"{k}: {rss[k - 1]:.0f}" for k in (1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
                              if k <= len(rss)))
            if "soak_rss_medians_mb" in r:
                a, b = r["soak_rss_medians_mb"]
                held = b <= RSS_BOUND * a  # printed here; tests/test_load.py asserts it in the full tier
                ok &= bool(r["soak_all_done"])
                print(f"median RSS jobs 11-20 {a:.0f} MiB, jobs 91-100 {b:.0f} MiB: ratio {b / a:.3f} "
                      f"(bound {RSS_BOUND:.2f}: {'holds' if held else 'FAILS'}); job p50 "
                      f"{statistics.median(x['seconds'] for x in rows):.2f} s")
    for r in runs:
        for problem in r["load"]["isolation_problems"]:
            print(f"isolation ({r['executor']}): {problem}")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "load"))
