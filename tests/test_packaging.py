"""What ``pip install compaction-harness`` puts into an environment: one top-level package, ``harness``, holding
every module of the repository's three source folders (``strategies/`` and ``oracles/`` installed as
``harness.strategies`` and ``harness.oracles``, so a team's own packages of those generic names never collide).

pyproject.toml lists the packages by hand (a mapped folder cannot be found automatically); this is the check
that the list is whole."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Each source folder and where its modules land in the wheel.
INSTALLED_AS = {"harness": "harness", "strategies": "harness/strategies", "oracles": "harness/oracles"}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")  # the build writes build/
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in INSTALLED_AS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                           "--wheel-dir", str(out), str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_installs_one_top_level_package(wheel_names):
    tops = {name.split("/")[0] for name in wheel_names if ".dist-info/" not in name}
    assert tops == {"harness"}


@pytest.mark.parametrize("folder", sorted(INSTALLED_AS))
def test_every_module_of_each_source_folder_is_in_the_wheel(wheel_names, folder):
    sources = {str(path.relative_to(ROOT / folder)) for path in (ROOT / folder).rglob("*.py")
               if "__pycache__" not in path.parts}
    installed = {name.removeprefix(INSTALLED_AS[folder] + "/") for name in wheel_names
                 if name.startswith(INSTALLED_AS[folder] + "/") and name.endswith(".py")}
    assert sources - installed == set()


def test_the_bundled_prompt_is_packaged(wheel_names):
    prompts = {path.name for path in (ROOT / "harness" / "summarizers").glob("*.txt")}
    assert prompts and {f"harness/summarizers/{name}" for name in prompts} <= wheel_names


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
