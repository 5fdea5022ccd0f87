"""`GET /v1/models` and `POST /v1/vector_stores/{kb}/search` driven by the real `openai` SDK against a running
service holding the bundled sample: the listed models are what chat completions take, the search returns the
sample's passages in OpenAI's shape, filters narrow it, a wrong key is refused, another key's knowledge base is
not reachable (and the refusal says nothing a missing one would not)."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import openai
import pytest

from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.helpers import write
from tests.server.conftest import Running, serving
from tests.servers import json_server

SAMPLE = Path(str(files("agentrag") / "sample" / "docs"))
FINANCE = ("expense-policy-2025.md", "travel-policy-2024.docx")  # tagged dept=finance; the rest dept=eng


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    settings = load_settings(tmp_path_factory.mktemp("doors") / "home", server={"requests_per_minute": 6000})
    with KnowledgeBase.open("team", settings=settings, create=True) as kb:
        kb.ingest([SAMPLE / name for name in FINANCE], {"dept": "finance"}, source_root=SAMPLE)
        kb.ingest([p for p in sorted(SAMPLE.iterdir()) if p.name not in FINANCE], {"dept": "eng"}, source_root=SAMPLE)
    with KnowledgeBase.open("财务", settings=settings, create=True) as kb:  # a display name: id `kb-...`
        kb.ingest([SAMPLE / "expense-policy-2025.md"], source_root=SAMPLE)
    with KnowledgeBase.open("private", settings=settings, create=True) as kb:
        kb.ingest([SAMPLE / "oncall-runbook.md"], source_root=SAMPLE)
    with serving(settings) as running:
        yield running


def sdk(running: Running, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{running.url}/v1", api_key=key, max_retries=0)


def search(running: Running, key: str, kb: str = "team", **params: Any) -> Any:
    return sdk(running, key).vector_stores.search(kb, **params)


def test_models_lists_the_keys_knowledge_bases_and_each_id_is_a_chat_model(service: Running) -> None:
    client = sdk(service, service.key("team", "财务"))
    models = list(client.models.list())
    shown = {m.id: (m.model_extra or {}).get("display_name") for m in models}
    assert set(shown) == {"team", KnowledgeBase.open("财务", settings=service.settings, create=False).name}
    assert "财务" in shown.values()
    assert all(m.object == "model" and m.owned_by == "agentrag" and m.created > 1_600_000_000 for m in models)
    for model in models:  # exactly what /v1/chat/completions accepts
        reply = client.chat.completions.create(model=model.id, messages=[{"role": "user", "content": "住宿标准？"}])
        assert "元" in (reply.choices[0].message.content or ""), model.id
        assert client.models.retrieve(model.id).id == model.id
    assert {m.id for m in sdk(service, service.admin).models.list()} == {*shown, "private"}
    derived = next(m.id for m in models if m.id != "team")
    assert client.models.retrieve("财务").id == derived, "a display name names the same model"
    by_name = client.vector_stores.search("财务", query="住宿标准", max_num_results=1)
    assert [r.filename for r in by_name] == ["expense-policy-2025.md"]


def test_models_needs_a_valid_key_and_hides_other_knowledge_bases(service: Running) -> None:
    with pytest.raises(openai.AuthenticationError):
        sdk(service, "ar_not-a-real-key").models.list()
    outsider = sdk(service, service.key("team"))
    assert [m.id for m in outsider.models.list()] == ["team"]
    with pytest.raises(openai.NotFoundError) as hidden:
        outsider.models.retrieve("private")
    with pytest.raises(openai.NotFoundError) as missing:
        outsider.models.retrieve("nowhere")
    assert hidden.value.body == {"detail": "no knowledge base 'private' this key may use"}
    assert missing.value.body == {"detail": "no knowledge base 'nowhere' this key may use"}


def test_search_returns_the_sample_passages_in_openais_shape(service: Running) -> None:
    page = search(service, service.key("team"), query="出差住宿标准是多少？", max_num_results=3)
    results = list(page)
    assert len(results) == 3
    assert results[0].filename in FINANCE
    assert "住宿" in results[0].content[0].text
    assert all(r.content[0].type == "text" for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    first = results[0]
    assert first.attributes is not None
    assert first.attributes["dept"] == "finance"
    assert first.attributes["chunk_id"].startswith(first.file_id + "#")
    assert first.attributes["source"] == first.filename
    assert page.model_extra == {"search_query": ["出差住宿标准是多少？"], "has_more": False, "next_page": None}
    assert page.object == "vector_store.search_results.page"


def test_search_refuses_a_wrong_key_and_hides_another_keys_knowledge_base(service: Running) -> None:
    with pytest.raises(openai.AuthenticationError):
        search(service, "ar_not-a-real-key", query="住宿")
    outsider = service.key("team")
    with pytest.raises(openai.NotFoundError) as hidden:
        search(service, outsider, kb="private", query="on-call")
    with pytest.raises(openai.NotFoundError) as missing:
        search(service, outsider, kb="nowhere", query="on-call")
    assert hidden.value.body == {"detail": "no knowledge base 'private' this key may use"}
    assert missing.value.body == {"detail": "no knowledge base 'nowhere' this key may use"}
    assert search(service, service.key("private"), kb="private", query="on-call").data


def test_filters_narrow_the_search_to_tags_files_and_dates(service: Running) -> None:
    key = service.key("team")
    query = "报销 住宿 release on-call"

    def files_of(filters: dict[str, Any], k: int = 20) -> set[str]:
        return {r.filename for r in search(service, key, query=query, filters=filters, max_num_results=k)}

    everything = files_of({"type": "eq", "key": "dept", "value": "eng"}) | set(FINANCE)
    assert files_of({"type": "eq", "key": "dept", "value": "finance"}) == set(FINANCE)
    assert files_of({"type": "eq", "key": "dept", "value": "eng"}).isdisjoint(FINANCE)
    only = {"type": "in", "key": "filename", "value": ["oncall-runbook.md", "aurora-api-handbook.md"]}
    assert files_of(only) == {"oncall-runbook.md", "aurora-api-handbook.md"}
    either = {"type": "or", "filters": [{"type": "eq", "key": "filename", "value": n} for n in FINANCE]}
    assert files_of(either) == set(FINANCE)
    recent = {"type": "gte", "key": "date", "value": "2024-06-01"}  # the 2024 travel policy is from February
    dated = list(search(service, key, query=query, filters=recent, max_num_results=20))
    assert dated
    assert all(str((r.attributes or {})["date"]) >= "2024-06-01" for r in dated)
    assert "travel-policy-2024.docx" not in {r.filename for r in dated}
    both = {"type": "and", "filters": [recent, {"type": "eq", "key": "dept", "value": "finance"}]}
    assert files_of(both) == {"expense-policy-2025.md"}  # dated 2024-12-20
    assert files_of({"type": "lt", "key": "date", "value": "2024-12-20"}) == {"travel-policy-2024.docx"}
    after_expense = {"type": "gt", "key": "date", "value": 1734652800}  # Unix seconds: 2024-12-20 00:00 UTC
    assert files_of(after_expense).isdisjoint(FINANCE)
    by_id = dated[0].file_id
    assert {
        r.file_id for r in search(service, key, query=query, filters={"type": "eq", "key": "file_id", "value": by_id})
    } == {by_id}
    assert len(files_of(recent)) < len(everything)


@pytest.mark.parametrize(
    ("filters", "named"),
    [
        ({"type": "ne", "key": "dept", "value": "eng"}, "'ne' on 'dept'"),
        ({"type": "gt", "key": "dept", "value": 3}, "'gt' on 'dept'"),
        ({"type": "eq", "key": "title", "value": "x"}, "'title' cannot be filtered on"),
        ({"type": "eq", "key": "date", "value": "soon"}, "'date' 'soon' is not a date"),
        (
            {
                "type": "or",
                "filters": [{"type": "eq", "key": "dept", "value": "a"}, {"type": "eq", "key": "x", "value": "b"}],
            },
            "filters: 'or' is supported only",
        ),
        (
            {
                "type": "and",
                "filters": [{"type": "eq", "key": "team", "value": "x"}, {"type": "nin", "key": "y", "value": ["z"]}],
            },
            "filters.filters[1]: 'nin' on 'y'",
        ),
    ],
)
def test_an_unsupported_filter_is_a_422_naming_it(service: Running, filters: dict[str, Any], named: str) -> None:
    with pytest.raises(openai.UnprocessableEntityError) as refused:
        search(service, service.key("team"), query="住宿", filters=filters)
    assert named in refused.value.body["detail"]


def test_threshold_several_queries_and_rewrite(service: Running) -> None:
    key = service.key("team")
    everything = list(search(service, key, query="住宿标准", max_num_results=20))
    high = list(search(service, key, query="住宿标准", max_num_results=20, ranking_options={"score_threshold": 0.5}))
    assert high
    assert len(high) < len(everything)
    assert all(r.score >= 0.5 for r in high)
    merged = search(service, key, query=["住宿标准", "值班手册 升级路径"], max_num_results=6)
    chunk_ids = [r.attributes["chunk_id"] for r in merged if r.attributes]
    assert len(chunk_ids) == len(set(chunk_ids))
    assert {"oncall-runbook.md"} & {r.filename for r in merged}
    assert {r.filename for r in merged} & set(FINANCE)
    rewritten = search(service, key, query="请问出差住宿标准是多少？", rewrite_query=True)
    assert rewritten.model_extra["search_query"] == ["出差住宿标准是多少？"]
    with pytest.raises(openai.UnprocessableEntityError):
        search(service, key, query="住宿", max_num_results=51)


def test_ranker_none_keeps_the_fused_order_that_the_reranker_changes(tmp_path: Path) -> None:
    def handler(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        scores = [0.9 if "deserts" in doc else 0.1 for doc in body["documents"]]
        return 200, {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}

    for i, topic in enumerate(["rivers", "mountains", "deserts"]):
        write(tmp_path / "docs" / f"{topic}.md", f"# {topic.title()}\n\nA short note {i} about {topic}.\n")
    with json_server(handler) as (url, _):
        settings = load_settings(tmp_path / "home", rerank={"provider": "http", "base_url": url})
        with KnowledgeBase.open("kb", settings=settings, create=True) as kb:
            kb.ingest([tmp_path / "docs"])
        with serving(settings) as running:
            reranked = list(search(running, running.admin, kb="kb", query="rivers", max_num_results=2))
            fused = list(
                search(
                    running,
                    running.admin,
                    kb="kb",
                    query="rivers",
                    max_num_results=2,
                    ranking_options={"ranker": "none"},
                )
            )
    assert reranked[0].filename == "deserts.md"
    assert reranked[0].score == pytest.approx(0.9)
    assert fused[0].filename == "rivers.md"


def test_a_pdf_passage_names_its_page_as_a_number(service: Running) -> None:
    client = service.client(service.key("team"))
    body = {
        "query": "scheduled maintenance window Sunday",
        "filters": {"type": "eq", "key": "filename", "value": "aurora-sla-enterprise.pdf"},
    }
    answer = client.post("/v1/vector_stores/team/search", json=body)
    assert answer.status_code == 200, answer.text
    pages = [r["attributes"]["page"] for r in answer.json()["data"]]
    assert pages
    assert all(type(p) is int and p >= 1 for p in pages)
    assert 2 in pages, "the maintenance window is on page 2"
