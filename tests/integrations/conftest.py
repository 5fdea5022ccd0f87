"""The bundled sample as knowledge base `default` in `<dir>/.agentrag` (as the README's `agentrag ingest` makes
it), searched in this process and through a running service."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.server.conftest import Running, serving

SAMPLE = Path(str(files("agentrag") / "sample" / "docs"))


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[KnowledgeBase]:
    settings = load_settings(tmp_path_factory.mktemp("sample") / ".agentrag", server={"requests_per_minute": 600})
    with KnowledgeBase.open("default", settings=settings, embedder=embedder) as kb:
        kb.ingest([SAMPLE])
        yield kb


@pytest.fixture(scope="module")
def service(sample_kb: KnowledgeBase) -> Iterator[Running]:
    with serving(sample_kb.settings) as running:
        yield running


@pytest.fixture(scope="module")
def sample_key(service: Running) -> str:
    """A key for the sample knowledge base only."""
    return service.key("default")
