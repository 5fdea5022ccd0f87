"""Through HTTP: a knowledge base deleted and created again under the same name answers from its own documents."""

from __future__ import annotations

from tests.server.conftest import Running
from tests.server.test_api import make_kb, upload

OLD = "# Aurora\n\nError E1042 means the query has over 128 clauses.\n"
FILLER = "# Lunch\n\nThe canteen opens at noon and closes at two.\n"
NEW = "# Aurora\n\nError E1042 means the index is being rebuilt; retry later.\n"


def test_a_recreated_knowledge_base_is_not_served_the_old_ones_cached_search(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "a-aurora.md", OLD)
    upload(client, "kb", "b-lunch.md", FILLER)
    first = client.post("/v1/kb/kb/search", json={"query": "E1042", "k": 2}).json()["hits"]
    assert "128 clauses" in first[0]["text"]
    assert client.delete("/v1/kb/kb").status_code == 204
    make_kb(running, "kb")
    upload(client, "kb", "a-lunch.md", FILLER)  # as many writes as before: the same generation
    upload(client, "kb", "b-aurora.md", NEW)
    hits = client.post("/v1/kb/kb/search", json={"query": "E1042", "k": 2}).json()["hits"]
    assert "being rebuilt" in hits[0]["text"]
    assert hits[0]["source"].endswith("b-aurora.md")
