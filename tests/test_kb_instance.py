"""A knowledge base deleted and created again under the same name is a new knowledge base: nothing cached
for the old one (search rankings, LLM completions) is served for the new one."""

from __future__ import annotations

from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.layout import Layout
from agentrag.settings import Settings
from tests.helpers import write

OLD = "# Aurora\n\nError E1042 means the query has over 128 clauses.\n"
FILLER = "# Lunch\n\nThe canteen opens at noon and closes at two.\n"
NEW = "# Aurora\n\nError E1042 means the index is being rebuilt; retry later.\n"


def test_a_recreated_knowledge_base_does_not_serve_the_old_ones_search_cache(
    tmp_path: Path, settings: Settings, embedder: Embedder
) -> None:
    old = KnowledgeBase.open("kb", settings=settings, embedder=embedder)
    old.ingest([write(tmp_path / "old" / "a-aurora.md", OLD), write(tmp_path / "old" / "b-lunch.md", FILLER)])
    assert "128 clauses" in old.search("E1042", k=2)[0].chunk.text
    old.destroy()
    # The new knowledge base has the same name and, after as many writes, the same generation; its chunk
    # keys are numbered from 1 again, so the old ranking would put the filler first.
    new = KnowledgeBase.open("kb", settings=settings, embedder=embedder)
    new.ingest([write(tmp_path / "new" / "a-lunch.md", FILLER), write(tmp_path / "new" / "b-aurora.md", NEW)])
    hits = new.search("E1042", k=2)
    new.close()
    assert "being rebuilt" in hits[0].chunk.text
    assert hits[0].chunk.source.endswith("b-aurora.md")


def test_the_instance_id_is_kept_and_an_older_knowledge_base_gets_one_on_first_open(
    settings: Settings, embedder: Embedder
) -> None:
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        first = kb.instance_id
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder, create=False) as kb:
        assert kb.instance_id == first, "the id is stored with the knowledge base"
    instance_file = Layout(settings.home).kb_instance_file("kb")
    instance_file.unlink()  # a knowledge base made before instance ids existed
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder, create=False) as kb:
        given = kb.instance_id
    assert given != first
    assert instance_file.exists()
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder, create=False) as kb:
        assert kb.instance_id == given, "the id given on first open was persisted"
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.destroy()
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        assert kb.instance_id not in (first, given), "a recreated knowledge base is a new instance"
