"""The Milvus backend end to end through the CLI: `agentrag kb copy --from sqlite --to milvus` moves a knowledge
base without embedding again, and `agentrag eval --store milvus` measures through Milvus."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.helpers import write
from tests.test_cli import docs

runner = CliRunner()


@pytest.fixture
def milvus_env(milvus_uri: str, monkeypatch: pytest.MonkeyPatch) -> str:
    prefix = f"c{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("AGENTRAG_STORE__URI", milvus_uri)
    monkeypatch.setenv("AGENTRAG_STORE__COLLECTION_PREFIX", prefix)
    return prefix


def test_kb_copy_moves_documents_and_vectors_without_embedding(
    tmp_path: Path, milvus_env: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open("team", settings=load_settings(home), embedder=embedder) as kb:
        kb.ingest([docs(tmp_path / "docs")])
        before = [(h.chunk.chunk_id, round(h.score, 4)) for h in kb.search("住宿标准", k=3)]
        sqlite_vectors = kb.store.get_vectors([h.key for h in kb.search("quota", k=2)])
    calls = []
    monkeypatch.setattr(type(embedder), "embed_passages", lambda *a, **k: calls.append(a) or [], raising=False)
    result = runner.invoke(
        app, ["kb", "copy", "--kb", "team", "--from", "sqlite", "--to", "milvus", "--home", str(home), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["documents"], report["skipped"]) == (2, 0)
    assert not calls, "nothing was embedded again"
    settings = load_settings(home)
    assert settings.store.collection_prefix == milvus_env
    settings = settings.model_copy(update={"store": settings.store.model_copy(update={"backend": "milvus"})})
    with KnowledgeBase.open("team", settings=settings, embedder=embedder) as kb:
        assert kb.stats().documents == 2
        assert [(h.chunk.chunk_id, round(h.score, 4)) for h in kb.search("住宿标准", k=3)] == before
        milvus_vectors = kb.store.get_vectors([h.key for h in kb.search("quota", k=2)])
    assert milvus_vectors == pytest.approx(sqlite_vectors, abs=1e-6)
    again = runner.invoke(
        app, ["kb", "copy", "--kb", "team", "--from", "sqlite", "--to", "milvus", "--home", str(home), "--json"]
    )
    assert json.loads(again.output)["skipped"] == 2


def test_kb_copy_of_a_missing_knowledge_base_is_a_clear_error(tmp_path: Path, milvus_env: str) -> None:
    result = runner.invoke(
        app, ["kb", "copy", "--kb", "nope", "--from", "sqlite", "--to", "milvus", "--home", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert "nope" in result.output


def test_eval_with_store_milvus_runs_through_milvus(tmp_path: Path, milvus_env: str) -> None:
    data = tmp_path / "tiny"
    corpus = [
        {"_id": "d1", "title": "Kestrel", "text": "Kestrel is the queue service owned by the storage team."},
        {"_id": "d2", "title": "Aurora", "text": "Aurora is the search API; error E1042 means quota exhausted."},
        {"_id": "d3", "title": "报销制度", "text": "员工出差住宿标准为每晚五百元。"},
    ]
    queries = [
        {"_id": "q1", "text": "What does E1042 mean?", "answers": ["quota exhausted"]},
        {"_id": "q2", "text": "住宿标准是多少？", "answers": ["五百元"]},
    ]
    write(data / "corpus.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in corpus) + "\n")
    write(data / "queries.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in queries) + "\n")
    write(data / "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t1\n")
    result = runner.invoke(
        app, ["eval", str(data), "--home", str(tmp_path / "home"), "--store", "milvus", "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["details"]["store"] == "milvus"
    assert out["retrieval"]["recall@5"] == 1.0
    assert not list((tmp_path / "home").rglob("store.sqlite")), "no SQLite store was made"


def test_another_host_with_its_own_home_uses_the_same_knowledge_base(tmp_path: Path, milvus_env: str) -> None:
    """Two hosts: each its own home directory, one Milvus. What one ingests, the other searches and lists; a
    name that is in neither is still a clear error."""
    env = {"AGENTRAG_STORE__BACKEND": "milvus"}
    first = runner.invoke(
        app, ["ingest", str(docs(tmp_path / "docs")), "--kb", "team", "--home", str(tmp_path / "a")], env=env
    )
    assert first.exit_code == 0, first.output
    found = runner.invoke(app, ["search", "住宿标准", "--kb", "team", "--home", str(tmp_path / "b"), "--json"], env=env)
    assert found.exit_code == 0, found.output
    assert "五百元" in found.output
    listed = runner.invoke(app, ["docs", "list", "--kb", "team", "--home", str(tmp_path / "b"), "--json"], env=env)
    assert json.loads(listed.output)["total"] == 2
    missing = runner.invoke(app, ["search", "x", "--kb", "other", "--home", str(tmp_path / "b")], env=env)
    assert missing.exit_code == 2
    assert "other" in missing.output
