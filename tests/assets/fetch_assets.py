"""Fetch what the tests need and the project cannot carry: Debian's Chromium and redis-server, the JUnit schema.

Run by ``.ci/run`` before the tests (and by hand before ``python -m pytest`` on a new machine):

    python tests/assets/fetch_assets.py

* Chromium, from Debian's package (``apt-get install chromium``), for the HTML report tests
  (tests/test_html_report.py drive it through Playwright's own client, never a downloaded browser).
* redis-server, from Debian's package, for the shared example database tests (tests/test_sharing.py start
  one of their own on 127.0.0.1 and stop it).
* ``junit-10.xsd``, the Jenkins JUnit schema (MIT licence, by Gregory Boissinot) that Jenkins, GitLab and
  GitHub test-report actions read, which pytest validates its own ``--junitxml`` output against. It is taken
  from pytest's source distribution on PyPI (``testing/example_scripts/junit-10.xsd``), pinned by version and
  checked by its SHA-256, into ``tests/assets/junit-10.xsd`` (ignored by git).

Both steps do nothing when their result is already there. Where one cannot be done (no apt-get, no
network), it says so and the tests that need it are skipped, except on CI (``CI`` or
``COMPACTION_HARNESS_REQUIRE_ASSETS`` set, as ``.ci/run`` does), where that is an error: CI must run them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA = HERE / "junit-10.xsd"
SCHEMA_SOURCE = ("pytest", "9.2.0", "testing/example_scripts/junit-10.xsd")
SCHEMA_SHA256 = "a1a816f58d1bf95ebabf371994df0b9246dee66ea9572fbec4f9296f1b2c0ff6"
CHROMIUM = Path(os.environ.get("COMPACTION_HARNESS_CHROMIUM", "/usr/bin/chromium"))


def fetch_schema() -> None:
    if SCHEMA.exists() and _sha256(SCHEMA.read_bytes()) == SCHEMA_SHA256:
        return
    package, version, member = SCHEMA_SOURCE
    with tempfile.TemporaryDirectory() as tmp:
        download = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
                                   ":all:", f"{package}=={version}", "-d", tmp])
        if download.returncode != 0:
            _cannot(f"pip could not download {package} {version}'s source (offline?): the JUnit schema tests skip")
            return
        archive = next(Path(tmp).glob(f"{package}-{version}.tar.gz"))
        with tarfile.open(archive) as tar:
            data = tar.extractfile(f"{package}-{version}/{member}").read()
    if _sha256(data) != SCHEMA_SHA256:  # never a silent substitute for the schema CI systems read
        sys.exit(f"fetch_assets: {member} from {package} {version} has SHA-256 {_sha256(data)}, expected "
                 f"{SCHEMA_SHA256}: not written")
    SCHEMA.write_bytes(data)
    print(f"fetch_assets: wrote {SCHEMA.relative_to(HERE.parent.parent)} (from {package} {version})")


def fetch_chromium() -> None:
    if CHROMIUM.exists():
        return
    _debian("chromium", CHROMIUM, f"set COMPACTION_HARNESS_CHROMIUM to a Chromium binary): the browser tests skip")


def fetch_redis() -> None:
    if shutil.which("redis-server"):
        return
    _debian("redis-server", Path("/usr/bin/redis-server"), "or install redis-server another way): the shared "
                                                          "database tests skip")


def _debian(package: str, binary: Path, otherwise: str) -> None:
    """Install Debian's ``package`` (which provides ``binary``) with apt-get, refreshing the package list once."""
    if not shutil.which("apt-get"):
        _cannot(f"{binary} is missing and there is no apt-get to install Debian's {package} package ({otherwise}")
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = sudo + ["apt-get", "install", "-y", "-qq", package]
    if subprocess.run(install, env=env).returncode != 0:  # a stale package list: refresh it once
        subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env)
        if subprocess.run(install, env=env).returncode != 0:
            _cannot(f"apt-get could not install {package} ({otherwise}")
            return
    print(f"fetch_assets: installed {binary}")


def _cannot(why: str) -> None:
    if os.environ.get("CI") or os.environ.get("COMPACTION_HARNESS_REQUIRE_ASSETS"):
        sys.exit(f"fetch_assets: {why.split(':')[0]}, and CI must run every test")
    print(f"fetch_assets: {why}", file=sys.stderr)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


if __name__ == "__main__":
    fetch_schema()
    fetch_chromium()
    fetch_redis()
