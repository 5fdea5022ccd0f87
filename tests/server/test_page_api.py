"""What the web page relies on: follow-up questions in a conversation over the ask endpoint (JSON and SSE), and
several files uploaded at the same moment."""

from __future__ import annotations

import threading
from typing import Any

import httpx

from tests.server.conftest import Running
from tests.server.test_answer_fields import sse_events
from tests.server.test_api import AURORA, POLICY, make_kb, upload

FIRST, FOLLOW_UP = "What does error E1042 mean?", "How do I avoid it?"
AVOID = "\n\nTo avoid E1042, split the query into smaller queries of at most 128 clauses each.\n"


def searched(client: httpx.Client, answer: dict[str, Any]) -> list[str]:
    events = client.get(f"/v1/kb/kb/traces/{answer['trace_id']}").json()["events"]
    return [e["args"]["query"] for e in events if e["step"] == "search"]


def test_a_follow_up_in_the_conversation_the_first_answer_returned_resolves_the_reference(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA + AVOID)
    first = client.post("/v1/kb/kb/ask", json={"question": FIRST}).json()
    conversation = first["conversation_id"]
    assert conversation, "a conversation is started when none was named"
    follow = client.post("/v1/kb/kb/ask", json={"question": FOLLOW_UP, "conversation_id": conversation}).json()
    assert follow["conversation_id"] == conversation
    assert any("E1042" in q for q in searched(client, follow)), "'it' is read as E1042"
    assert "smaller queries" in follow["answer"]

    alone = client.post("/v1/kb/kb/ask", json={"question": FOLLOW_UP}).json()
    assert alone["conversation_id"] != conversation
    assert not any("E1042" in q for q in searched(client, alone)), "a new conversation has no earlier turns"

    start = sse_events(client, "/v1/kb/kb/ask", {"question": FIRST, "stream": True})[-1][1]
    streamed = start["conversation_id"]
    assert streamed not in (conversation, alone["conversation_id"])
    body = {"question": FOLLOW_UP, "conversation_id": streamed, "stream": True}
    done = sse_events(client, "/v1/kb/kb/ask", body)[-1][1]
    assert done["conversation_id"] == streamed
    assert any("E1042" in q for q in searched(client, done))


def test_three_files_uploaded_at_the_same_moment_are_all_kept(running: Running) -> None:
    client = make_kb(running, "kb")
    files = {"aurora.md": AURORA, "policy.md": POLICY, "notes.txt": "Lunch is served at noon in the canteen.\n"}
    barrier = threading.Barrier(len(files))
    results: dict[str, httpx.Response] = {}

    def send(name: str, content: str) -> None:
        with running.client(running.admin) as own:
            barrier.wait()
            results[name] = upload(own, "kb", name, content)

    threads = [threading.Thread(target=send, args=item) for item in files.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert {name: r.status_code for name, r in results.items()} == dict.fromkeys(files, 201)
    assert {r.json()["status"] for r in results.values()} == {"added"}
    listed = client.get("/v1/kb/kb/documents").json()
    assert listed["total"] == 3
    assert sorted(d["file_name"] for d in listed["documents"]) == sorted(files)
    for question, needle in [("What does E1042 mean?", "aurora.md"), ("出差住宿标准", "policy.md")]:
        hits = client.post("/v1/kb/kb/search", json={"query": question, "k": 1}).json()["hits"]
        assert hits[0]["source"] == needle
