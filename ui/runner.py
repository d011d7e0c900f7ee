"""Run a heavy backend job from a page: the shared FIFO job lock (queue position shown), ``st.status`` plus
``st.progress`` fed by the backend's Progress callback, a cancel button, a per-job time cap, and error display
(``InputError`` -> its message; anything else -> a short internal-error note, never a traceback)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import ExitStack
from typing import TypeVar

import streamlit as st
from streamlit.errors import StreamlitAPIException

from backend.errors import InputError, JobCancelled
from backend.executor import LocalExecutor, executor_from_env
from backend.runtime import CancelToken, JobLock, job_lock, timed

T = TypeVar("T")
log = logging.getLogger("method_lab")


@st.cache_resource(max_entries=1)
def shared_lock() -> JobLock:
    """One lock for every session of this server process."""
    return job_lock()


def current_executor():  # noqa: ANN201
    """The executor $METHOD_LAB_RAY_ADDRESS names; unset -> in-process under this server's shared lock."""
    ex = executor_from_env()
    if isinstance(ex, LocalExecutor):
        return LocalExecutor(shared_lock())
    return ex


def show_error(err: BaseException, what: str = "the job") -> None:
    """Show an error in the page: actionable for InputError, generic for bugs (logged server-side)."""
    if isinstance(err, InputError):
        st.error(str(err), icon=":material/error:")
    elif isinstance(err, JobCancelled):
        st.warning(str(err), icon=":material/cancel:")
    else:
        log.exception("internal error in %s", what)
        st.error(
            f"Internal error while running {what} ({type(err).__name__}). It has been logged; "
            "try other settings or report it.",
            icon=":material/bug_report:",
        )


def run_job(label: str, fn: Callable[..., T], /, *args: object, time_cap_s: float = 300.0, **kwargs: object) -> T | None:
    """Run ``fn(*args, progress=..., **kwargs)`` under the job lock with progress, cancel and a time cap.

    Returns the result, or None when the job failed or was cancelled (the page already shows why).
    """
    token = CancelToken(time_cap_s=time_cap_s)
    wait_box = st.empty()
    cancel_box = st.empty()
    try:
        cancel_box.button("Cancel", key=f"cancel_{label}", on_click=token.cancel, icon=":material/stop:")
    except StreamlitAPIException:  # inside an st.form no button may carry a callback: the time cap still applies
        log.warning("run_job(%r) called inside a form: no cancel button; call it after the form instead", label)

    def on_wait(position: int) -> None:
        wait_box.info(f"Another job is running on this server: you are number {position} in the queue.")

    clock = timed()
    status = None
    try:
        executor = current_executor()
        stack = ExitStack()
        with stack:
            bar_box: list = []

            def on_start() -> None:
                nonlocal status
                wait_box.empty()
                status = stack.enter_context(st.status(label, expanded=True))
                bar_box.append(st.progress(0.0, text="starting"))

            def progress(fraction: float, message: str = "") -> None:
                bar_box[0].progress(min(1.0, max(0.0, fraction)), text=message or label)

            result = executor.run(fn, args, kwargs, progress=progress, token=token, on_wait=on_wait,
                                  on_start=on_start)
            bar_box[0].progress(1.0, text="done")
            status.update(label=f"{label}: done in {clock():.1f} s", state="complete", expanded=False)
        return result
    except Exception as err:  # noqa: BLE001 - every failure is shown in the page, none as a traceback
        if status is not None:
            status.update(label=f"{label}: stopped after {clock():.1f} s", state="error", expanded=False)
        show_error(err, label)
        return None
    finally:
        wait_box.empty()
        cancel_box.empty()
