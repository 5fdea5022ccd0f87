"""Telemetry is off unless the standard OTEL_* variables ask for it, costs no import of opentelemetry when off,
and a variable it cannot follow is named before any question is answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import ConsoleSpanExporter

from agentrag import telemetry
from agentrag.errors import ConfigError
from agentrag.kb import KnowledgeBase
from agentrag.telemetry.setup import exporters
from tests.agent.test_agent_llm import docs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def read_again() -> Iterator[None]:
    telemetry.reset()
    yield
    telemetry.reset()


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "none,console"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"}, False),
        ({"OTEL_SERVICE_NAME": "support-bot"}, False),
    ],
)
def test_the_standard_variables_turn_it_on(env: dict[str, str], on: bool) -> None:
    assert telemetry.wanted(env) is on


def test_exporters_by_name() -> None:
    assert [type(e) for e in exporters({"OTEL_TRACES_EXPORTER": "console"})] == [ConsoleSpanExporter]
    assert exporters({"OTEL_TRACES_EXPORTER": "none"}) == []
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER: unknown exporter 'zipkin'"):
        exporters({"OTEL_TRACES_EXPORTER": "console,zipkin"})
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_PROTOCOL: unknown protocol 'http/json'"):
        exporters({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


def test_otlp_is_the_exporter_an_endpoint_asks_for() -> None:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:  # not in `dev`: the error says what to install
        with pytest.raises(
            ConfigError, match=r"opentelemetry-exporter-otlp-proto-http: pip install \"agentrag\[otlp\]\""
        ):
            exporters({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    else:
        assert [type(e) for e in exporters({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})] == [
            OTLPSpanExporter
        ]


def test_a_bad_variable_is_named_before_a_question_is_answered(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb.ingest([docs(tmp_path / "docs")])
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER: unknown exporter 'zipkin'"):
        kb.ask("What caused INC-2291?")
    assert kb.search("INC-2291")  # nothing stored is touched


ASK = """
import json, sys
from pathlib import Path
from agentrag.kb import KnowledgeBase
with KnowledgeBase.open("kb", home=sys.argv[1]) as kb:
    kb.ingest([sys.argv[2]])
    answer = kb.ask("What caused INC-2291?", mode="single")
otel = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
print(json.dumps({"trace_id": answer.trace_id, "otel": otel}))
"""


def run_ask(tmp_path: Path, **env: str) -> tuple[dict[str, object], str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    clean["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-c", ASK, str(tmp_path / "home"), str(docs(tmp_path / "docs"))],
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    first, _, rest = done.stdout.partition("\n")
    return json.loads(first), rest


def test_off_by_default_without_importing_opentelemetry(tmp_path: Path) -> None:
    result, rest = run_ask(tmp_path)
    assert result["otel"] == []
    assert rest == ""


def test_on_from_the_environment_alone(tmp_path: Path) -> None:
    """`OTEL_TRACES_EXPORTER=console`: the spans of the ask are printed (as the console exporter does, on stdout)
    when the process exits, under the service name from OTEL_SERVICE_NAME."""
    result, spans = run_ask(tmp_path, OTEL_TRACES_EXPORTER="console", OTEL_SERVICE_NAME="support-bot")
    assert result["otel"]
    assert '"name": "invoke_agent agentrag"' in spans
    assert '"name": "retrieval kb"' in spans
    assert f'"agentrag.trace_id": "{result["trace_id"]}"' in spans
    assert '"service.name": "support-bot"' in spans


def test_the_service_does_not_start_with_a_bad_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentrag.server.app import create_app
    from agentrag.settings import load_settings

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "jaeger")
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER: unknown exporter 'jaeger'"):
        create_app(load_settings(tmp_path / "home"))
