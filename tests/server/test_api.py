"""The HTTP service through real HTTP on 127.0.0.1: keys, isolation, uploads, answers, streaming."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from urllib.parse import quote

import httpx

from tests.server.conftest import SERVICE_ASK_KEYS, Running

POLICY = "# 报销制度\n\n## 住宿\n\n一线城市员工出差住宿标准为每晚五百元。\n"
AURORA = "# Aurora\n\n## Errors\n\nError E1042 means the query is too complex: more than 128 clauses.\n"


def make_kb(running: Running, name: str, key: str | None = None) -> httpx.Client:
    client = running.client(key or running.admin)
    response = client.post("/v1/kb", json={"name": name})
    assert response.status_code == 201, response.text
    return client


def upload(client: httpx.Client, kb: str, filename: str, content: bytes | str, **tags: str) -> httpx.Response:
    data = content.encode() if isinstance(content, str) else content
    form = {"tags": json.dumps(tags)} if tags else {}
    return client.post(f"/v1/kb/{kb}/documents", files={"file": (filename, data)}, data=form)


def test_health_and_docs_need_no_key(running: Running) -> None:
    client = running.client()
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/docs").status_code == 200
    assert "/v1/kb/{kb}/ask" in client.get("/openapi.json").json()["paths"]
    assert "agentrag" in client.get("/").text


def test_wrong_keys_get_401_and_other_knowledge_bases_404(running: Running) -> None:
    make_kb(running, "finance")
    assert running.client().get("/v1/kb").status_code == 401
    assert running.client("ar_not-a-real-key").get("/v1/kb").status_code == 401
    assert running.client("Basic abc").get("/v1/kb").status_code == 401
    outsider = running.client(running.key("marketing"))
    assert outsider.get("/v1/kb/finance/documents").status_code == 404
    assert outsider.get("/v1/kb/does-not-exist/documents").status_code == 404
    assert outsider.get("/v1/kb/finance/documents").json()["detail"] == outsider.get(
        "/v1/kb/does-not-exist/documents"
    ).json()["detail"].replace("does-not-exist", "finance")
    # The refusal says it is about this key, the same whether the knowledge base exists or not.
    assert outsider.get("/v1/kb/finance/documents").json()["detail"] == "no knowledge base 'finance' this key may use"
    assert outsider.get("/v1/kb").json() == {"knowledge_bases": []}
    assert outsider.post("/v1/kb", json={"name": "finance"}).status_code == 403, "the same as for a free name"


def test_two_knowledge_bases_are_isolated(running: Running) -> None:
    key_a, key_b = running.key("a"), running.key("b")
    upload(make_kb(running, "a", key_a), "a", "policy.md", POLICY)
    upload(make_kb(running, "b", key_b), "b", "aurora.md", AURORA)
    a, b = running.client(key_a), running.client(key_b)
    hits_a = a.post("/v1/kb/a/search", json={"query": "E1042 住宿"}).json()["hits"]
    assert {Path(h["source"]).name for h in hits_a} == {"policy.md"}
    assert b.post("/v1/kb/a/search", json={"query": "住宿"}).status_code == 404
    assert [k["name"] for k in a.get("/v1/kb").json()["knowledge_bases"]] == ["a"]


def test_upload_ask_cited_answer_then_delete_removes_the_citation(running: Running) -> None:
    client = make_kb(running, "kb")
    created = upload(client, "kb", "policy.md", POLICY, team="finance")
    assert created.status_code == 201
    doc_id = created.json()["doc_id"]
    upload(client, "kb", "aurora.md", AURORA)
    answer = client.post("/v1/kb/kb/ask", json={"question": "出差住宿标准是多少？"}).json()
    assert set(answer) == SERVICE_ASK_KEYS
    assert "五百元" in answer["answer"]
    assert answer["citations"][0]["doc_id"] == doc_id
    assert answer["citations"][0]["source"] == "policy.md", "users see the file name, not the server's paths"
    trace = client.get(f"/v1/kb/kb/traces/{answer['trace_id']}").json()["events"]
    assert trace[-1]["step"] == "done"
    chunk = client.get(f"/v1/kb/kb/chunks/{quote(answer['citations'][0]['chunk_id'], safe='')}").json()
    assert chunk["heading_path"] == ["报销制度", "住宿"]

    assert client.delete(f"/v1/kb/kb/documents/{doc_id}").status_code == 204
    remaining = [p.name for p in (running.settings.home / "uploads" / "kb").rglob("*") if p.is_file()]
    assert remaining == ["aurora.md"], "the uploaded file went too"
    again = client.post("/v1/kb/kb/ask", json={"question": "出差住宿标准是多少？"}).json()
    assert all(c["doc_id"] != doc_id for c in again["citations"])
    assert "五百元" not in again["answer"]
    assert client.get(f"/v1/kb/kb/documents/{doc_id}").status_code == 404


def test_stream_sends_progress_tokens_citations_then_done(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA)
    events: list[tuple[str, dict]] = []
    with client.stream("POST", "/v1/kb/kb/ask", json={"question": "What does E1042 mean?", "stream": True}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        name = ""
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
    names = [n for n, _ in events]
    assert names[0] == "progress"
    assert names[-1] == "done"
    assert names.index("token") > names.index("progress")
    assert max(i for i, n in enumerate(names) if n == "token") < names.index("citation") < names.index("done")
    assert any("searching, round 1" in d["message"] for n, d in events if n == "progress")
    done = events[-1][1]
    assert done["citations"]
    assert "too complex" in done["answer"]
    assert "".join(d["text"] for n, d in events if n == "token").replace(" ", "") == done["answer"].replace(" ", "")


def test_a_cached_search_is_invalidated_by_an_update(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA)
    first = client.post("/v1/kb/kb/search", json={"query": "E1042 clauses", "k": 3}).json()["hits"]
    hits_before = client.get("/health").json()["cache"]["hits"]
    again = client.post("/v1/kb/kb/search", json={"query": "E1042 clauses", "k": 3}).json()["hits"]
    assert first == again
    assert client.get("/health").json()["cache"]["hits"] > hits_before, "the repeat was served from the cache"
    upload(client, "kb", "aurora.md", AURORA.replace("128 clauses", "256 clauses"))
    updated = client.post("/v1/kb/kb/search", json={"query": "E1042 clauses", "k": 3}).json()["hits"]
    assert "256 clauses" in updated[0]["text"]
    assert "128" not in updated[0]["text"]


def test_uploads_are_checked_by_content_and_kept_inside_the_data_directory(running: Running) -> None:
    client = make_kb(running, "kb")
    home = running.settings.home
    sneaky = upload(client, "kb", "../../../../tmp/evil.md", AURORA)
    assert sneaky.status_code == 201
    stored = [p for p in (home / "uploads" / "kb").rglob("*") if p.is_file()]
    assert [p.name for p in stored] == ["evil.md"]
    assert stored[0].resolve().is_relative_to((home / "uploads" / "kb").resolve())
    assert not Path("/tmp/evil.md").exists() or Path("/tmp/evil.md").read_text() != AURORA
    assert upload(client, "kb", "report.pdf", "just text").status_code == 415
    assert "not PDF" in upload(client, "kb", "report.pdf", "just text").json()["detail"]
    assert upload(client, "kb", "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00binary").status_code == 415
    assert upload(client, "kb", "empty.md", "").status_code == 415
    big = b"a" * (int(running.settings.ingest.max_file_mb * 1024 * 1024) + 10)
    assert upload(client, "kb", "big.txt", big).status_code == 413


def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    from agentrag.settings import load_settings
    from tests.server.conftest import start

    settings = load_settings(tmp_path / "home", server={"requests_per_minute": 3})
    server, thread, url = start(settings)
    try:
        running = Running(url=url, settings=settings, admin="")
        client = running.client(running.key(admin=True))
        codes = [client.get("/v1/kb").status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200]
        assert codes[3] == 429
        limited = client.get("/v1/kb")
        assert int(limited.headers["retry-after"]) >= 1
        assert "rate limit" in limited.json()["detail"]
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_conversations_follow_ups_and_long_term_memory(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(
        client,
        "kb",
        "plans.md",
        "# Plans\n\n## Enterprise\n\nThe Enterprise plan costs 25,000 yuan a month. "
        "It allows 3,000 requests per minute.\n",
    )
    ask = {"conversation_id": "c1", "mode": "single"}
    client.post("/v1/kb/kb/ask", json={"question": "How much does the Enterprise plan cost?", **ask})
    follow = client.post("/v1/kb/kb/ask", json={"question": "and how many requests per minute does it allow?", **ask})
    assert "3,000 requests per minute" in follow.json()["answer"]
    client.post("/v1/kb/kb/ask", json={"question": "I work on the Enterprise plan billing. What does it cost?"})
    facts = client.get("/v1/memory").json()["facts"]
    assert [f["text"] for f in facts] == ["I work on the Enterprise plan billing."]
    later = client.post("/v1/kb/kb/ask", json={"question": "What does the Enterprise plan billing cost?"}).json()
    trace = client.get(f"/v1/kb/kb/traces/{later['trace_id']}").json()["events"]
    used = [e for e in trace if e["step"] == "memory"]
    assert used, "the trace shows the remembered fact that was used"
    assert used[0]["args"]["facts"] == ["I work on the Enterprise plan billing."]
    other = running.client(running.key("kb"))
    assert other.get("/v1/memory").json()["facts"] == []
    assert client.delete(f"/v1/memory/{facts[0]['fact_id']}").status_code == 204
    assert client.get("/v1/memory").json()["facts"] == []


def test_twenty_concurrent_asks_while_an_ingest_runs(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA)
    errors: list[str] = []
    results: list[dict] = []

    def ask() -> None:
        with running.client(running.admin) as c:
            r = c.post("/v1/kb/kb/ask", json={"question": "What does E1042 mean?", "mode": "single"})
            if r.status_code != 200:
                errors.append(r.text)
            else:
                results.append(r.json())

    def ingest() -> None:
        with running.client(running.admin) as c:
            for i in range(6):
                r = upload(c, "kb", f"note-{i}.md", f"# Note {i}\n\nNote number {i} is about glaciers and rivers.\n")
                if r.status_code != 201:
                    errors.append(r.text)

    threads = [threading.Thread(target=ingest)] + [threading.Thread(target=ask) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert errors == []
    assert len(results) == 20
    assert all(r["stop_reason"] == "answered" and r["citations"] for r in results)
    documents = client.get("/v1/kb/kb/documents").json()["documents"]
    assert len(documents) == 7


def test_the_openai_facade_works_with_the_openai_sdk(running: Running) -> None:
    import openai

    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA)
    sdk = openai.OpenAI(base_url=f"{running.url}/v1", api_key=running.admin)
    completion = sdk.chat.completions.create(
        model="kb", messages=[{"role": "user", "content": "What does E1042 mean?"}]
    )
    text = completion.choices[0].message.content or ""
    assert "too complex" in text
    assert "Sources:" in text
    assert completion.model_extra
    assert completion.model_extra["citations"][0]["source"].endswith("aurora.md")
    stream = sdk.chat.completions.create(
        model="kb", messages=[{"role": "user", "content": "What does E1042 mean?"}], stream=True
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "too complex" in "".join(pieces)
    with_other_key = openai.OpenAI(base_url=f"{running.url}/v1", api_key=running.key("other"))
    try:
        with_other_key.chat.completions.create(model="kb", messages=[{"role": "user", "content": "hi"}])
    except openai.NotFoundError:
        pass
    else:
        raise AssertionError("another key must not reach this knowledge base")


def test_a_conversation_survives_a_restart_and_a_deleted_knowledge_base_leaves_nothing(tmp_path: Path) -> None:
    from agentrag.settings import load_settings
    from tests.server.conftest import start

    settings = load_settings(tmp_path / "home")
    ask = {"conversation_id": "support-7", "mode": "single"}
    plans = (
        "# Plans\n\n## Enterprise\n\nThe Enterprise plan costs 25,000 yuan a month. "
        "It allows 3,000 requests per minute.\n"
    )
    server, thread, url = start(settings)
    try:
        running = Running(url=url, settings=settings, admin="")
        key = running.key(admin=True)
        client = make_kb(running, "kb", key)
        upload(client, "kb", "plans.md", plans)
        client.post("/v1/kb/kb/ask", json={"question": "How much does the Enterprise plan cost?", **ask})
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    server, thread, url = start(settings)
    try:
        client = Running(url=url, settings=settings, admin="").client(key)
        question = {"question": "and how many requests per minute does it allow?", **ask}
        follow = client.post("/v1/kb/kb/ask", json=question).json()
        assert "3,000 requests per minute" in follow["answer"]
        assert client.delete("/v1/kb/kb").status_code == 204
        assert client.get("/v1/kb/kb/documents").status_code == 404
        assert not (settings.home / "uploads" / "kb").exists()
        assert not (settings.home / "kbs" / "kb").exists()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
