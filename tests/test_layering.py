"""Imports go one way: the base, then strategies and oracles on it, then the application on all three; and
inside the application, from the command line and the plugin down through reports, fuzzing, corpora,
running and shrinking to judging and calling summarizers.

Checked by reading the source (``ast``), so a cycle cannot hide inside a function, and by
importing every module first in a fresh interpreter, so none depends on another having been
imported before it.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Each top-level folder and the package it installs as (pyproject.toml's package-dir).
PACKAGES = {"harness": "harness", "strategies": "harness.strategies", "oracles": "harness.oracles"}


def _modules() -> list[str]:
    names = []
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            names.append(".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return names


def _path(module: str) -> Path:
    """The source file of ``module``, a module of ours."""
    folder, package = max(((f, p) for f, p in PACKAGES.items() if module == p or module.startswith(p + ".")),
                          key=lambda pair: len(pair[1]))
    path = ROOT / folder / Path(*module.removeprefix(package).split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


MODULES = _modules()


def _imports(module: str) -> list[tuple[ast.AST, str, bool]]:
    """(node, imported module, inside a function?) for every import statement of ``module``."""
    tree = ast.parse(_path(module).read_text(encoding="utf-8"))
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            in_function.update(id(sub) for sub in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, alias.name, id(node) in in_function) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:  # a submodule imported by name counts as itself
            found += [(node, f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module,
                       id(node) in in_function) for alias in node.names]
    return found


def _layer(module: str) -> str:
    if module.startswith(("harness.strategies", "harness.oracles")):
        return "domain"
    if module.startswith(("harness._base", "harness._base.")) or module == "harness":
        return "base"
    if module.startswith("harness.summarizers"):
        return "summarizers"
    return "application"  # harness._app, harness.testing, harness.__main__


# What each layer may import from the project (besides itself and the standard library).
ALLOWED = {
    "base": {"base"},
    "domain": {"base", "domain"},
    "summarizers": {"base", "domain", "summarizers"},
    "application": {"base", "domain", "summarizers", "application"},
}


#: The application's sub-packages and what each may import of the application (besides itself). "core" is
#: the modules directly in harness/_app that everything uses (the exit codes and stop reasons, progress);
#: "top" the plugin, compare and the assertion helper, and "cli" the command line on them, which may use anything.
APP_ALLOWED = {
    "core": set(),
    "calling": {"core"},
    "judging": {"core"},
    "shrinking": {"core", "judging"},
    "running": {"core", "calling", "judging", "shrinking"},
    "corpus": {"core", "calling", "judging", "shrinking", "running"},
    "fuzzing": {"core", "calling", "judging", "shrinking", "running", "corpus"},
    "reports": {"core", "calling", "judging", "shrinking", "running", "corpus", "fuzzing"},
    "top": {"core", "calling", "judging", "shrinking", "running", "corpus", "fuzzing", "reports"},
    "cli": {"core", "calling", "judging", "shrinking", "running", "corpus", "fuzzing", "reports", "top"},
}
_CORE = ("harness._app._outcome", "harness._app._progress", "harness._app._profiles", "harness._app._rates",
         "harness._app._numbers")
APP = ROOT / "harness" / "_app"


def _app_layer(module: str) -> str | None:
    """The application sub-layer of ``module``, or None outside ``harness._app``."""
    if not module.startswith("harness._app."):
        return None
    if module in _CORE:
        return "core"
    part = module.split(".")[2]
    return part if part in APP_ALLOWED else "top"


@pytest.mark.parametrize("module", [m for m in MODULES if _app_layer(m) is not None])
def test_the_application_imports_go_one_way_between_its_sub_packages(module):
    mine = _app_layer(module)
    for node, target, _ in _imports(module):
        theirs = _app_layer(target)
        if theirs is None or theirs == mine:
            continue
        assert theirs in APP_ALLOWED[mine], (
            f"{module} ({mine}) imports {target} ({theirs}) at line {node.lineno}: {mine} may import only "
            f"{', '.join(sorted(APP_ALLOWED[mine])) or 'nothing else of the application'}")


def test_every_application_module_is_in_a_known_layer():
    unknown = sorted(m for m in MODULES if m.startswith("harness._app.") and _app_layer(m) == "top"
                     and m.count(".") > 2)
    assert unknown == [], f"sub-packages of harness/_app the layering does not know: {unknown}"


def test_the_application_is_grouped_by_concern_in_small_modules():
    """At most ten modules directly in harness/_app, the rest in at least four sub-packages; none over 500 lines."""
    direct = sorted(p.name for p in APP.glob("*.py"))
    packages = sorted(p.name for p in APP.iterdir() if (p / "__init__.py").is_file())
    assert len(direct) <= 10, direct
    assert len(packages) >= 4, packages
    long = {str(p.relative_to(ROOT)): n for p in APP.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}


#: The oracles' reading, one stage a module, in pipeline order: a stage imports only the stages before it
#: (and the rule book, ``harness.oracles._rules``), never an oracle; the oracles import any stage.
READING_STAGES = tuple(f"harness.oracles.{stage}" for stage in ("_structure", "_lexicon", "_units", "_cues", "_context"))


@pytest.mark.parametrize("stage", READING_STAGES)
def test_the_reading_stages_import_only_the_stages_before_them(stage):
    before = READING_STAGES[:READING_STAGES.index(stage)]
    for node, target, _ in _imports(stage):
        if target.startswith("harness.oracles"):
            assert target in before or target == "harness.oracles._rules", (
                f"{stage} imports {target} at line {node.lineno}: a reading stage imports only "
                f"{', '.join(before) or 'no other stage'} and oracles._rules")


@pytest.mark.parametrize("package", ["oracles", "strategies"])
def test_the_domain_packages_are_small_modules(package):
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / package).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}


@pytest.mark.parametrize("module", MODULES)
def test_imports_go_one_way(module):
    for node, target, _ in _imports(module):
        assert target.split(".")[0] not in ("strategies", "oracles"), (
            f"{module} imports {target} at line {node.lineno}: ours install as harness.strategies and harness.oracles")
        if target.split(".")[0] != "harness":
            continue
        assert _layer(target) in ALLOWED[_layer(module)], (
            f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)}) at line {node.lineno}")


def test_no_import_hides_in_a_function_except_commented_lazy_ones():
    """An import inside a function is a dodged cycle unless a ``# lazy:`` comment says why it waits."""
    offenders = []
    for module in MODULES:
        lines = _path(module).read_text(encoding="utf-8").splitlines()
        for node, target, in_function in _imports(module):
            if not in_function:
                continue
            above = lines[max(0, node.lineno - 6): node.lineno]
            block = [line for line in above if line.strip().startswith(("#", "from ", "import "))]
            if not any("# lazy:" in line for line in block):
                offenders.append(f"{module}:{node.lineno} imports {target}")
    assert offenders == []


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports_first_in_a_fresh_interpreter(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_importing_harness_loads_neither_the_application_nor_the_oracles():
    code = ("import sys, harness; "
            "print(sorted(m for m in sys.modules if m.startswith(('harness._app', 'harness.oracles', 'harness.strategies'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr
