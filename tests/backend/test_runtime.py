"""Runtime: job lock FIFO with queue positions, cancellation and time caps, provenance."""

from __future__ import annotations

import threading
import time

import pytest

from backend.errors import JobCancelled
from backend.runtime import CancelToken, JobLock, provenance, sub_progress


def test_job_lock_fifo_and_positions():
    lock = JobLock()
    order: list[str] = []
    positions: list[int] = []
    release = threading.Event()

    def first():
        with lock.hold():
            order.append("a")
            release.wait(5)

    def second():
        with lock.hold(on_wait=positions.append, poll_s=0.05):
            order.append("b")

    t1 = threading.Thread(target=first)
    t1.start()
    time.sleep(0.1)
    t2 = threading.Thread(target=second)
    t2.start()
    time.sleep(0.2)
    assert lock.queue_length() == 2 and positions and positions[0] == 1
    release.set()
    t1.join(5)
    t2.join(5)
    assert order == ["a", "b"] and lock.queue_length() == 0


def test_waiter_can_cancel_and_leaves_queue():
    lock = JobLock()
    token = CancelToken()
    hold = threading.Event()
    t = threading.Thread(target=lambda: lock.hold().__enter__() or hold.wait(5))
    with lock.hold():
        def waiter():
            with pytest.raises(JobCancelled), lock.hold(token=token, poll_s=0.05):
                pass
        w = threading.Thread(target=waiter)
        w.start()
        time.sleep(0.1)
        token.cancel()
        w.join(5)
        assert lock.queue_length() == 1
    assert lock.queue_length() == 0
    del t


def test_time_cap_and_wrapped_progress():
    seen = []
    token = CancelToken(time_cap_s=0.05)
    prog = token.wrap(lambda f, m="": seen.append((f, m)))
    prog(0.5, "half")
    time.sleep(0.08)
    with pytest.raises(JobCancelled, match="time cap"):
        prog(0.6, "late")
    assert seen == [(0.5, "half")]
    child = sub_progress(lambda f, m="": seen.append((round(f, 3), m)), 0.5, 1.0)
    child(0.5, "child")
    assert seen[-1] == (0.75, "child")


def test_provenance_has_versions_commit_seed_hashes(tmp_path):
    f = tmp_path / "w.bin"
    f.write_bytes(b"abc")
    p = provenance(7, [f], ratio=0.3)
    assert p["seed"] == 7 and p["params"] == {"ratio": 0.3}
    assert p["assets_sha256"]["w.bin"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert "torch" in p["packages"] and "numpy" in p["packages"]
    assert "git_commit" in p
