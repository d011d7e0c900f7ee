"""The shape of one method package, checked generically over every method the catalog names a package for (the
scikit-learn ``check_estimator`` idea; CONTRIBUTING.md "The method package").

For a catalog row with ``package="backend.<family>.<id>"``:

* the package holds ``__init__.py`` (docstring: the paper, its arXiv id, the table of methods), ``jobs.py``,
  ``cli.py`` and ``inputs.py``, and importing the package, its ``inputs`` and its ``cli`` imports no torch;
* ``jobs.run_*`` are module-level functions ``(..., progress=None, token=None)`` that pickle (the Ray executor sends
  them), and the configs ``jobs.py`` defines are frozen dataclasses;
* every registry of the package holds callables, and neither the package, nor its page, nor its figures dispatch on
  a registry's names (``if name == "..."``) or repeat them in a literal tuple, list, set or dict;
* every "Unknown ..." message comes from ``Registry.key`` or ``backend.registry.choose``;
* the page runs the package's jobs through ``ui.runner.run_job`` and defines no function taking ``progress``;
  the CLI imports the jobs;
* the input kinds the package declares (``inputs.KINDS``) are the ones the input registry discovers.

``test_a_new_method_package_is_picked_up`` writes a throwaway package in a temporary folder and checks that the
CLI, the input registry, these checks and the claims loader find it from its catalog row alone.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from backend import catalog

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = [p.id for p in catalog.packaged()]
FILES = ("__init__.py", "jobs.py", "cli.py", "inputs.py")


def _paper(id_: str) -> catalog.Paper:
    entry = catalog.get(id_)
    assert isinstance(entry, catalog.Paper) and entry.package, id_
    return entry


def _folder(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, f"{package} is not a package"
    return Path(next(iter(spec.submodule_search_locations)))


def _modules(package: str) -> dict[str, Path]:
    folder = _folder(package)
    return {(package if p.stem == "__init__" else f"{package}.{p.stem}"): p for p in sorted(folder.glob("*.py"))}


def _registries(package: str) -> dict[str, object]:
    from backend.registry import Registry

    found: dict[str, object] = {}
    for name in _modules(package):
        mod = importlib.import_module(name)
        for attr, val in vars(mod).items():
            if isinstance(val, Registry) and all(v is not val for v in found.values()):
                found[f"{name}.{attr}"] = val
    return found


# --------------------------------------------------------------------------------------------------- the checks
def check_files(paper: catalog.Paper) -> list[str]:
    folder = _folder(paper.package)
    out = [f"{paper.package} has no {f}" for f in FILES if not (folder / f).is_file()]
    if paper.package.rsplit(".", 1)[-1] != paper.id:
        out.append(f"the package of {paper.id!r} must be named after its id: {paper.package}")
    if paper.cli != f"{paper.package}.cli":
        out.append(f"{paper.id}: the catalog row names cli={paper.cli!r}; a packaged row derives it")
    return out


def check_docstring(paper: catalog.Paper) -> list[str]:
    doc = importlib.import_module(paper.package).__doc__ or ""
    out = []
    if "arxiv" not in doc.lower():
        out.append(f"{paper.package}: the docstring cites no arXiv id")
    rows = [line for line in doc.splitlines() if line.lstrip().startswith("|")]
    for where, reg in _registries(paper.package).items():
        for name in reg:
            if not any(f"`{name}`" in r or f"| {name} |" in r for r in rows):
                out.append(f"{paper.package}: the docstring's method table has no row for {name!r} ({where})")
    return out


def check_jobs(paper: catalog.Paper) -> list[str]:
    jobs = importlib.import_module(f"{paper.package}.jobs")
    out = []
    runs = {n: f for n, f in vars(jobs).items() if n.startswith("run_") and inspect.isfunction(f)}
    if not runs:
        out.append(f"{jobs.__name__} defines no run_* job")
    for name, fn in runs.items():
        if fn.__module__ != jobs.__name__:
            continue  # imported from elsewhere in the package: checked where it is defined
        params = inspect.signature(fn).parameters
        for arg in ("progress", "token"):
            if arg not in params or params[arg].default is not None:
                out.append(f"{jobs.__name__}.{name} must take {arg}=None")
        try:
            assert pickle.loads(pickle.dumps(fn)) is fn
        except Exception as err:  # noqa: BLE001 - reported as a shape failure
            out.append(f"{jobs.__name__}.{name} does not pickle: {err}")
    for name, cls in vars(jobs).items():
        if inspect.isclass(cls) and cls.__module__ == jobs.__name__ and name.endswith("Config"):
            if not dataclasses.is_dataclass(cls) or not cls.__dataclass_params__.frozen:
                out.append(f"{jobs.__name__}.{name} must be a frozen dataclass")
    return out


def check_registries_hold_callables(paper: catalog.Paper) -> list[str]:
    return [f"{where}[{name!r}] is a {type(reg[name]).__name__}, not a callable: the registry must hold the method"
            for where, reg in _registries(paper.package).items() for name in reg if not callable(reg[name])]


def _scanned_files(paper: catalog.Paper) -> list[Path]:
    files = list(_modules(paper.package).values())
    for extra in (ROOT / "app_pages" / f"{paper.id}.py", ROOT / "ui" / "figures" / f"{paper.id}.py"):
        if extra.is_file():
            files.append(extra)
    return files


def _registration_lines(tree: ast.AST) -> set[int]:
    """Lines of ``<registry>.add(...)`` / ``.register(...)`` calls: where a name is written once, by design."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("add",
                                                                                                       "register"):
            lines |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def check_no_name_dispatch(paper: catalog.Paper) -> list[str]:
    regs = _registries(paper.package)
    names = {where: set(reg) for where, reg in regs.items()}
    out = []
    for path in _scanned_files(paper):
        tree = ast.parse(path.read_text())
        skip = _registration_lines(tree)
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.Compare):
                consts = [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                for where, ns in names.items():
                    hit = sorted(ns.intersection(consts))
                    if hit:
                        out.append(f"{rel}:{node.lineno} compares with {hit} of {where}: dispatch through the "
                                   "registry instead")
            elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                consts = [c.value for c in elts if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                for where, ns in names.items():
                    hit = sorted(ns.intersection(consts))
                    if len(hit) >= 2:
                        out.append(f"{rel}:{node.lineno} repeats the names {hit} of {where}: read them from the "
                                   "registry")
    return out


def check_unknown_names(paper: catalog.Paper) -> list[str]:
    """Every "Unknown <name>" message comes from ``Registry.key`` or ``backend.registry.choose`` (one wording that
    lists the valid names), never a hand-written lookup."""
    out = []
    for path in _modules(paper.package).values():
        for node in ast.walk(ast.parse(path.read_text())):
            text = None
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                text = str(node.values[0].value)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            if text is not None and text.lower().startswith("unknown "):
                rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                out.append(f"{rel}:{node.lineno} writes its own 'Unknown ...' lookup: use the registry's key() or "
                           "backend.registry.choose")
    return out


def check_page(paper: catalog.Paper) -> list[str]:
    path = ROOT / "app_pages" / f"{paper.id}.py"
    if not path.is_file():
        return []
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args.args + node.args.kwonlyargs + node.args.posonlyargs
            if any(a.arg == "progress" for a in args):
                out.append(f"app_pages/{paper.id}.py:{node.lineno} defines a function taking progress: the job "
                           f"belongs in {paper.package}.jobs")
    jobs_names = set()  # local names bound to the jobs module or to its run_* functions
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == f"{paper.package}.jobs":
            jobs_names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == paper.package:
            jobs_names |= {a.asname or a.name for a in node.names if a.name == "jobs"}
        elif isinstance(node, ast.Import):
            jobs_names |= {a.asname for a in node.names if a.name == f"{paper.package}.jobs" and a.asname}
    calls = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "run_job":
            if len(node.args) >= 2:
                fn = node.args[1]
                base = fn.value if isinstance(fn, ast.Attribute) else fn
                if isinstance(base, ast.Name) and base.id in jobs_names:
                    calls += 1
    if not calls:
        out.append(f"app_pages/{paper.id}.py runs no {paper.package}.jobs function through run_job")
    return out


def check_cli(paper: catalog.Paper) -> list[str]:
    path = _folder(paper.package) / "cli.py"
    tree = ast.parse(path.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                mod = f"{paper.package}.{mod}" if mod else paper.package
            imported.add(mod)
            imported |= {f"{mod}.{a.name}" for a in node.names}
    if f"{paper.package}.jobs" not in imported:
        return [f"{paper.package}.cli does not call {paper.package}.jobs"]
    return []


def check_inputs(paper: catalog.Paper) -> list[str]:
    from backend.io import registry
    from backend.io.registry import InputKind

    inputs = importlib.import_module(f"{paper.package}.inputs")
    out = []
    kinds = getattr(inputs, "KINDS", None)
    if not isinstance(kinds, tuple) or not all(isinstance(k, InputKind) for k in kinds):
        return [f"{inputs.__name__}.KINDS must be a tuple of InputKind (empty when the method reads shared kinds)"]
    if not hasattr(inputs, "PRESETS"):
        out.append(f"{inputs.__name__} declares no PRESETS")
    for k in kinds:
        if registry.KINDS.get(k.name) != k:
            out.append(f"input kind {k.name!r} of {inputs.__name__} is not the one the registry discovered")
        for attr in ("decoder", "example", "odd"):
            if not getattr(k, attr).startswith(paper.package + "."):
                out.append(f"{k.name}.{attr} = {getattr(k, attr)!r} lies outside {paper.package}")
            try:
                k.load(attr)
            except (ImportError, AttributeError) as err:
                out.append(f"{k.name}.{attr} cannot be loaded: {err}")
    return out


CHECKS = (check_files, check_docstring, check_jobs, check_registries_hold_callables, check_no_name_dispatch,
          check_unknown_names, check_page, check_cli, check_inputs)


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__.removeprefix("check_") for c in CHECKS])
@pytest.mark.parametrize("method", PACKAGED)
def test_method_package(method: str, check) -> None:
    problems = check(_paper(method))
    assert not problems, "\n".join(problems)


def test_every_packaged_method_imports_light() -> None:
    """Importing a method package, its inputs and its cli imports no torch (``--help``, the input registry and the
    catalog checks stay fast)."""
    mods = [m for p in catalog.packaged() for m in (p.package, f"{p.package}.inputs", f"{p.package}.cli")]
    code = ("import importlib, sys\n"
            f"for m in {mods!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in ('torch', 'streamlit', 'pandas', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]", f"importing {mods} loads {out.stdout.strip()}"


# --------------------------------------------------------------------------------------- a throwaway new method
TOY = {
    "__init__.py": '''
        """Toy: counts the values of a list above a threshold (a stand-in paper, arXiv 0000.00000).

        | name | label | kind | what |
        |------|-------|------|------|
        | ``count`` | Count (ours) | ours | values above the threshold |
        | ``none`` | Nothing | baseline | always zero |
        """

        from backend.api import lazy_api

        __getattr__, __dir__, __all__ = lazy_api(__name__, {"run_count": "jobs", "CountConfig": "jobs"})
        ''',
    "methods.py": '''
        """The two counters."""

        from backend.registry import Registry


        def count(values, threshold):
            return sum(v > threshold for v in values)


        def nothing(values, threshold):
            return 0


        METHODS = Registry("toy method")
        METHODS.add("count", count, label="Count (ours)", kind="ours")
        METHODS.add("none", nothing, label="Nothing", kind="baseline")
        ''',
    "jobs.py": '''
        """The job."""

        from dataclasses import dataclass

        from backend.errors import InputError
        from backend.runtime import report

        from .methods import METHODS


        @dataclass(frozen=True)
        class CountConfig:
            threshold: float = 0.5
            method: str = "count"

            def __post_init__(self):
                METHODS.key(self.method)
                if not 0 <= self.threshold <= 1:
                    raise InputError("threshold must be in [0, 1]")


        def run_count(values, config, progress=None, token=None):
            report(progress, 1.0, "counted")
            return {"count": int(METHODS.get(config.method)(values, config.threshold))}
        ''',
    "cli.py": '''
        """``python -m backend labtoy count``."""

        from backend.cli_common import add_action, add_group


        def add_parser(subparsers):
            acts = add_group(subparsers, "labtoy", "count values above a threshold")
            q = add_action(acts, "count", cmd_count, "count the example values")
            q.add_argument("--threshold", type=float, default=0.5)


        def cmd_count(args):
            from . import inputs
            from .jobs import CountConfig, run_count

            return run_count(inputs.PRESETS["small"], CountConfig(threshold=args.threshold))
        ''',
    "inputs.py": '''
        """Input kinds of the toy: a text file of numbers."""

        from backend.errors import InputError
        from backend.io.registry import InputKind

        KINDS = (InputKind("toy_numbers", "toy numbers", "labtoy.inputs:decode", ("txt",), 1024,
                           "one number per line; 1 KB", "labtoy.inputs:example", "labtoy.inputs:example_odd", "text"),)
        PRESETS = {"small": [0.1, 0.6, 0.9]}


        def decode(data, name="the upload"):
            try:
                return [float(x) for x in data.decode().split()]
            except ValueError:
                raise InputError(f"{name}: one number per line") from None


        def example(seed=0):
            return b"0.1\\n0.7\\n"


        def example_odd():
            return {"one.txt": b"1"}
        ''',
}


def test_a_new_method_package_is_picked_up(tmp_path, monkeypatch, capsys) -> None:
    """A new method is a package plus its catalog row: the CLI, the input registry, the package checks and the
    claims loader find it with no edit to any other central file."""
    from backend import __main__ as cli
    from backend import claims as C
    from backend.io import registry

    pkg = tmp_path / "labtoy"
    pkg.mkdir()
    for name, text in TOY.items():
        (pkg / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path))
    toy = catalog.Paper(id="labtoy", title="Toy: counting", summary="s", section=catalog.SECTIONS[0],
                        abstract=("toy.txt", 1), package="labtoy")
    monkeypatch.setattr(catalog, "PAPERS", (*catalog.PAPERS, toy))
    registry.KINDS.refresh()
    try:
        assert catalog.cli_modules()["labtoy"] == "labtoy.cli"
        assert cli.main(["labtoy", "count", "--threshold", "0.5", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["count"] == 2
        assert "toy_numbers" in registry.KINDS
        assert registry.decode("toy_numbers", registry.example("toy_numbers")) == [0.1, 0.7]
        for check in CHECKS:
            if check is not check_page:  # a new method's page is its own file, checked once it exists
                assert check(toy) == [], check.__name__

        (tmp_path / "labtoy.toml").write_text(textwrap.dedent('''
            method = "labtoy"

            [[claims]]
            key = "counts"
            claim = "c"
            paper_number = "p"
            where = "w"
            setting = "s"
            tests = ["tests/backend/test_labtoy.py::test_claim"]
            '''))
        assert "labtoy" in C.methods(tmp_path)
        assert C.load("labtoy", tmp_path).claims[0].verdict == C.PENDING
    finally:
        registry.KINDS.refresh()
        for name in [m for m in sys.modules if m == "labtoy" or m.startswith("labtoy.")]:
            del sys.modules[name]


BROKEN = {  # one defect each: (file, text replaced, replacement, the check that must report it)
    "label-only registry": ("methods.py", 'METHODS.add("none", nothing,', 'METHODS.add("none", "nothing",',
                            check_registries_hold_callables),
    "name dispatch": ("jobs.py", "    report(progress, 1.0, \"counted\")",
                      "    if config.method == \"none\":\n        return {\"count\": 0}\n    report(progress, 1.0, \"x\")",
                      check_no_name_dispatch),
    "repeated names": ("jobs.py", "@dataclass(frozen=True)", "ORDER = (\"count\", \"none\")\n\n\n@dataclass(frozen=True)",
                       check_no_name_dispatch),
    "mutable config": ("jobs.py", "@dataclass(frozen=True)", "@dataclass", check_jobs),
    "job without token": ("jobs.py", "progress=None, token=None", "progress=None", check_jobs),
    "no method table": ("__init__.py", "| ``none`` | Nothing | baseline | always zero |", "", check_docstring),
    "hand-written lookup": ("jobs.py", "        METHODS.key(self.method)",
                            "        if self.method not in METHODS:\n"
                            "            raise InputError(f\"Unknown method {self.method}\")", check_unknown_names),
    "cli beside the jobs": ("cli.py", "from .jobs import CountConfig, run_count",
                            "from .methods import count as run_count\n    CountConfig = dict", check_cli),
}


@pytest.mark.parametrize("defect", sorted(BROKEN))
def test_the_checks_catch_a_broken_package(tmp_path, monkeypatch, defect) -> None:
    file, old, new, check = BROKEN[defect]
    pkg = tmp_path / "labtoy"
    pkg.mkdir()
    for name, text in TOY.items():
        text = textwrap.dedent(text).lstrip()
        if name == file:
            assert old in text, defect
            text = text.replace(old, new)
        (pkg / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    toy = catalog.Paper(id="labtoy", title="Toy", summary="s", section=catalog.SECTIONS[0], abstract=("toy.txt", 1),
                        package="labtoy")
    try:
        assert check(toy), f"{check.__name__} did not report the {defect}"
    finally:
        for name in [m for m in sys.modules if m == "labtoy" or m.startswith("labtoy.")]:
            del sys.modules[name]
