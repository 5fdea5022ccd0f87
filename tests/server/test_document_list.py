"""The document list as the web page browses it: a search over titles, file names and sources in any script,
tags, paging with a total, newest first, each document with its file name, date and number of chunks."""

from __future__ import annotations

from typing import Any

import httpx

from tests.server.conftest import Running
from tests.server.test_api import make_kb, upload

FILES = [  # uploaded in this order, so the list shows them reversed
    ("quarterly.md", "# Quarterly Report\n\nRevenue grew in the third quarter.\n", {"team": "finance"}),
    ("aerger.md", "# Ärger im Büro\n\nDie Kaffeemaschine ist kaputt.\n", {}),
    ("报销制度.md", "---\ndate: 2025-01-01\n---\n\n# 报销制度\n\n住宿标准为每晚五百元。\n", {"team": "finance"}),
    ("onboarding-2024.md", "# Onboarding\n\nBring your laptop on the first day.\n", {"team": "ops"}),
    ("onboarding-2025.md", "# Onboarding\n\nBring your badge on the first day.\n", {"team": "ops"}),
]


def listing(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get("/v1/kb/kb/documents", params=params)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_the_document_list_searches_filters_and_pages(running: Running) -> None:
    client = make_kb(running, "kb")
    for name, content, tags in FILES:
        assert upload(client, "kb", name, content, **tags).status_code == 201

    everything = listing(client)
    assert (everything["total"], everything["offset"], everything["limit"]) == (5, 0, 50)
    names = [d["file_name"] for d in everything["documents"]]
    assert names == [name for name, _, _ in reversed(FILES)], "newest first"
    policy = everything["documents"][2]
    assert policy["title"] == "报销制度"
    assert policy["date"] == "2025-01-01"
    assert policy["tags"] == {"team": "finance"}
    assert policy["chunks"] == policy["n_chunks"] == 1
    assert {"doc_id", "source", "ingested_at", "content_hash"} <= set(policy)
    twins = [d for d in everything["documents"] if d["title"] == "Onboarding"]
    assert {d["file_name"] for d in twins} == {"onboarding-2024.md", "onboarding-2025.md"}, "told apart by name"

    def found(**params: Any) -> list[str]:
        return [d["file_name"] for d in listing(client, **params)["documents"]]

    assert found(q="REPORT") == ["quarterly.md"], "the title, in any case"
    assert found(q="ärger") == found(q="ÄRGER") == ["aerger.md"], "case folding beyond ASCII"
    assert found(q="报销") == ["报销制度.md"]
    assert found(q="2024") == ["onboarding-2024.md"], "the file name"
    assert found(q="nothing like it") == []
    assert found(tag="team=finance") == ["报销制度.md", "quarterly.md"]
    assert found(tag=["team=ops"], q="2025") == ["onboarding-2025.md"]

    page = listing(client, offset=1, limit=2)
    assert [d["file_name"] for d in page["documents"]] == ["onboarding-2024.md", "报销制度.md"]
    assert (page["total"], page["offset"], page["limit"]) == (5, 1, 2)
    assert listing(client, q="onboarding", limit=1)["total"] == 2, "the total counts every match, not the page"
    assert listing(client, offset=10)["documents"] == []

    for params, named in [({"limit": 0}, "limit"), ({"limit": 201}, "limit"), ({"offset": -1}, "offset")]:
        refused = client.get("/v1/kb/kb/documents", params=params)
        assert refused.status_code == 422
        assert refused.json()["detail"][0]["loc"] == ["query", named]
    refused = client.get("/v1/kb/kb/documents", params={"tag": "team"})
    assert refused.status_code == 422
    assert refused.json()["detail"] == "tag: expected KEY=VALUE, got 'team'"
