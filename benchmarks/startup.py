"""Start-up benchmark: `streamlit run` -> home page rendered in Chromium; each embedded model's first conversion and
cached load; the models page's live checks (through the CLI checks, one process each).

    .venv/bin/python benchmarks/startup.py [--repeats 3] [--markdown]

Targets on a 2-core machine: home rendered < 5 s; cached loads < 4 s (MiniLM), < 6 s (SmolLM2), < 3 s (DINOv2).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
TARGETS = {"minilm": 4.0, "smollm2": 6.0, "dinov2": 3.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def home_render_seconds() -> float:
    """Wall time from launching `streamlit run` to the catalog heading visible in headless Chromium."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [PY, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.headless", "true"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.05)
            if time.perf_counter() - t0 > 60:
                raise RuntimeError("server did not start")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                              "--disable-background-networking", "--no-first-run"])
            page = browser.new_page()
            page.goto(url)
            page.get_by_role("heading", name="Method Lab").wait_for(timeout=60_000)
            elapsed = time.perf_counter() - t0
            browser.close()
        return elapsed
    finally:
        proc.terminate()
        proc.wait(10)


def model_check(model_id: str, cache: str) -> dict:
    env = {**os.environ, "METHOD_LAB_CACHE": cache, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([PY, "-m", "backend", "models", "check", model_id, "--json"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}, 1 torch thread"
    rows = []
    homes = [home_render_seconds() for _ in range(args.repeats)]
    rows.append(("home page rendered (streamlit run -> heading in Chromium)", statistics.median(homes), 5.0))
    with tempfile.TemporaryDirectory() as fresh:
        for mid in ("minilm", "smollm2", "dinov2", "efficientnet"):
            first = model_check(mid, fresh)
            cached = [model_check(mid, fresh) for _ in range(args.repeats)]
            rows.append((f"{mid}: first load (incl. one-time conversion)", first["load_s"], None))
            rows.append((f"{mid}: cached load", statistics.median(c["load_s"] for c in cached),
                         TARGETS.get(mid)))
            rows.append((f"{mid}: live check ({cached[0].get('sanity', '')[:40]})",
                         statistics.median(c.get("check_s", float("nan")) for c in cached), None))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Machine: {machine}; load average at the end {load}; medians of {args.repeats}\n")
    print("| measurement | seconds | target | ok |\n|---|---|---|---|")
    for name, sec, target in rows:
        ok = "" if target is None else ("yes" if sec < target else "NO")
        print(f"| {name} | {sec:.2f} | {'' if target is None else f'< {target:g}'} | {ok} |")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/startup.md

    raise SystemExit(record(main, "startup"))
