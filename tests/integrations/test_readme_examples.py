"""The README's retriever and OpenTelemetry examples, run as a user pastes them, in the directory where
`agentrag ingest "$(agentrag sample)"` put the sample (knowledge base `default` in `.agentrag`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentrag.kb import KnowledgeBase
from tests.server.conftest import Running

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def blocks(title: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(title), re.S)


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTRAG_", "OPENAI_"))}
    clean["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return subprocess.run(args, cwd=cwd, env=clean | env, capture_output=True, text=True, timeout=300, check=False)


def test_the_retriever_examples_run_on_the_sample(sample_kb: KnowledgeBase, service: Running, sample_key: str) -> None:
    examples = blocks("LangChain and LlamaIndex retrievers", "python")
    assert len(examples) == 3
    where = sample_kb.settings.home.parent
    outputs = []
    for code in examples:
        code = code.replace("http://127.0.0.1:8000", service.url).replace("ar_...", sample_key)
        done = run([sys.executable, "-c", code + "\nprint('ok')\n"], where)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert "aurora-api-handbook.md" in outputs[0]
    assert "'bm25'" in outputs[0]
    assert "expense-policy-2025.md" in outputs[1] or "travel-policy-2024.docx" in outputs[1]
    assert outputs[2].strip() == "ok"


def test_the_console_exporter_example_prints_the_spans(sample_kb: KnowledgeBase) -> None:
    command = next(line for line in blocks("OpenTelemetry", "bash")[0].splitlines() if "console" in line)
    words = command.split("#")[0].split()
    env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith('"'))
    question = re.search(r'"(.*?)"', command)
    assert question is not None
    done = run([sys.executable, "-m", "agentrag.cli", "ask", question.group(1)], sample_kb.settings.home.parent, **env)
    assert done.returncode == 0, done.stderr
    assert "E1042" in done.stdout
    assert '"name": "invoke_agent agentrag"' in done.stdout
    assert '"gen_ai.data_source.id": "default"' in done.stdout


@pytest.mark.parametrize("variable", ["OTEL_TRACES_EXPORTER=zipkin", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"])
def test_the_cli_names_a_bad_variable(sample_kb: KnowledgeBase, variable: str) -> None:
    name, value = variable.split("=")
    env = {name: value, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}
    done = run(
        [sys.executable, "-m", "agentrag.cli", "ask", "What does error E1042 mean?"],
        sample_kb.settings.home.parent,
        **env,
    )
    assert done.returncode != 0
    assert name in done.stderr
    assert "Traceback" not in done.stderr
