"""Shape of the backend: no import circles between backend modules (imports inside functions and under TYPE_CHECKING
count), no module above the size limit without a reason in its docstring, no streamlit/plotly in backend/, backend/io
imports no method package, only the training CLI imports training scripts, no layer imports one above it, no page
function takes ``progress``, and every
method registry behaves the same (the pysteps ``test_interfaces`` idea). The shape of one method package is checked by
``tests/test_method_packages.py``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BACKEND = ROOT / "backend"
MAX_LINES = 600
# A module above MAX_LINES says why in its docstring with a line that starts with this phrase.
REASON = "Size:"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {(_module_name(p)): p for p in sorted(BACKEND.rglob("*.py"))}


def _imported(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, wherever the import statement sits: at module level, inside functions, under
    ``if TYPE_CHECKING:`` or in a ``try``. A function-level import is still a dependency (it runs the first time the
    function does), so it counts for circles and for layering."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for st in ast.walk(tree):
        if isinstance(st, ast.Import):
            out |= {a.name for a in st.names}
        elif isinstance(st, ast.ImportFrom):
            if st.level:
                base = package.split(".")
                base = base[: len(base) - (st.level - 1)]
                mod = ".".join(base + ([st.module] if st.module else []))
            else:
                mod = st.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in st.names}
    return out


def _imports(name: str, path: Path) -> set[str]:
    """The backend modules ``name`` imports (see :func:`_imported`)."""
    return {m for m in _imported(name, path) if m in MODULES and m != name}


def test_no_import_circles() -> None:
    """No circle of imports between backend modules, counting imports inside functions and under TYPE_CHECKING."""
    graph = {n: _imports(n, p) for n, p in MODULES.items()}
    # a package's __init__ is entered before its submodules: an edge pkg -> pkg.sub is normal, not a circle
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in graph[n]:
            if n.startswith(m + "."):  # a submodule importing its own package's __init__
                continue
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in graph:
        if n not in state:
            visit(n)
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles[:10])


def _owner(module: str) -> str:
    """``backend.<top>`` of a backend module (``backend.io``, ``backend.watermark``, ...)."""
    return ".".join(module.split(".")[:2])


# What backend/io may import: the shared plumbing, never a method package (methods declare their input kinds in
# their own ``inputs`` module, discovered through the catalog).
IO_MAY_IMPORT = {"backend", "backend.io", "backend.errors", "backend.catalog", "backend.runtime"}


def test_io_imports_no_method_package() -> None:
    bad = sorted({(n, m) for n, p in MODULES.items() if n.startswith("backend.io")
                  for m in _imports(n, p) if _owner(m) not in IO_MAY_IMPORT})
    assert not bad, f"backend/io imports method packages: {bad}"


def test_nothing_imports_a_training_script() -> None:
    """Training scripts (``backend/train/<id>.py``) are run by ``python -m backend.train`` only."""
    bad = sorted({(n, m) for n, p in MODULES.items() if not n.startswith("backend.train")
                  for m in _imports(n, p) if m.startswith("backend.train")})
    assert not bad, f"modules importing training scripts: {bad}"


def _python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).is_dir() else [ROOT / folder]


@pytest.mark.parametrize("layer,above", [("backend", ("ui", "app_pages", "app", "tests", "benchmarks")),
                                         ("ui", ("app_pages", "app", "tests", "benchmarks"))])
def test_nothing_imports_upwards(layer: str, above: tuple[str, ...]) -> None:
    """app.py -> app_pages -> ui -> backend: a layer imports only the layers below it."""
    bad = []
    for path in _python_files(layer):
        for m in _imported(_module_name(path), path):
            if m.split(".")[0] in above:
                bad.append((str(path.relative_to(ROOT)), m))
    assert not bad, f"imports pointing up a layer: {sorted(set(bad))}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name: str) -> None:
    path = MODULES[name]
    n = len(path.read_text().splitlines())
    if n <= MAX_LINES:
        return
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert any(line.strip().startswith(REASON) for line in doc.splitlines()), (
        f"{path.relative_to(ROOT)} has {n} lines (> {MAX_LINES}); split it by job or say why in its docstring "
        f"with a line starting {REASON!r}")


def test_backend_is_ui_free() -> None:
    bad = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                mods = [node.module]
            if any(m.split(".")[0] in ("streamlit", "plotly") for m in mods):
                bad.append(name)
    assert not bad, f"backend modules import streamlit/plotly: {sorted(set(bad))}"


def _registries():
    from backend.registry import Registry

    found = {}
    for name in sorted(MODULES):  # every file under backend/ (walk_packages misses lazily loaded sub-packages)
        if name.startswith("backend.train") or name.endswith("__main__"):
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError:  # an optional dependency: that module's own tests cover it
            continue
        for attr, val in vars(mod).items():
            if isinstance(val, Registry) and id(val) not in {id(v) for v in found.values()}:
                found[f"{name}.{attr}"] = val
    return found


def test_no_page_function_takes_progress() -> None:
    """Every page (method pages, the catalog and the models page) is controls -> a backend job through
    ``ui.runner.run_job`` -> figures: no function defined in ``app_pages/`` takes ``progress``."""
    found = []
    for path in sorted((ROOT / "app_pages").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                a = node.args
                if any(x.arg == "progress" for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"page functions taking progress (move the work into a backend job): {found}"


def test_every_registry_is_generic() -> None:
    from backend.errors import InputError
    from backend.registry import KINDS

    regs = _registries()
    assert regs, "no method registry found under backend/"
    for where, reg in regs.items():
        assert len(reg) >= 1, where
        for name in reg:
            e = reg.entry(name.upper())  # case-insensitive
            assert e.name == name and e.label and e.kind in KINDS and e.color.startswith("#"), (where, name)
            assert reg[name] is reg.get(name)
        with pytest.raises(InputError) as err:
            reg.get("no-such-method")
        for name in reg:
            assert name in str(err.value), f"{where}: the error must list the valid names"


def test_ruff_passes() -> None:
    """The linter configured in pyproject.toml passes on the whole tree (``ruff check .``)."""
    import shutil
    import subprocess
    import sys

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is not installed: `make install-test` installs it (requirements-test.txt)"
    out = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
