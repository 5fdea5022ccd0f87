"""What each command writes where: stdout carries only what a script wants (the key, the answer, the JSON);
notes, progress and warnings go to stderr. And `ask --stream` shows the answer once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.server.keys import KeyStore
from tests.helpers import write
from tests.llm_server import Reply, ScriptedLLM, prompt_text, text

runner = CliRunner()


def docs(root: Path) -> Path:
    write(root / "aurora.md", "# Aurora\n\n## Errors\n\nError E1042 means the quota is exhausted.\n")
    write(root / "policy.md", "# 报销制度\n\n## 差旅标准\n\n员工出差住宿标准为每晚五百元。\n")
    return root


def test_keys_create_prints_only_the_key_on_stdout_and_the_note_on_stderr(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = runner.invoke(app, ["keys", "create", "--admin", "--home", str(home)])
    assert result.exit_code == 0
    key = result.stdout.strip()
    assert "\n" not in key, result.stdout  # KEY=$(agentrag keys create --admin)
    assert key.startswith("ar_")
    assert "shown once" in result.stderr
    with KeyStore(home) as store:
        found = store.authenticate(key)
    assert found is not None
    assert found.admin


def test_with_json_stdout_is_one_json_object_per_command(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    commands = [
        ["ingest", str(docs(tmp_path / "d")), "--tag", "team=ops"],
        ["search", "E1042"],
        ["ask", "What does E1042 mean?"],
        ["ask", "What does E1042 mean?", "--stream"],
        ["docs", "list"],
        ["failures"],
        ["keys", "create", "--kb", "default"],
        ["keys", "list"],
    ]
    for command in commands:
        result = runner.invoke(app, [*command, "--home", home, "--json"])
        assert result.exit_code == 0, (command, result.output)
        json.loads(result.stdout)  # nothing else on stdout: no notice, no progress, no streamed tokens
    chat = runner.invoke(app, ["chat", "--home", home, "--json"], input="What does E1042 mean?\n/new\n住宿标准？\n")
    assert chat.exit_code == 0, chat.output
    lines = chat.stdout.splitlines()
    assert len(lines) == 2
    assert all(json.loads(line)["answer"] for line in lines)


FABRICATED = "Error E1042 means the quota is exhausted [1]. Aurora was written in Rust by a team of forty people [1]."


def test_ask_stream_prints_the_answer_once_and_lists_what_the_check_marked(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    assert runner.invoke(app, ["ingest", str(docs(tmp_path / "d")), "--home", home]).exit_code == 0

    def script(body: dict[str, Any], index: int) -> Reply:
        return text(FABRICATED) if "E1042" in prompt_text(body) else text("{}")

    with ScriptedLLM(script, strict=False) as llm:
        env = {
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test-key",
            "AGENTRAG_LLM_MODEL": "scripted-model",
            "AGENTRAG_LLM__MAX_RETRIES": "0",
        }
        result = runner.invoke(
            app, ["ask", "What does E1042 mean?", "--mode", "single", "--stream", "--home", home], env=env
        )
    assert result.exit_code == 0, result.output
    out = result.stdout
    # The answer once (its first sentence is also the source's quote); no second copy after the check.
    assert out.count("Error E1042 means the quota is exhausted") == 2, out
    assert out.count("written in Rust") == 2, out  # streamed once, then named once in the check's line
    check = next(line for line in out.splitlines() if "unverified" in line)
    assert "Aurora was written in Rust by a team of forty people." in check
    assert "quota" not in check
    assert "Sources" in out
