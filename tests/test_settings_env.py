"""Environment variables are settings too: a misspelled one is an error naming it, never silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.errors import ConfigError
from agentrag.settings import load_settings


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("AGENTRAG_RETRIEVL__TOP_K", "retrieval"),  # a misspelled section
        ("AGENTRAG_RETRIEVAL__TOPK", "top_k"),  # a misspelled field
        ("AGENTRAG_RETRIEVAL__TOP_K__MAX", "top_k"),  # a field is not a section
        ("AGENTRAG_TOP_K", "AGENTRAG_RETRIEVAL__TOP_K"),  # a field without its section
    ],
)
def test_a_misspelled_environment_variable_is_an_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, hint: str
) -> None:
    monkeypatch.setenv(name, "5")
    with pytest.raises(ConfigError, match=name) as caught:
        load_settings(tmp_path / "home")
    assert hint in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_bad_value_in_an_environment_variable_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AGENTRAG_RETRIEVAL__TOP_K", "many")
    with pytest.raises(ConfigError, match="AGENTRAG_RETRIEVAL__TOP_K") as caught:
        load_settings(tmp_path / "home")
    assert "integer" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_every_documented_kind_of_variable_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTRAG_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("AGENTRAG_RETRIEVAL__TOP_K", "5")
    monkeypatch.setenv("agentrag_retrieval__candidates", "70")  # names are case-insensitive
    monkeypatch.setenv("AGENTRAG_INGEST__CHUNKING__CHUNK_SIZE", "800")
    monkeypatch.setenv("AGENTRAG_RERANK", '{"top_n": 12}')  # a whole section as JSON
    monkeypatch.setenv("AGENTRAG_LLM__ROLE_MODELS__GRADER", "small-model")
    monkeypatch.setenv("AGENTRAG_LLM_MODEL", "big-model")
    monkeypatch.setenv("AGENTRAG_REDIS_URL", "redis://127.0.0.1:1/0")
    settings = load_settings()
    assert settings.home == tmp_path / "elsewhere"
    assert (settings.retrieval.top_k, settings.retrieval.candidates) == (5, 70)
    assert settings.ingest.chunking.chunk_size == 800
    assert settings.rerank.top_n == 12
    assert settings.llm.role_models == {"grader": "small-model"}
    assert settings.llm.model == "big-model"
    assert settings.redis_url == "redis://127.0.0.1:1/0"


def test_the_cli_shows_a_misspelled_variable_as_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["search", "anything", "--home", str(tmp_path / "home")], env={"AGENTRAG_RETRIEVL__TOP_K": "5"}
    )
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "AGENTRAG_RETRIEVL__TOP_K" in line
