"""What ``pip install compaction-harness`` puts into an environment: one top-level package, ``harness``, holding
every module of the repository's three source folders (``strategies/`` and ``oracles/`` installed as
``harness.strategies`` and ``harness.oracles``, so a team's own packages of those generic names never collide).

pyproject.toml lists the packages by hand (a mapped folder cannot be found automatically); this is the check
that the list is whole, read from pyproject.toml as setuptools reads it (building a wheel here would need
setuptools from the network)."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]

#: Each source folder and the package it installs as.
INSTALLED_AS = {"harness": "harness", "strategies": "harness.strategies", "oracles": "harness.oracles"}


def _folder_of(package: str) -> Path:
    """Where setuptools takes ``package`` from: its nearest mapped ancestor's folder, then the rest of its name."""
    mapped = SETUPTOOLS.get("package-dir", {})
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in mapped:
            return ROOT / mapped[".".join(parts[:n])] / Path(*parts[n:])
    return ROOT / Path(*parts)


def test_the_packages_install_under_one_top_level_name():
    assert {package.split(".")[0] for package in SETUPTOOLS["packages"]} == {"harness"}
    assert {p: _folder_of(p) for p in INSTALLED_AS.values()} == {p: ROOT / f for f, p in INSTALLED_AS.items()}


@pytest.mark.parametrize("folder", sorted(INSTALLED_AS))
def test_every_package_folder_of_each_source_folder_is_listed(folder):
    on_disk = {path.parent for path in (ROOT / folder).rglob("__init__.py") if "__pycache__" not in path.parts}
    listed = {_folder_of(package) for package in SETUPTOOLS["packages"]}
    assert on_disk - listed == set()
    assert all((path / "__init__.py").is_file() for path in listed)  # nothing listed that is not there


def test_the_bundled_prompt_is_package_data():
    prompts = sorted(p.name for p in (ROOT / "harness" / "summarizers").glob("*.txt"))
    assert prompts and SETUPTOOLS["package-data"]["harness.summarizers"] == ["*.txt"]


#: The extras (pyproject.toml's optional dependencies) the main job must run without: the README's first command
#: installs none of them.
EXTRAS = ("yaml", "playwright", "xmlschema", "mkdocs", "material", "langchain_core", "llama_index", "redis", "atheris")

_WITHOUT_EXTRAS = f'''
import sys
from importlib.abc import MetaPathFinder

class Absent(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
from harness._app.cli._entry import main
sys.exit(main(["run", "--examples", "5", "--seed", "1", "--quiet"]))
'''


def test_the_main_job_runs_without_any_extra(tmp_path):
    done = subprocess.run([sys.executable, "-c", _WITHOUT_EXTRAS], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stderr  # the bundled example's findings, not a missing module (exit 2)
    assert "No module named" not in done.stderr
