"""Start-up: `agentrag --help` loads only the command line, and a model-free `ask` never loads the LLM SDK.

Each check runs the command in a fresh interpreter and reads `sys.modules` at its end (no timing: what is
imported is what a user waits for)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from agentrag.cli import app
from tests.helpers import write

HEAVY = ("openai", "jieba", "numpy", "agentrag.agent", "agentrag.kb")

# Runs `agentrag ARGS...` as `python -m agentrag.cli` would, then writes which modules of HEAVY were loaded.
PROBE = """
import json, runpy, sys
out, modules, args = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
sys.argv = ["agentrag", *args]
code = 0
try:
    runpy.run_module("agentrag.cli", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code or 0
with open(out, "w") as f:
    json.dump({"code": code, "loaded": [m for m in modules if m in sys.modules]}, f)
"""


def loaded_by(tmp_path: Path, *args: str, watch: tuple[str, ...] = HEAVY) -> tuple[int, list[str], str]:
    """(exit code, modules of `watch` loaded, stdout) of `agentrag ARGS` in a fresh interpreter without an LLM."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTRAG_LLM"))}
    result_file = tmp_path / "loaded.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(result_file), ",".join(watch), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    result = json.loads(result_file.read_text())
    return result["code"], result["loaded"], done.stdout


def test_help_and_version_load_neither_the_models_nor_the_agent(tmp_path: Path) -> None:
    for args in (["--help"], ["ask", "--help"], ["ingest", "--help"], ["--version"], ["version"]):
        code, loaded, stdout = loaded_by(tmp_path, *args)
        assert code == 0, (args, stdout)
        assert loaded == [], f"agentrag {' '.join(args)} imported {loaded}"


def test_a_model_free_ask_and_search_never_load_the_llm_sdk(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(tmp_path / "d" / "aurora.md", "# Aurora\n\n## Errors\n\nError E1042 means the quota is exhausted.\n")
    assert CliRunner().invoke(app, ["ingest", str(tmp_path / "d"), "--home", str(home)]).exit_code == 0
    for command in ("ask", "search"):
        code, loaded, stdout = loaded_by(tmp_path, command, "What does E1042 mean?", "--home", str(home))
        assert code == 0, stdout
        assert "quota is exhausted" in stdout
        assert "openai" not in loaded, f"a model-free {command} imported the openai SDK"


def test_help_loads_no_settings_models_and_docs_list_no_agent(tmp_path: Path) -> None:
    """The settings (pydantic-settings: a third of a second) load for a command, not for its help; listing
    documents needs the store, not the agent, the ingest pipeline (loaders), the tokenizer or an SDK."""
    for args in (["--help"], ["ask", "--help"], ["search", "--help"], ["docs", "--help"]):
        code, loaded, stdout = loaded_by(tmp_path, *args, watch=("pydantic_settings", "agentrag.settings"))
        assert code == 0, (args, stdout)
        assert loaded == [], f"agentrag {' '.join(args)} imported {loaded}"
    home = tmp_path / "home"
    write(tmp_path / "d" / "aurora.md", "# Aurora\n\nAurora is the search API.\n")
    assert CliRunner().invoke(app, ["ingest", str(tmp_path / "d"), "--home", str(home)]).exit_code == 0
    watch = ("openai", "jieba", "agentrag.agent.assistant", "agentrag.ingest.pipeline", "agentrag.ingest.loaders")
    code, loaded, stdout = loaded_by(tmp_path, "docs", "list", "--home", str(home), watch=watch)
    assert code == 0, stdout
    assert "aurora.md" in stdout
    assert loaded == [], f"agentrag docs list imported {loaded}"
