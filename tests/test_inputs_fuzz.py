"""Property-based fuzzing of every registered input decoder (hypothesis, derandomized), in a subprocess with a memory
ceiling (``tests/inputs_fuzz_worker.py``): random bytes, mutations of each kind's valid example and structure-aware
variants raise nothing but ``InputError``, each call within a time bound. The ci tier runs a small fixed set of
examples per decoder; the full tier runs many more."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.io import registry

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "tests" / "inputs_fuzz_worker.py"
CI_EXAMPLES, FULL_EXAMPLES = 12, 400
MEMORY_MB = 3072  # the worker's RLIMIT_AS: a decoder that allocates beyond it fails with MemoryError


def run_worker(examples: int, timeout: float) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(WORKER), "--examples", str(examples), "--mem-mb", str(MEMORY_MB)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def ci_results() -> dict:
    return run_worker(CI_EXAMPLES, timeout=600)


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_decoder_survives_fuzzing(kind: str, ci_results: dict) -> None:
    r = ci_results[kind]
    assert r["ok"], r["error"]
    assert r["calls"] >= 3 * CI_EXAMPLES


@pytest.mark.full
def test_decoders_survive_long_fuzzing() -> None:
    results = run_worker(FULL_EXAMPLES, timeout=3600)
    failed = {k: r["error"] for k, r in results.items() if not r["ok"]}
    assert not failed, failed
