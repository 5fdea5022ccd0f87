"""`POST /v1/vector_stores/{kb}/search`: OpenAI's vector-store search over hybrid search, for tools that speak
that API (LiteLLM, agents with a file-search tool). Same keys and isolation as every other route."""

from __future__ import annotations

from fastapi import HTTPException

from agentrag.agent.rewriter import strip_filler
from agentrag.kb import KnowledgeBase
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.file_search import FilterUnsupported, result, to_search_filter
from agentrag.server.json_body import api_router
from agentrag.server.schemas import IN_KB, WITH_BODY, VectorStoreSearchBody, VectorStoreSearchPage, error_responses
from agentrag.types import Hit, SearchFilter
from agentrag.vocab import Channel

router = api_router(tags=["OpenAI-compatible"])


@router.post("/v1/vector_stores/{kb}/search", responses=error_responses(*IN_KB, *WITH_BODY))
def search(kb: str, body: VectorStoreSearchBody, key: Key, service: ServiceDep) -> VectorStoreSearchPage:
    """Hybrid search (BM25 and dense, fused) in the shape of OpenAI's vector-store search. `file_id` is the
    document id, `attributes` hold the source, chunk id, title, heading, page, date and the document's tags;
    several queries are searched one by one and merged, each passage once at its best score. A filter the
    search cannot express is a 422 naming it (see `filters.key`)."""
    knowledge_base = visible_kb(service, kb, key)
    queries = body.queries()
    try:
        flt = to_search_filter(body.filters)
    except FilterUnsupported as exc:
        raise HTTPException(422, str(exc)) from exc
    if body.rewrite_query:
        queries = [strip_filler(q) for q in queries]
    ranking = body.ranking_options
    reranked = ranking is None or ranking.ranker != "none"
    threshold = ranking.score_threshold if ranking else 0.0
    best: dict[str, tuple[float, Hit]] = {}
    for query in queries:
        for hit, score in _scored(knowledge_base, query, body.max_num_results, flt, reranked):
            if score >= threshold and score > best.get(hit.chunk.chunk_id, (float("-inf"), hit))[0]:
                best[hit.chunk.chunk_id] = (score, hit)
    ranked = sorted(best.values(), key=lambda pair: -pair[0])[: body.max_num_results]
    return VectorStoreSearchPage(search_query=queries, data=[result(hit, score) for score, hit in ranked])


def _scored(
    knowledge_base: KnowledgeBase, query: str, k: int, flt: SearchFilter | None, reranked: bool
) -> list[tuple[Hit, float]]:
    """The top `k` hits of one query with the score they are ranked by: the reranker's where it ran (and was
    asked for), else the fused hybrid score. Unreranked, enough hits are fetched that the reranker's reordering
    of its head cannot change which `k` are the fused best."""
    reranker_on = knowledge_base.settings.rerank.provider != "none"
    depth = k if reranked or not reranker_on else max(k, knowledge_base.settings.rerank.top_n)
    hits = knowledge_base.search(query, depth, Channel.HYBRID, flt)
    if reranked:
        return [(h, h.rerank_score if h.rerank_score is not None else h.score) for h in hits]
    return sorted(((h, h.score) for h in hits), key=lambda pair: -pair[1])[:k]
