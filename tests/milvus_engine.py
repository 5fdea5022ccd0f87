"""A real Milvus engine for tests and benchmarks: Milvus Lite 2.5 (the Milvus C++ core) served over gRPC on a
local port, run from its own virtual environment (its `setuptools<80` pin must not constrain the main one).

The environment is `.venv-milvus` beside the repo, made from `.ci/milvus-lite.txt` when it is missing
(`.ci/run` makes it up front); `MILVUS_LITE_PYTHON` names another interpreter that has milvus-lite (not an
`AGENTRAG_` variable: those are settings, and an unknown one is an error).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REQUIREMENTS = REPO / ".ci" / "milvus-lite.txt"
_SERVE = """
import sys
from milvus_lite.server import Server
server = Server(sys.argv[1], address=sys.argv[2])
if not (server.init() and server.start()):
    sys.exit("milvus-lite did not start")
server._p.wait()
"""


def engine_python() -> Path:
    """The interpreter that has milvus-lite 2.5, made from the repo's requirements file if need be."""
    named = os.environ.get("MILVUS_LITE_PYTHON")
    if named:
        return Path(named)
    venv = REPO / ".venv-milvus"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True)
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def milvus_engine(directory: Path, timeout_s: float = 60.0) -> Iterator[str]:
    """Start the engine on a data file in `directory`; yields its URI; stops it (and its server) after."""
    from pymilvus import MilvusClient

    directory.mkdir(parents=True, exist_ok=True)
    uri = f"http://127.0.0.1:{_free_port()}"
    log = (directory / "engine.log").open("wb")
    proc = subprocess.Popen(
        [str(engine_python()), "-c", _SERVE, str(directory / "engine.db"), uri.removeprefix("http://")],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the engine is a grandchild: stop the whole group
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Milvus Lite exited: {(directory / 'engine.log').read_text()[-2000:]}")
            try:
                MilvusClient(uri=uri, timeout=2).close()
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield uri
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
