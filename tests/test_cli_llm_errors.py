"""An LLM configured but unreachable: the answer still comes (model-free), and the endpoint's own error
(connection refused, 401) is named once on stderr and once in the trace, not "the model failed" without why."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentrag.cli import app
from tests.helpers import write
from tests.llm_server import ScriptedLLM, error
from tests.servers import free_port

runner = CliRunner()
QUESTION = "What does E1042 mean?"


def ingested(tmp_path: Path) -> str:
    home = str(tmp_path / "home")
    write(tmp_path / "d" / "aurora.md", "# Aurora\n\n## Errors\n\nError E1042 means the quota is exhausted.\n")
    assert runner.invoke(app, ["ingest", str(tmp_path / "d"), "--home", home]).exit_code == 0
    return home


def llm_env(base_url: str) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "test-key",
        "AGENTRAG_LLM_MODEL": "scripted-model",
        "AGENTRAG_LLM__MAX_RETRIES": "0",
    }


def trace_text(home: str, stdout: str) -> str:
    trace_id = json.loads(stdout)["trace_id"]
    return (Path(home) / "traces" / "default" / f"{trace_id}.jsonl").read_text(encoding="utf-8")


def test_a_refused_connection_is_named_once_on_stderr_and_in_the_trace(tmp_path: Path) -> None:
    home = ingested(tmp_path)
    endpoint = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    for extra in ([], ["--stream"]):
        result = runner.invoke(
            app, ["ask", QUESTION, "--mode", "single", "--home", home, *extra], env=llm_env(endpoint)
        )
        assert result.exit_code == 0, result.output
        assert "quota is exhausted" in result.stdout  # answered without the model
        assert result.stderr.count("Connection refused") == 1, result.stderr
        assert f"cannot reach model 'scripted-model' at {endpoint}" in result.stderr
    result = runner.invoke(app, ["ask", QUESTION, "--mode", "single", "--home", home, "--json"], env=llm_env(endpoint))
    assert result.stderr.count("Connection refused") == 1, result.stderr
    json.loads(result.stdout)
    assert trace_text(home, result.stdout).count("Connection refused") == 1


def test_a_401_is_named_with_the_servers_words(tmp_path: Path) -> None:
    home = ingested(tmp_path)
    with ScriptedLLM(lambda body, i: error(401, "Incorrect API key provided"), strict=False) as llm:
        result = runner.invoke(
            app, ["ask", QUESTION, "--mode", "single", "--home", home, "--json"], env=llm_env(llm.base_url)
        )
    assert result.exit_code == 0, result.output
    assert result.stderr.count("refused the API key (401): Incorrect API key provided") == 1, result.stderr
    assert "check OPENAI_API_KEY" in result.stderr
    assert json.loads(result.stdout)["stop_reason"] == "fallback"
    assert trace_text(home, result.stdout).count("Incorrect API key provided") == 1
