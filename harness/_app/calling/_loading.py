"""From a spec (``--summarizer``, ``--rules``, ``--token-counter``, ``--extend``) to the object it names:
loading it, and a fingerprint of a summarizer's code.

Both answers are decided here and nowhere else (the protocol it is called with
is decided by ``harness._base._protocol.resolve_protocol``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness._base._errors import InvalidArgument, SpecError, did_you_mean
from harness._app.calling._frameworks import FRAMEWORKS, framework_summarizer
from harness.oracles import ProseRules

__all__ = ["load_object", "load_callable", "load_rules", "checked_counter", "load_module", "code_fingerprint", "team_modules", "may_vary",
           "spec_identity"]
#: Our one top-level package: a summarizer bundled with the harness is its own subpackage, not all of it.
_OUR_ROOT = "harness"
_FILE_MODULE_PREFIX = "_summarizer_"


def load_rules(spec: str, *, option: str = "--rules") -> ProseRules:
    """A team's ``ProseRules`` named by ``module:OBJECT``; anything else is a ``SpecError``."""
    rules = load_object(spec, option=option, what="RULES")
    if not isinstance(rules, ProseRules):
        raise SpecError(f"{option} {spec!r}: expected an oracles.ProseRules (for example "
                        f"dataclasses.replace(oracles.DEFAULT_RULES, ...)), got {type(rules).__name__}")
    return rules


def checked_counter(spec: str) -> Callable[[str], int]:
    """A team's token counter, tried once now and checked on every call: a whole number >= 0, or
    an ``InvalidArgument`` naming ``--token-counter`` (never a count silently taken as valid)."""
    counter = load_callable(spec, option="--token-counter")

    def count(text: str) -> int:
        try:
            value = counter(text)
        except Exception as exc:
            raise InvalidArgument(f"--token-counter {spec!r} raised {type(exc).__name__}: {exc}") from None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidArgument(f"--token-counter {spec!r} returned {value!r}; expected a whole number >= 0")
        return value

    count("a probe: three words")
    return count


def load_callable(spec: str, *, option: str = "--summarizer") -> Callable[..., Any]:
    """Resolve ``module:function`` or ``path/to/file.py:function``; every failure is a ``SpecError`` naming ``option``.

    ``langchain:module:NAME`` and ``llamaindex:path/to/file.py:NAME`` name a framework object, wrapped as a
    messages summarizer (``_frameworks``)."""
    prefix, target = framework_spec(spec)
    if prefix is not None:
        return framework_summarizer(prefix, load_object(target, option=option, noun="object"), spec)
    fn = load_object(spec, option=option, noun="callable", wanted=callable)
    if not callable(fn):
        target, _, name = spec.rpartition(":")
        raise SpecError(f"{option} {spec!r}: module {target!r} has no callable named {name!r} (it is a "
                        f"{type(fn).__name__})")
    return fn


def framework_spec(spec: str) -> tuple[str | None, str]:
    """(framework prefix, the rest) of ``langchain:module:NAME``, else (None, spec): ``langchain:trim`` alone
    is still the function ``trim`` of a module named ``langchain``."""
    for prefix in FRAMEWORKS:
        if spec.startswith(prefix) and ":" in spec[len(prefix):]:
            return prefix, spec[len(prefix):]
    return None, spec


def load_object(spec: str, *, option: str, what: str = "function", noun: str = "attribute",
                wanted: Callable[[Any], bool] = lambda value: True) -> Any:
    """Resolve ``module:NAME`` or ``path/to/file.py:NAME`` to whatever NAME is.

    Importing runs the team's code: whatever it raises (``RuntimeError``, even
    ``SystemExit``) is reported as a spec that cannot be loaded, never as a crash. A missing NAME is
    said with the closest public name of the module that ``wanted`` accepts.
    """
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise SpecError(f"{option} {spec!r}: expected 'module:{what}' or 'path/to/file.py:{what}'")
    module = _import(spec, target, option, name)
    if not hasattr(module, name):
        names = [n for n, value in vars(module).items() if not n.startswith("_") and wanted(value)]
        raise SpecError(f"{option} {spec!r}: module {target!r} has no {noun} named {name!r}{did_you_mean(name, names)}")
    return getattr(module, name)


def load_module(spec: str, *, option: str = "--extend") -> Any:
    """Import ``module`` or ``path/to/file.py`` for its side effects (registering oracles); errors are ``SpecError``."""
    if not spec or ":" in spec.replace(os.sep, "/").split("/")[-1]:
        raise SpecError(f"{option} {spec!r}: expected 'module' or 'path/to/file.py' (no ':NAME')")
    return _import(spec, spec, option, "NAME")


def _import(spec: str, target: str, option: str, name: str):
    if target.endswith(".py") or os.sep in target or "/" in target:
        return _load_file(spec, target, option, name)
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise SpecError(f"{option} {spec!r}: cannot import module {target!r} ({exc})") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the module's own code failed while importing
        raise SpecError(f"{option} {spec!r}: importing module {target!r} raised {_describe(exc)}") from None


def _load_file(spec: str, target: str, option: str, name: str):
    path = Path(target)
    if path.is_dir():
        raise SpecError(f"{option} {spec!r}: {str(path)!r} is a folder; name a .py file in it, or the package as "
                        f"'package.module:{name}' with its parent folder on PYTHONPATH")
    if not path.is_file():
        raise SpecError(f"{option} {spec!r}: no such file {str(path)!r}")
    if path.suffix != ".py":
        raise SpecError(f"{option} {spec!r}: expected a Python source file ending in .py, got {str(path)!r}")
    module_name = _FILE_MODULE_PREFIX + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module = sys.modules.get(module_name)
    if module is not None:
        return module
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise SpecError(f"{option} {spec!r}: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # as when the file is run as a script: helpers beside it import (appended: no shadowing)
        sys.path.append(folder)
    try:
        loader_spec.loader.exec_module(module)
    except KeyboardInterrupt:
        del sys.modules[module_name]
        raise
    except BaseException as exc:  # SyntaxError, RuntimeError, SystemExit at import: all the team's to fix
        del sys.modules[module_name]
        raise SpecError(f"{option} {spec!r}: importing {str(path)!r} raised {_describe(exc)}") from None
    return module


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit (it called sys.exit({exc.code!r}))"
    return f"{type(exc).__name__}: {exc}"


def may_vary(fn: Callable[..., Any]) -> bool:
    """Whether a team marked its summarizer as allowed to answer one request differently each time
    (``fn.compaction_may_vary = True``, like a model at temperature > 0): ``deterministic`` then notes it."""
    return getattr(fn, "compaction_may_vary", False) is True


def spec_identity(spec: str) -> str:
    """Which object a loaded spec names, however it was spelled (``pkg.mod:f`` or ``path/to/mod.py:f``):
    the real path of the module file it imports and the attribute name. Two products of one factory, or
    two instances of one class, are two objects; ``compare`` refuses only two sides that are one object.
    Call it after ``load_callable(spec)``: the module is then imported."""
    _, spec = framework_spec(spec)
    target, _, name = spec.rpartition(":")
    if target.endswith(".py") or os.sep in target or "/" in target:
        where = os.path.realpath(target)
    else:
        module = sys.modules.get(target)
        where = os.path.realpath(module.__file__) if getattr(module, "__file__", None) else target
    return f"{where}:{name}"


def code_fingerprint(fn: Callable[..., Any], *, also: tuple[Any, ...] = ()) -> str:
    """A hash of the source the summarizer runs: its module and every loaded module of its package.

    ``also`` adds modules whose code shapes its answers from outside its
    package: the ``--extend`` modules, whose fact kinds say how a kind is stated.

    For a ``path/to/file.py`` spec, "its package" is the Python files loaded
    from that folder and below (installed packages excepted). The call cache
    keys on this, so fixing the summarizer's code invalidates yesterday's
    answers. What it cannot see (a prompt file read at run time, a remote
    model) needs ``--summarizer-version``.
    """
    module_name = getattr(fn, "__module__", None) or ""
    files = {Path(m.__file__).resolve() for m in (*_package_modules(module_name, module_name.split(".")[0]), *also)
             if getattr(m, "__file__", None)}
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    code = getattr(fn, "__code__", None)
    if code is not None:  # a function built at run time has no file of its own to hash
        digest.update(code.co_code + repr(code.co_names).encode())
    return digest.hexdigest()[:16]


def team_modules(fn: Callable[..., Any]) -> list[Any]:
    """The loaded modules holding the team's code behind ``fn``: what a coverage-guided fuzzer instruments.

    As ``code_fingerprint`` sees its package, except that for a summarizer bundled with the harness it
    is the modules of its own subpackage (``harness.summarizers``), not the harness judging it.
    """
    module_name = getattr(fn, "__module__", None) or ""
    root = module_name.split(".")[0]
    if root == _OUR_ROOT:
        root = module_name.rpartition(".")[0] or module_name
    return _package_modules(module_name, root)


def _package_modules(module_name: str, root: str) -> list[Any]:
    """The module ``module_name`` and every loaded module of package ``root``; for a module loaded from
    ``path/to/file.py``, the Python modules loaded from its folder and below (installed packages excepted)."""
    own = sys.modules.get(module_name)
    own_file = getattr(own, "__file__", None)
    folder = Path(own_file).resolve().parent if own_file and root.startswith(_FILE_MODULE_PREFIX) else None
    found = [own] if own is not None else []
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if mod is own or not path or not path.endswith(".py"):
            continue
        if name == root or name.startswith(root + "."):
            found.append(mod)
        elif folder is not None:
            resolved = Path(path).resolve()
            if resolved.is_relative_to(folder) and not {"site-packages", "dist-packages"} & set(resolved.parts):
                found.append(mod)
    return found
