"""Where heavy jobs run: in this process under the FIFO job lock (the default) or on a Ray cluster.

The executor is chosen by ``$METHOD_LAB_RAY_ADDRESS``:

* unset or empty -> :class:`LocalExecutor`: the process-wide :class:`~backend.runtime.JobLock`, the job's
  :class:`~backend.runtime.CancelToken` (cancel button and time cap) checked on every progress call;
* ``local`` (start a Ray instance on this machine), ``auto`` (join the cluster this machine belongs to) or a head's
  address (``ray://host:10001`` or ``host:6379``) -> :class:`RayExecutor`.

On Ray a job runs inside a long-lived worker actor (``_JobWorker``): module-level model caches live in that actor's
process, so a model is loaded once per worker, not once per job. The page's thread polls the actor for progress and
forwards it to the page's Progress; cancel is cooperative (the actor's progress callback raises
:class:`~backend.errors.JobCancelled` on its next call) and the actor is killed only if the job has not stopped after
a grace period. Failures of the cluster (unreachable address, a worker that died mid-job) raise
:class:`ExecutorError`, an :class:`~backend.errors.InputError`, so pages show its message and the CLI exits with code 2;
there is never a silent fallback to running locally.

Sweeps: :func:`map_cases` runs ``fn(case, seed=case_seed(sweep_seed, i))`` for every case, in order, locally or on Ray;
each case draws from its own seed, so both executors give the same numbers.

Nothing here imports streamlit; ``ray`` is imported only when a Ray executor is made.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .errors import InputError, JobCancelled
from .runtime import CancelToken, JobLock, Progress, default_threads, job_lock, report, setup_torch_if_loaded

ENV_ADDRESS = "METHOD_LAB_RAY_ADDRESS"
ENV_WORKERS = "METHOD_LAB_RAY_WORKERS"
ENV_GRACE = "METHOD_LAB_RAY_GRACE_S"
NAMESPACE = "method_lab"


class ExecutorError(InputError):
    """The executor itself failed (cluster unreachable, worker died, job not shippable): shown like an InputError."""


class Executor(Protocol):
    name: str

    def run(
        self,
        fn: Callable[..., Any],
        args: Sequence[object],
        kwargs: dict[str, object],
        *,
        progress: Progress | None,
        token: CancelToken,
        on_wait: Callable[[int], None] | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> Any:
        """Run ``fn(*args, progress=..., **kwargs)``; raise what the job raised (or ExecutorError / JobCancelled)."""
        ...


# ------------------------------------------------------------------------------------------------------ local
class LocalExecutor:
    """Today's behaviour: the FIFO lock, torch threads set once, the token checked on every progress call."""

    name = "local"

    def __init__(self, lock: JobLock | None = None) -> None:
        self.lock = lock or job_lock()

    def run(self, fn, args, kwargs, *, progress, token, on_wait=None, on_start=None):  # noqa: ANN001, ANN201
        with self.lock.hold(on_wait=on_wait, token=token):
            if on_start is not None:
                on_start()
            setup_torch_if_loaded()
            return fn(*args, progress=token.wrap(progress), **kwargs)


# -------------------------------------------------------------------------------------------------------- ray
def _streamlit_objects(fn: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> list[str]:
    """Names of Streamlit objects a job would carry to a worker (closure cells, bound self, arguments)."""

    def is_st(obj: object) -> bool:
        return type(obj).__module__.split(".")[0] == "streamlit"

    found: list[str] = []
    seen: set[int] = set()

    def visit(f: object, depth: int = 0) -> None:
        if id(f) in seen or depth > 4:
            return
        seen.add(id(f))
        if is_st(f):
            found.append(type(f).__name__)
            return
        target = getattr(f, "__func__", f)
        if getattr(f, "__self__", None) is not None and is_st(f.__self__):
            found.append(type(f.__self__).__name__)
        for cell in getattr(target, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if callable(value) and not isinstance(value, type):
                visit(value, depth + 1)
            elif is_st(value):
                found.append(type(value).__name__)
        if hasattr(f, "func") and hasattr(f, "args"):  # functools.partial
            visit(f.func, depth + 1)
            for a in (*f.args, *f.keywords.values()):
                visit(a, depth + 1)

    visit(fn)
    for a in (*args, *kwargs.values()):
        if is_st(a):
            found.append(type(a).__name__)
    return found


class _JobWorker:
    """A Ray actor that runs one job at a time in a thread and keeps its process (and loaded models) between jobs."""

    def __init__(self, threads: int) -> None:
        os.environ["METHOD_LAB_THREADS"] = str(threads)
        self._lock = threading.Lock()
        self._busy = False
        self._events: list[tuple[float, str]] = []
        self._cancel = threading.Event()
        self._outcome: tuple[str, Any] | None = None
        self.jobs_run = 0

    def pid(self) -> int:
        return os.getpid()

    def try_start(self, job: tuple[Callable[..., Any], tuple, dict]) -> bool:
        """Start the job ``(fn, args, kwargs)`` if idle; False when busy. Ray resolves the job from the object
        store the driver put it in, with its own serialization."""
        with self._lock:
            if self._busy:
                return False
            self._busy = True
            self._events = []
            self._outcome = None
            self._cancel.clear()
        fn, args, kwargs = job
        threading.Thread(target=self._run, args=(fn, args, kwargs), daemon=True).start()
        return True

    def _run(self, fn, args, kwargs) -> None:  # noqa: ANN001
        def progress(fraction: float, message: str = "") -> None:
            if self._cancel.is_set():
                raise JobCancelled("The job was cancelled.")
            with self._lock:
                self._events.append((float(fraction), str(message)))

        try:
            setup_torch_if_loaded()
            outcome: tuple[str, Any] = ("ok", fn(*args, progress=progress, **kwargs))
        except BaseException as err:  # noqa: BLE001 - shipped back to the driver
            try:
                import cloudpickle

                cloudpickle.dumps(err)
                outcome = ("err", err)
            except Exception:  # noqa: BLE001
                outcome = ("err", RuntimeError(f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))
        with self._lock:
            self.jobs_run += 1
            self._outcome = outcome

    def poll(self) -> tuple[list[tuple[float, str]], tuple[str, Any] | None]:
        """Progress events since the last poll, and the outcome once the job has ended (then the worker is free)."""
        with self._lock:
            events, self._events = self._events, []
            outcome = self._outcome
            if outcome is not None:
                self._outcome = None
                self._busy = False
            return events, outcome

    def cancel(self) -> None:
        self._cancel.set()

    def stats(self) -> dict[str, int]:
        return {"pid": os.getpid(), "jobs_run": self.jobs_run}


def _ray():  # noqa: ANN202
    try:
        import ray
    except ImportError as err:  # pragma: no cover - ray is pinned in requirements.txt
        raise ExecutorError(f"{ENV_ADDRESS} is set but the ray package is not installed (pip install ray).") from err
    return ray


def ensure_ray(address: str, num_cpus: int | None = None) -> None:
    """Connect to (or, for ``local``, start) Ray once per process; ExecutorError when the address does not answer."""
    ray = _ray()
    if ray.is_initialized():
        return
    if address not in ("local", "auto"):
        _probe(address)
    kw: dict[str, Any] = {"namespace": NAMESPACE, "log_to_driver": False, "include_dashboard": False,
                          "configure_logging": False}
    from .runtime import ROOT

    kw["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                                      "METHOD_LAB_THREADS": str(default_threads())}}
    kw["address"] = address  # "local" always starts a new instance, never joins one found on this machine
    if address == "local":
        kw["num_cpus"] = num_cpus or int(os.environ.get("METHOD_LAB_RAY_CPUS", "2"))
    try:
        ray.init(**kw)
    except Exception as err:  # noqa: BLE001 - ConnectionError, RuntimeError, ValueError depending on the form
        raise ExecutorError(
            f"The Ray cluster at {address!r} ({ENV_ADDRESS}) could not be reached: {type(err).__name__}: "
            f"{str(err).splitlines()[0] if str(err) else ''}. Start it (ray start --head) or unset {ENV_ADDRESS}."
        ) from err


def _probe(address: str, timeout_s: float = 3.0) -> None:
    """A TCP connect to ``host:port`` first: ray.init retries an unreachable head for minutes."""
    import socket

    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s):
            return
    except (OSError, ValueError) as err:
        raise ExecutorError(
            f"The Ray cluster at {address!r} ({ENV_ADDRESS}) could not be reached: {type(err).__name__}: {err}. "
            f"Start it (ray start --head) or unset {ENV_ADDRESS}; the job did not run."
        ) from err


class RayExecutor:
    """Jobs on a pool of named worker actors (``method_lab_worker_<i>``) shared by every replica of the app."""

    name = "ray"

    def __init__(self, address: str, workers: int | None = None, threads: int | None = None,
                 grace_s: float | None = None, poll_s: float = 0.1, num_cpus: int | None = None) -> None:
        self.address = address
        self.workers = workers or int(os.environ.get(ENV_WORKERS, "2"))
        self.threads = threads or default_threads()
        self.grace_s = float(os.environ.get(ENV_GRACE, "10")) if grace_s is None else grace_s
        self.poll_s = poll_s
        ensure_ray(address, num_cpus)

    def _actor(self, i: int):  # noqa: ANN202
        ray = _ray()
        cls = ray.remote(num_cpus=1, max_concurrency=4, max_restarts=0)(_JobWorker)
        try:
            return cls.options(name=f"method_lab_worker_{i}", get_if_exists=True, lifetime="detached").remote(
                self.threads)
        except Exception as err:  # noqa: BLE001
            raise ExecutorError(f"Could not start a Ray worker: {type(err).__name__}: {err}") from err

    def actors(self) -> list[Any]:
        return [self._actor(i) for i in range(self.workers)]

    def _acquire(self, job: Any, token: CancelToken, on_wait: Callable[[int], None] | None) -> Any:
        ray = _ray()
        while True:
            for actor in self.actors():
                try:
                    if ray.get(actor.try_start.remote(job), timeout=60):
                        return actor
                except ray.exceptions.RayActorError:
                    self._forget(actor)
                except ray.exceptions.GetTimeoutError as err:
                    raise ExecutorError("A Ray worker did not answer within 60 s; the cluster is overloaded or "
                                        "unhealthy.") from err
            if on_wait is not None:
                on_wait(1)
            token.check()
            time.sleep(self.poll_s * 5)

    def _forget(self, actor: Any) -> None:
        try:
            _ray().kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001, S110 - already gone
            pass

    def run(self, fn, args, kwargs, *, progress, token, on_wait=None, on_start=None):  # noqa: ANN001, ANN201
        ray = _ray()
        if held := _streamlit_objects(fn, args, kwargs):
            raise ExecutorError(f"This job holds Streamlit objects ({', '.join(sorted(set(held)))}) and cannot run "
                                "on a Ray worker; unset METHOD_LAB_RAY_ADDRESS or report it.")
        try:  # serialised once into Ray's object store; every worker that is asked reads the same object
            job = ray.put((fn, tuple(args), dict(kwargs)))
        except Exception as err:  # noqa: BLE001
            raise ExecutorError(f"This job cannot be sent to a Ray worker ({type(err).__name__}: {err}).") from err
        actor = self._acquire(job, token, on_wait)
        if on_start is not None:
            on_start()
        cancel_at: float | None = None
        stop: JobCancelled | None = None
        while True:
            try:
                events, outcome = ray.get(actor.poll.remote(), timeout=60)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError) as err:
                if stop is not None:
                    raise stop from None
                raise ExecutorError("The Ray worker running this job died or stopped answering before it finished; "
                                    "the job was lost. Run it again.") from err
            for fraction, message in events:
                report(progress, fraction, message)
            if outcome is not None:
                kind, value = outcome
                if kind == "ok":
                    return value
                if stop is not None and isinstance(value, JobCancelled):
                    raise stop
                raise value
            if cancel_at is None:
                try:
                    token.check()
                except JobCancelled as err:
                    stop, cancel_at = err, time.monotonic()
                    actor.cancel.remote()
            elif time.monotonic() - cancel_at > self.grace_s:
                self._forget(actor)
                raise JobCancelled(f"{stop} The worker did not stop within {self.grace_s:.0f} s and was restarted.")
            time.sleep(self.poll_s)

    def map(self, fn: Callable[..., Any], cases: Sequence[object], seeds: Sequence[int]) -> list[Any]:
        """``[fn(case, seed=s) for case, s]`` as Ray tasks (one CPU each), in order."""
        ray = _ray()
        task = ray.remote(num_cpus=1, max_retries=0)(_case_task)
        refs = [task.remote(fn, case, seed, self.threads) for case, seed in zip(cases, seeds, strict=True)]
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as err:
            cause = err.as_instanceof_cause()
            if isinstance(cause, InputError):
                raise InputError(str(cause).splitlines()[-1]) from None
            raise
        except ray.exceptions.RayError as err:
            raise ExecutorError(f"A Ray worker failed during the sweep: {type(err).__name__}.") from err


def _case_task(fn: Callable[..., Any], case: object, seed: int, threads: int) -> Any:
    os.environ["METHOD_LAB_THREADS"] = str(threads)
    setup_torch_if_loaded()
    return fn(case, seed=seed)


# --------------------------------------------------------------------------------------------------- selection
_executors: dict[str, Executor] = {}
_select_lock = threading.Lock()


def executor_from_env(env: dict[str, str] | None = None) -> Executor:
    """The executor ``$METHOD_LAB_RAY_ADDRESS`` names (one instance per process and address)."""
    address = (env if env is not None else os.environ).get(ENV_ADDRESS, "").strip()
    return get_executor(address or "")


def get_executor(address: str) -> Executor:
    key = address or "in-process"
    with _select_lock:
        if key not in _executors:
            _executors[key] = LocalExecutor() if not address else RayExecutor(address)
        return _executors[key]


# -------------------------------------------------------------------------------------------------------- sweeps
def case_seed(sweep_seed: int, index: int) -> int:
    """The seed of case ``index`` of a sweep seeded ``sweep_seed``: independent of the order cases run in."""
    import numpy as np

    return int(np.random.SeedSequence([int(sweep_seed) & 0xFFFFFFFF, int(index)]).generate_state(1)[0])


def map_cases(fn: Callable[..., Any], cases: Sequence[object], sweep_seed: int | None = 0, executor: str = "local",
              progress: Progress | None = None, seeds: Sequence[int] | None = None) -> list[Any]:
    """Run ``fn(case, seed=case_seed(sweep_seed, i))`` for each case; ``executor`` is ``local`` or ``ray``.

    ``seeds`` gives each case's seed explicitly instead (sweeps whose cases are already named by a seed).
    ``ray`` uses ``$METHOD_LAB_RAY_ADDRESS`` (``local`` when unset: a Ray instance on this machine).
    """
    cases = list(cases)
    seeds = list(seeds) if seeds is not None else [case_seed(int(sweep_seed or 0), i) for i in range(len(cases))]
    if executor == "local":
        out = []
        for i, (case, seed) in enumerate(zip(cases, seeds, strict=True)):
            out.append(fn(case, seed=seed))
            report(progress, (i + 1) / max(1, len(cases)), f"case {i + 1}/{len(cases)}")
        return out
    if executor != "ray":
        raise InputError(f"Unknown executor {executor!r}; use local or ray.")
    ex = get_executor(os.environ.get(ENV_ADDRESS, "").strip() or "local")
    if not isinstance(ex, RayExecutor):  # pragma: no cover
        raise ExecutorError("The ray executor was asked for but no Ray address is configured.")
    out = ex.map(fn, cases, seeds)
    report(progress, 1.0, f"{len(cases)} cases on Ray")
    return out
