"""The five-tuple form of an optimisation model (index sets, parameters, decision variables, objective,
constraints), its validation, its executable model (``scipy.optimize.milp``: HiGHS inside scipy), its structured
text and its modelling steps.

A formulation is a JSON-able dict (every name an identifier)::

    {"sets":        {"P": ["chairs", "tables"], "R": ["wood", "labour"]},
     "parameters":  {"profit": {"over": ["P"], "values": [30, 50]},
                     "use": {"over": ["R", "P"], "values": [[2, 3], [1, 2]]},
                     "avail": {"over": ["R"], "values": [100, 60]}, "budget": 500},
     "variables":   [{"name": "x", "over": ["P"], "domain": "integer", "lb": 0, "ub": null}],
     "objective":   {"sense": "max", "terms": [{"var": "x", "coef": "profit"}]},
     "constraints": [{"name": "capacity", "over": ["R"], "terms": [{"var": "x", "coef": "use"}],
                      "sense": "<=", "rhs": "avail"}],
     "label": 1700}                      # optional: the recorded optimum

Semantics. A parameter is a number or an array indexed by its ``over`` sets (shape = their sizes). A variable block
has one entry per element of the product of its sets (a scalar without ``over``); ``domain`` is continuous,
integer or binary; ``lb`` / ``ub`` are numbers, parameter names (indexed by a subset of the block's sets) or null.
A term ``{"var": v, "coef": c}`` of a constraint block over sets R adds, to row r, ``sum c[..] v[e]`` over the
entries e of v that agree with r on the sets they share; ``c`` (a number or a parameter over a subset of R and v's
sets) is read at the combined index. In the objective a term is ``sum_e c[e] v[e]``. The right-hand side is a number
or a parameter over a subset of R.

- :func:`check` ``(form)`` -> a normalised copy (every ``over`` a list) or :class:`backend.errors.InputError` naming
  what to change (unknown names, inconsistent dimensions, non-numeric values, over-size models);
- :func:`compile_model` ``(form)`` -> :class:`Model` (c [V], A [R, V], row bounds, variable bounds, integrality);
- :func:`solve` ``(model)`` -> :class:`Solution` (status optimal / infeasible / unbounded / error, objective, x [V]);
- :func:`violations` ``(model, x)`` -> the rows, bounds and integrality a point breaks;
- :func:`steps` ``(form)`` -> the modelling steps (sets, parameters, variables, objective, one per constraint block,
  the recorded solution), each with its structured text; :func:`to_text` joins them;
- :func:`read_lp_json` ``(bytes)`` -> a checked form: the decoder of the ``lp_json`` input kind.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np

from ...errors import InputError

MAX_SETS, MAX_SET_SIZE, MAX_PARAMETERS = 12, 60, 40
MAX_VARIABLES, MAX_ROWS, MAX_BLOCKS = 600, 600, 30
MAX_ABS = 1e9
DOMAINS = ("continuous", "integer", "binary")
SENSES = ("<=", ">=", "==")
OBJECTIVE_SENSES = ("max", "min")
STEP_KINDS = ("sets", "parameters", "variables", "objective", "constraint", "solution")
LIMITS = (f"JSON object with sets (at most {MAX_SETS}, each 1-{MAX_SET_SIZE} labels), parameters (at most "
          f"{MAX_PARAMETERS}; numbers or {{\"over\": [sets], \"values\": nested list}}), variables, objective "
          f"(sense max or min), constraints (senses <=, >=, ==); at most {MAX_VARIABLES} variables and {MAX_ROWS} "
          "constraint rows; optional label (the recorded optimum); at most 1 MB")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")


# --------------------------------------------------------------------------------------------------- validation
def _ident(v: Any, what: str) -> str:
    if not isinstance(v, str) or not _IDENT.match(v):
        raise InputError(f"{what} must be a name of letters, digits and underscores (at most 40), not starting with "
                         f"a digit; got {str(v)[:40]!r}.")
    return v


def _number(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise InputError(f"{what} must be a number; got {str(v)[:40]!r}.")
    x = float(v)
    if not math.isfinite(x) or abs(x) > MAX_ABS:
        raise InputError(f"{what} must be a finite number of at most {MAX_ABS:g} in size; got {v!r}.")
    return x


def _over(v: Any, sets: dict[str, list[str]], what: str) -> list[str]:
    if v is None:
        return []
    names = [v] if isinstance(v, str) else v
    if not isinstance(names, list):
        raise InputError(f"{what}: 'over' must be a set name or a list of set names; got {str(v)[:40]!r}.")
    for s in names:
        if s not in sets:
            raise InputError(f"{what} is indexed by {s!r}, which is not a set; sets: {', '.join(sets) or 'none'}.")
    if len(set(names)) != len(names):
        raise InputError(f"{what} repeats a set in 'over' ({names}); use a second set of the same labels.")
    return list(names)


def _values(v: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """A nested list of numbers of exactly ``shape`` (checked element by element)."""
    def walk(x: Any, depth: int, path: str) -> Any:
        if depth == len(shape):
            return _number(x, f"{what}{path}")
        if not isinstance(x, list):
            raise InputError(f"{what}{path} must be a list of {shape[depth]} entries (the size of its set number "
                             f"{depth + 1}); got {str(x)[:40]!r}.")
        if len(x) != shape[depth]:
            raise InputError(f"Inconsistent dimensions: {what}{path} has {len(x)} entries but its set number "
                             f"{depth + 1} has {shape[depth]} elements.")
        return [walk(e, depth + 1, f"{path}[{i}]") for i, e in enumerate(x)]

    return np.asarray(walk(v, 0, ""), dtype=float).reshape(shape)


def _coef_ref(v: Any, params: dict[str, dict], allowed: list[str], what: str) -> Any:
    if isinstance(v, str):
        if v not in params:
            raise InputError(f"{what} names the parameter {v!r}, which is not defined; parameters: "
                             f"{', '.join(params) or 'none'}.")
        extra = [s for s in params[v]["over"] if s not in allowed]
        if extra:
            raise InputError(f"Inconsistent dimensions: {what} uses {v}[{', '.join(params[v]['over'])}], but "
                             f"{', '.join(extra)} is not an index of this place (allowed: {', '.join(allowed) or 'none'}).")
        return v
    return _number(v, what)


def check(form: Any, name: str = "the model") -> dict:
    """The normalised, validated copy of ``form`` (see the module docstring); InputError otherwise."""
    if not isinstance(form, dict):
        raise InputError(f"{name} must be a JSON object with sets, parameters, variables, objective, constraints.")
    missing = [k for k in ("variables", "objective") if k not in form]
    if missing:
        raise InputError(f"{name} lacks {', '.join(missing)}; expected {LIMITS}.")
    raw_sets = form.get("sets") or {}
    if not isinstance(raw_sets, dict) or len(raw_sets) > MAX_SETS:
        raise InputError(f"'sets' must be an object of at most {MAX_SETS} sets: name -> list of labels.")
    sets: dict[str, list[str]] = {}
    for s, labels in raw_sets.items():
        _ident(s, "A set name")
        if not isinstance(labels, list) or not 1 <= len(labels) <= MAX_SET_SIZE:
            raise InputError(f"Set {s!r} must be a list of 1-{MAX_SET_SIZE} labels; got {str(labels)[:40]!r}.")
        labs = [str(x) for x in labels]
        if len(set(labs)) != len(labs):
            raise InputError(f"Set {s!r} repeats a label; labels of a set must be distinct.")
        sets[s] = labs
    raw_params = form.get("parameters") or {}
    if not isinstance(raw_params, dict) or len(raw_params) > MAX_PARAMETERS:
        raise InputError(f"'parameters' must be an object of at most {MAX_PARAMETERS} parameters.")
    params: dict[str, dict] = {}
    for p, v in raw_params.items():
        _ident(p, "A parameter name")
        if p in sets:
            raise InputError(f"{p!r} is both a set and a parameter; rename one.")
        if isinstance(v, dict):
            over = _over(v.get("over"), sets, f"parameter {p!r}")
            shape = tuple(len(sets[s]) for s in over)
            vals = _values(v.get("values"), shape, f"parameter {p}")
            params[p] = {"over": over, "values": vals.tolist()}
        elif isinstance(v, list):
            raise InputError(f"Parameter {p!r} is a bare list; give it as {{\"over\": [its sets], \"values\": "
                             "[...]}} so that its dimensions can be checked.")
        else:
            params[p] = {"over": [], "values": _number(v, f"parameter {p}")}
    raw_vars = form.get("variables")
    if not isinstance(raw_vars, list) or not raw_vars:
        raise InputError("'variables' must be a non-empty list of variable blocks {name, over, domain, lb, ub}.")
    variables, n_vars = [], 0
    for i, v in enumerate(raw_vars):
        if not isinstance(v, dict):
            raise InputError(f"variables[{i}] must be an object {{name, over, domain, lb, ub}}.")
        vn = _ident(v.get("name"), f"variables[{i}].name")
        if vn in sets or vn in params or any(x["name"] == vn for x in variables):
            raise InputError(f"The variable name {vn!r} is used twice (or also names a set or parameter).")
        over = _over(v.get("over"), sets, f"variable {vn!r}")
        dom = str(v.get("domain", "continuous")).strip().lower()
        if dom not in DOMAINS:
            raise InputError(f"variable {vn!r}: domain must be one of {', '.join(DOMAINS)}; got {dom!r}.")
        bounds = {}
        for b, default in (("lb", 0.0), ("ub", None)):
            x = v.get(b, default)
            bounds[b] = None if x is None else _coef_ref(x, params, over, f"variable {vn!r} {b}")
        n_vars += math.prod(len(sets[s]) for s in over)
        variables.append({"name": vn, "over": over, "domain": dom, **bounds})
    if n_vars > MAX_VARIABLES:
        raise InputError(f"The model has {n_vars} variables; the limit here is {MAX_VARIABLES}.")
    by_var = {v["name"]: v for v in variables}

    def terms(raw: Any, allowed_of: Any, what: str) -> list[dict]:
        if not isinstance(raw, list) or not raw:
            raise InputError(f"{what}: 'terms' must be a non-empty list of {{var, coef}}.")
        out = []
        for j, t in enumerate(raw):
            if not isinstance(t, dict) or t.get("var") not in by_var:
                raise InputError(f"{what} term {j} must name a declared variable ({', '.join(by_var)}); got "
                                 f"{str(t)[:60]!r}.")
            var = by_var[t["var"]]
            out.append({"var": var["name"], "coef": _coef_ref(t.get("coef", 1), params, allowed_of(var),
                                                               f"{what} term {j} (coefficient of {var['name']})")})
        return out

    obj = form["objective"]
    if not isinstance(obj, dict):
        raise InputError("'objective' must be an object {sense: max|min, terms: [...]}.")
    sense = str(obj.get("sense", "")).strip().lower()
    sense = {"maximize": "max", "maximise": "max", "minimize": "min", "minimise": "min"}.get(sense, sense)
    if sense not in OBJECTIVE_SENSES:
        raise InputError(f"The objective's sense must be max or min; got {obj.get('sense')!r}.")
    objective = {"sense": sense, "terms": terms(obj.get("terms"), lambda v: v["over"], "the objective")}
    raw_cons = form.get("constraints") or []
    if not isinstance(raw_cons, list) or len(raw_cons) > MAX_BLOCKS:
        raise InputError(f"'constraints' must be a list of at most {MAX_BLOCKS} constraint blocks.")
    constraints, n_rows = [], 0
    for i, c in enumerate(raw_cons):
        if not isinstance(c, dict):
            raise InputError(f"constraints[{i}] must be an object {{name, over, terms, sense, rhs}}.")
        cn = _ident(c.get("name", f"c{i}"), f"constraints[{i}].name")
        if any(x["name"] == cn for x in constraints):
            raise InputError(f"Two constraint blocks are named {cn!r}; names must be distinct.")
        over = _over(c.get("over"), sets, f"constraint {cn!r}")
        cs = str(c.get("sense", "")).strip().replace("=<", "<=").replace("=>", ">=")
        cs = "==" if cs == "=" else cs
        if cs not in SENSES:
            raise InputError(f"constraint {cn!r}: sense must be one of {', '.join(SENSES)}; got {c.get('sense')!r}.")
        tt = terms(c.get("terms"), lambda v, over=over: over + [s for s in v["over"] if s not in over],
                   f"constraint {cn!r}")
        rhs = _coef_ref(c.get("rhs", 0), params, over, f"constraint {cn!r} right-hand side")
        n_rows += math.prod(len(sets[s]) for s in over)
        constraints.append({"name": cn, "over": over, "terms": tt, "sense": cs, "rhs": rhs})
    if n_rows > MAX_ROWS:
        raise InputError(f"The model has {n_rows} constraint rows; the limit here is {MAX_ROWS}.")
    out = {"sets": sets, "parameters": params, "variables": variables, "objective": objective,
           "constraints": constraints}
    if form.get("label") is not None:
        out["label"] = _number(form["label"], "label (the recorded optimum)")
    if form.get("name") is not None:
        out["name"] = str(form["name"])[:80]
    return out


def read_lp_json(data: bytes, name: str = "the upload") -> dict:
    """The decoder of the ``lp_json`` input kind: UTF-8 JSON (a byte-order mark allowed) -> :func:`check`."""
    if len(data) > 2**20:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is 1 MB.")
    try:
        obj = json.loads(data.decode("utf-8-sig"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text; save the model as UTF-8 JSON.") from None
    except (json.JSONDecodeError, RecursionError) as err:
        raise InputError(f"{name} is not valid JSON ({str(err)[:80]}); expected {LIMITS}.") from None
    form = check(obj, name)
    sol = solve(compile_model(form))
    if sol.status == "infeasible":
        raise InputError(f"{name} is infeasible: no point satisfies all its constraints and bounds ({sol.message}). "
                         "Check the constraint senses, right-hand sides and variable bounds.")
    if sol.status == "unbounded":
        raise InputError(f"{name} is unbounded: the objective improves without limit. A constraint or a bound is "
                         "missing, or the objective's sense is the wrong way round.")
    if sol.status != "optimal":
        raise InputError(f"{name} could not be solved ({sol.message}); simplify the model.")
    return form


def _no_constant(token: str) -> float:
    raise InputError(f"The JSON holds {token}; every parameter must be a finite number.")


# --------------------------------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Model:
    """The executable model of a formulation: ``sense`` max/min of ``c @ x`` subject to ``lo <= A @ x <= hi``,
    ``lb <= x <= ub``, ``x[integer]`` whole. Shapes: c, lb, ub, integer [V]; A [R, V]; lo, hi [R]. ``var_names`` /
    ``row_names`` label the entries (``x[chairs]``, ``capacity[wood]``); ``blocks`` maps a variable block to its
    (start, shape), ``rows`` a constraint block to its (start, shape)."""

    sense: str
    c: np.ndarray
    A: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray
    var_names: list[str]
    row_names: list[str]
    blocks: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    rows: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)


def _param(form: dict, ref: Any, axes: list[str]) -> np.ndarray:
    """A number or parameter broadcast to the sets ``axes`` (its own sets a subset of them)."""
    sizes = [len(form["sets"][s]) for s in axes]
    if not isinstance(ref, str):
        return np.full(sizes, float(ref))
    p = form["parameters"][ref]
    vals = np.asarray(p["values"], dtype=float)
    if not p["over"]:
        return np.full(sizes, float(vals))
    order = [p["over"].index(s) for s in axes if s in p["over"]]
    vals = np.transpose(vals, order)
    shape = [len(form["sets"][s]) if s in p["over"] else 1 for s in axes]
    return np.broadcast_to(vals.reshape(shape), sizes)


def _labels(form: dict, over: list[str], name: str) -> list[str]:
    if not over:
        return [name]
    return [f"{name}[{','.join(t)}]" for t in product(*(form["sets"][s] for s in over))]


def compile_model(form: dict) -> Model:
    """The executable :class:`Model` of a checked formulation."""
    sets = form["sets"]
    blocks, var_names, start = {}, [], 0
    lb, ub, integer = [], [], []
    for v in form["variables"]:
        shape = tuple(len(sets[s]) for s in v["over"])
        blocks[v["name"]] = (start, shape)
        n = math.prod(shape)
        start += n
        var_names += _labels(form, v["over"], v["name"])
        lo = np.full(n, -np.inf) if v["lb"] is None else _param(form, v["lb"], v["over"]).ravel()
        hi = np.full(n, np.inf) if v["ub"] is None else _param(form, v["ub"], v["over"]).ravel()
        if v["domain"] == "binary":
            lo, hi = np.maximum(lo, 0.0), np.minimum(hi, 1.0)
        lb.append(lo)
        ub.append(hi)
        integer.append(np.full(n, v["domain"] != "continuous"))
    V = start
    by_var = {v["name"]: v for v in form["variables"]}
    c = np.zeros(V)
    for t in form["objective"]["terms"]:
        v = by_var[t["var"]]
        s0, shape = blocks[v["name"]]
        c[s0 : s0 + math.prod(shape)] += _param(form, t["coef"], v["over"]).ravel()
    A_rows, lo_rows, hi_rows, row_names, rows = [], [], [], [], {}
    r0 = 0
    for con in form["constraints"]:
        R = con["over"]
        rshape = tuple(len(sets[s]) for s in R)
        nr = math.prod(rshape)
        block = np.zeros((nr, V))
        for t in con["terms"]:
            v = by_var[t["var"]]
            free = [s for s in v["over"] if s not in R]
            T = _param(form, t["coef"], R + free)
            letters = iter("abcdefghijklmnopqrstuvwxyz")
            rl = {s: next(letters) for s in R}
            fl = {s: next(letters) for s in free}
            vl = {s: next(letters) for s in v["over"] if s in R}
            ops, subs = [T], ["".join(rl[s] for s in R) + "".join(fl[s] for s in free)]
            for s in vl:
                ops.append(np.eye(len(sets[s])))
                subs.append(rl[s] + vl[s])
            out = "".join(rl[s] for s in R) + "".join(vl.get(s) or fl[s] for s in v["over"])
            M = np.einsum(",".join(subs) + "->" + out, *ops) if ops else T
            s0, shape = blocks[v["name"]]
            block[:, s0 : s0 + math.prod(shape)] += np.asarray(M).reshape(nr, math.prod(shape))
        rhs = _param(form, con["rhs"], R).ravel() if R else np.array([float(_param(form, con["rhs"], []))])
        A_rows.append(block)
        lo_rows.append(rhs if con["sense"] in (">=", "==") else np.full(nr, -np.inf))
        hi_rows.append(rhs if con["sense"] in ("<=", "==") else np.full(nr, np.inf))
        row_names += _labels(form, R, con["name"])
        rows[con["name"]] = (r0, rshape)
        r0 += nr
    A = np.vstack(A_rows) if A_rows else np.zeros((0, V))
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
    return Model(form["objective"]["sense"], c, A, cat(lo_rows), cat(hi_rows), cat(lb), cat(ub),
                 cat(integer).astype(bool), var_names, row_names, blocks, rows)


@dataclass(frozen=True)
class Solution:
    """``status``: optimal, infeasible, unbounded or error (``message`` says which limit or failure); ``objective``
    and ``x`` [V] when optimal; ``seconds`` of solving."""

    status: str
    objective: float | None
    x: np.ndarray | None
    message: str
    seconds: float


_QUIET = threading.Lock()


@contextmanager
def _quiet() -> Iterator[None]:
    """Standard output closed at the file-descriptor level: HiGHS's MIP solver occasionally writes a debug line
    there, which would break the CLI's JSON."""
    with _QUIET:
        sys.stdout.flush()
        try:
            saved = os.dup(1)
        except OSError:  # no descriptor 1 (embedded interpreters)
            yield
            return
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 1)
                yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def solve(model: Model, time_limit: float = 10.0) -> Solution:
    """Solve with HiGHS through ``scipy.optimize.milp`` (exact MIP gap, ``time_limit`` seconds)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    t0 = time.perf_counter()
    sign = -1.0 if model.sense == "max" else 1.0
    cons = [LinearConstraint(model.A, model.lo, model.hi)] if model.A.shape[0] else []
    if (model.lb > model.ub).any():
        i = int(np.argmax(model.lb > model.ub))
        return Solution("infeasible", None, None, f"the bounds of {model.var_names[i]} cross "
                        f"({model.lb[i]:g} > {model.ub[i]:g})", time.perf_counter() - t0)
    try:
        if model.integer.any():  # an integral LP-relaxation optimum is the integer optimum: no branch and bound
            with _quiet():
                lp = milp(sign * model.c, constraints=cons, bounds=Bounds(model.lb, model.ub),
                          options={"time_limit": time_limit})
            xi = None if lp.x is None else lp.x[model.integer]
            if lp.status == 0 and xi is not None and np.all(np.abs(xi - np.round(xi)) <= 1e-9):
                x = np.asarray(lp.x, dtype=float).copy()
                x[model.integer] = np.round(xi)
                return Solution("optimal", float(model.c @ x), x, "optimal (integral LP relaxation)",
                                time.perf_counter() - t0)
            if lp.status == 2:
                return Solution("infeasible", None, None, "the LP relaxation is infeasible", time.perf_counter() - t0)
        with _quiet():
            res = milp(sign * model.c, constraints=cons, integrality=model.integer.astype(int),
                       bounds=Bounds(model.lb, model.ub), options={"time_limit": time_limit, "mip_rel_gap": 0.0})
    except (ValueError, np.linalg.LinAlgError) as err:
        return Solution("error", None, None, str(err)[:200], time.perf_counter() - t0)
    dt = time.perf_counter() - t0
    if res.status == 0 and res.x is not None:
        return Solution("optimal", float(sign * res.fun), np.asarray(res.x), "optimal", dt)
    status = {2: "infeasible", 3: "unbounded"}.get(res.status, "error")
    msg = str(res.message)
    if status == "error" and "nbounded" in msg:
        status = "unbounded"
    elif status == "error" and "nfeasible" in msg:
        status = "infeasible"
    return Solution(status, None, None, msg[:200], dt)


def objective_value(model: Model, x: np.ndarray) -> float:
    return float(model.c @ x)


def violations(model: Model, x: np.ndarray, tol: float = 1e-6) -> list[str]:
    """The rows, bounds and integrality requirements ``x`` breaks (by more than ``tol`` relative to the size of
    the row's terms), each as a short text."""
    out = []
    ax = model.A @ x
    scale = 1.0 + np.abs(model.A) @ np.abs(x)
    for i in np.flatnonzero((ax < model.lo - tol * scale) | (ax > model.hi + tol * scale)):
        lim = model.lo[i] if ax[i] < model.lo[i] else model.hi[i]
        out.append(f"{model.row_names[i]}: {ax[i]:.6g} against the limit {lim:.6g}")
    sx = 1.0 + np.abs(x)
    for i in np.flatnonzero((x < model.lb - tol * sx) | (x > model.ub + tol * sx)):
        out.append(f"{model.var_names[i]} = {x[i]:.6g} outside [{model.lb[i]:g}, {model.ub[i]:g}]")
    for i in np.flatnonzero(model.integer & (np.abs(x - np.round(x)) > 1e-5)):
        out.append(f"{model.var_names[i]} = {x[i]:.6g} is not whole")
    return out


# --------------------------------------------------------------------------------------------------- text and steps
@dataclass(frozen=True)
class Step:
    """One modelling step: ``kind`` in :data:`STEP_KINDS`, ``name`` (the block's name for a constraint), ``text``."""

    kind: str
    name: str
    text: str


def _g(x: float) -> str:
    return f"{x:.6g}"


def _ref(form: dict, ref: Any, idx: dict[str, str]) -> str:
    if not isinstance(ref, str):
        return _g(ref)
    over = form["parameters"][ref]["over"]
    return f"{ref}[{','.join(idx[s] for s in over)}]" if over else ref


def _param_text(form: dict, name: str) -> str:
    p = form["parameters"][name]
    if not p["over"]:
        return f"{name} = {_g(p['values'])}"
    vals = np.asarray(p["values"], dtype=float)
    items = [f"{','.join(t)}: {_g(v)}" for t, v in zip(product(*(form["sets"][s] for s in p["over"])), vals.ravel(),
                                                         strict=True)]
    return f"{name}[{','.join(p['over'])}] = {{{'; '.join(items)}}}"


def _sum(form: dict, terms: list[dict], bound: list[str]) -> str:
    by_var = {v["name"]: v for v in form["variables"]}
    parts = []
    for t in terms:
        v = by_var[t["var"]]
        idx = {s: s.lower() for s in bound + v["over"]}
        free = [s for s in v["over"] if s not in bound]
        var = f"{v['name']}[{','.join(idx[s] for s in v['over'])}]" if v["over"] else v["name"]
        coef = _ref(form, t["coef"], idx)
        body = var if coef == "1" else f"{coef} {var}"
        parts.append(f"sum_{{{', '.join(f'{idx[s]} in {s}' for s in free)}}} {body}" if free else body)
    return " + ".join(parts)


def steps(form: dict) -> list[Step]:
    """The modelling steps of a checked formulation, in the paper's order (sets, parameters, variables, objective,
    constraints) plus the recorded solution."""
    out = [Step("sets", "sets", "Sets: " + ("; ".join(f"{s} = {{{', '.join(v)}}}" for s, v in form["sets"].items())
                                             or "none")),
           Step("parameters", "parameters", "Parameters: " + ("; ".join(_param_text(form, p) for p in
                                                                       form["parameters"]) or "none"))]
    vs = []
    for v in form["variables"]:
        idx = ",".join(s.lower() for s in v["over"])
        head = f"{v['name']}[{idx}]" if v["over"] else v["name"]
        bnd = []
        if v["lb"] is not None:
            bnd.append(f">= {_ref(form, v['lb'], {s: s.lower() for s in v['over']})}")
        if v["ub"] is not None:
            bnd.append(f"<= {_ref(form, v['ub'], {s: s.lower() for s in v['over']})}")
        dom = {"continuous": "continuous", "integer": "integer", "binary": "binary"}[v["domain"]]
        rng = (" for " + ", ".join(f"{s.lower()} in {s}" for s in v["over"])) if v["over"] else ""
        vs.append(f"{head} {' '.join(bnd)} {dom}{rng}".replace("  ", " "))
    out.append(Step("variables", "variables", "Variables: " + "; ".join(vs)))
    o = form["objective"]
    out.append(Step("objective", "objective", f"Objective: {'maximise' if o['sense'] == 'max' else 'minimise'} "
                                             + _sum(form, o["terms"], [])))
    for con in form["constraints"]:
        idx = {s: s.lower() for s in con["over"]}
        head = f"{con['name']}[{','.join(idx.values())}]" if con["over"] else con["name"]
        rng = (", for " + ", ".join(f"{i} in {s}" for s, i in idx.items())) if con["over"] else ""
        out.append(Step("constraint", con["name"], f"Constraint {head}: {_sum(form, con['terms'], con['over'])} "
                                                   f"{con['sense']} {_ref(form, con['rhs'], idx)}{rng}"))
    label = form.get("label")
    out.append(Step("solution", "solution", "Solution: the recorded optimum is "
                                           + ("not given" if label is None else _g(label))))
    return out


def to_text(form: dict) -> str:
    """The structured text of a formulation: one line per step."""
    return "\n".join(s.text for s in steps(form))


def size(form: dict) -> dict[str, int]:
    """Variables, integer variables and constraint rows of a checked formulation."""
    m = compile_model(form)
    return {"variables": len(m.c), "integer_variables": int(m.integer.sum()), "rows": int(m.A.shape[0])}
