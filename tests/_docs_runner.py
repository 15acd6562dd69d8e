"""Runs the samples of one documentation page in a fresh interpreter (tests/test_docs.py).

A page's python blocks share one namespace, in order, and its runnable shell blocks run between them, so
a page that writes ``my_summarizer.py``, runs the harness on it, fixes it and replays is tested as a reader
would follow it. A fresh interpreter per page keeps what the samples register (a fact kind, an oracle) out
of the test process. Usage: ``python tests/_docs_runner.py BLOCKS.json`` with the page's directory as cwd;
exit 0 when every sample did what the page says, else 1 with the first failure on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def main(path: str) -> int:
    blocks = json.loads(Path(path).read_text(encoding="utf-8"))
    here = Path.cwd()
    sys.path.insert(0, str(here))
    namespace: dict = {"__name__": "__docs__"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")])}
    for block in blocks:
        where = block["where"]
        if block["language"] == "python":
            if block["title"]:
                (here / block["title"]).write_text(block["code"], encoding="utf-8")
                for name in list(sys.modules):  # a file the page rewrites is imported afresh
                    if name == Path(block["title"]).stem:
                        del sys.modules[name]
            try:
                exec(compile(block["code"], where, "exec"), namespace)
            except BaseException as exc:  # noqa: BLE001 - say which sample failed, and how
                print(f"the python sample at {where} raised {type(exc).__name__}: {exc}", file=sys.stderr)
                return 1
        else:
            for args, expected in block["commands"]:
                done = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                                      timeout=300, env=env)
                if done.returncode != expected:
                    print(f"{where}: `compaction-harness {' '.join(args)}` exited {done.returncode}, the page says "
                          f"{expected}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}",
                          file=sys.stderr)
                    return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
