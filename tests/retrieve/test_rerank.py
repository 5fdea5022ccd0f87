"""The /v1/rerank path against a scripted endpoint on 127.0.0.1."""

from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.helpers import write
from tests.servers import free_port, json_server


def corpus(root: Path) -> Path:
    for i, topic in enumerate(["rivers", "mountains", "glaciers", "deserts"]):
        write(root / f"{topic}.md", f"# {topic.title()}\n\nA short note {i} about {topic} and the landscape.\n")
    return root


def test_reranker_reorders_the_fused_hits_and_scores_are_reported(tmp_path: Path, embedder: Embedder) -> None:
    def handler(path: str, body: dict) -> tuple[int, dict]:
        # Prefer whichever passage mentions deserts, whatever the first stage thought.
        scores = [1.0 if "deserts" in doc else 0.1 * i for i, doc in enumerate(body["documents"])]
        return 200, {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}

    with json_server(handler) as (url, requests):
        settings = load_settings(tmp_path / "home", rerank={"provider": "http", "base_url": url, "model": "bge-rr"})
        with KnowledgeBase.open("r", settings=settings, embedder=embedder) as kb:
            kb.ingest([corpus(tmp_path / "docs")])
            hits = kb.search("rivers", k=4)
    assert hits[0].chunk.title == "Deserts"
    assert hits[0].rerank_score == 1.0
    assert requests[0]["path"] == "/v1/rerank"
    assert requests[0]["body"]["query"] == "rivers"
    assert requests[0]["body"]["model"] == "bge-rr"


def test_a_failing_reranker_keeps_the_fused_order(tmp_path: Path, embedder: Embedder) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    settings = load_settings(tmp_path / "home", rerank={"provider": "http", "base_url": url, "timeout_s": 2})
    with KnowledgeBase.open("r", settings=settings, embedder=embedder) as kb:
        kb.ingest([corpus(tmp_path / "docs")])
        hits = kb.search("rivers", k=2)
    assert hits[0].chunk.title == "Rivers"
    assert hits[0].rerank_score is None
