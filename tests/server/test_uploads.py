"""Uploads never silently replace each other: distinct names stay distinct documents, the same name again is
a replace that says so, and same-named uploads at the same moment take turns."""

from __future__ import annotations

import threading
import unicodedata

from tests.server.conftest import Running
from tests.server.test_api import make_kb, upload

LONG = "quarterly-operations-review-for-the-platform-team-including-all-regional-appendices-" * 2
PAIRS = [
    ("report (1).txt", "report [1].txt"),
    ("a/x.txt", "b/x.txt"),
    (unicodedata.normalize("NFC", "café.txt"), unicodedata.normalize("NFD", "café.txt")),
    (LONG + "north.txt", LONG + "south.txt"),
    ("notes.txt", "notes.TXT"),
    ("同名 文件.md", "同名_文件.md"),
]


def _sources(client, kb: str) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(d["source"] for d in client.get(f"/v1/kb/{kb}/documents").json()["documents"])


def test_distinct_names_stay_distinct_documents(running: Running) -> None:
    client = make_kb(running, "kb")
    for i, (first, second) in enumerate(PAIRS):
        one = upload(client, "kb", first, f"# One\n\nThe first file of pair {i} mentions walrus{i}.\n")
        two = upload(client, "kb", second, f"# Two\n\nThe second file of pair {i} mentions narwhal{i}.\n")
        assert (one.status_code, one.json()["status"]) == (201, "added"), (first, one.text)
        assert (two.status_code, two.json()["status"]) == (201, "added"), (second, two.text)
        assert one.json()["doc_id"] != two.json()["doc_id"]
        for word in (f"walrus{i}", f"narwhal{i}"):
            hits = client.post("/v1/kb/kb/search", json={"query": word, "channel": "bm25"}).json()["hits"]
            assert hits, (first, second, word)
            assert word in hits[0]["text"], (first, second, word)
    documents = client.get("/v1/kb/kb/documents").json()["documents"]
    assert len(documents) == 2 * len(PAIRS)
    sources = _sources(client, "kb")
    assert "report (1).txt" in sources, "users see the names they uploaded"
    assert "report [1].txt" in sources
    assert sources.count("x.txt") == 2


def test_the_same_name_again_is_a_replace_that_says_so(running: Running) -> None:
    client = make_kb(running, "kb")
    first = upload(client, "kb", "policy.md", "# Policy\n\nThe limit is 500 yuan.\n")
    again = upload(client, "kb", "policy.md", "# Policy\n\nThe limit is 650 yuan.\n")
    same = upload(client, "kb", "policy.md", "# Policy\n\nThe limit is 650 yuan.\n")
    assert [r.status_code for r in (first, again, same)] == [201, 201, 201]
    assert [r.json()["status"] for r in (first, again, same)] == ["added", "updated", "unchanged"]
    assert first.json()["doc_id"] == again.json()["doc_id"]
    assert _sources(client, "kb") == ["policy.md"]
    hits = client.post("/v1/kb/kb/search", json={"query": "limit yuan"}).json()["hits"]
    assert "650" in hits[0]["text"]
    assert all("500" not in h["text"] for h in hits)
    stored = [p for p in (running.settings.home / "uploads" / "kb").rglob("*") if p.is_file()]
    assert len(stored) == 1
    assert stored[0].read_text().endswith("650 yuan.\n")


def test_same_named_uploads_at_the_same_moment_take_turns(running: Running) -> None:
    client = make_kb(running, "kb")
    contents = [f"# Shared\n\nVersion {i} of the shared note says tern{i}.\n" for i in range(4)]
    statuses: list[str] = []
    barrier = threading.Barrier(len(contents))

    def send(text: str) -> None:
        with running.client(running.admin) as c:
            barrier.wait()
            response = upload(c, "kb", "shared.md", text)
            statuses.append(f"{response.status_code} {response.json()['status']}")

    threads = [threading.Thread(target=send, args=(text,)) for text in contents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(statuses) == ["201 added"] + ["201 updated"] * 3
    documents = client.get("/v1/kb/kb/documents").json()["documents"]
    assert len(documents) == 1
    stored = [p for p in (running.settings.home / "uploads" / "kb").rglob("*") if p.is_file()]
    assert len(stored) == 1
    _, chunks = client.get(f"/v1/kb/kb/documents/{documents[0]['doc_id']}").json().values()
    assert stored[0].read_text() in contents
    assert any(stored[0].read_text().split()[-1] in c["text"] for c in chunks), "the file and the index agree"


def test_deleting_an_upload_removes_its_file_and_keeps_its_namesake(running: Running) -> None:
    client = make_kb(running, "kb")
    a = upload(client, "kb", "a/x.txt", "Alpha text about herons.\n").json()
    upload(client, "kb", "b/x.txt", "Beta text about egrets.\n")
    assert client.delete(f"/v1/kb/kb/documents/{a['doc_id']}").status_code == 204
    stored = [p for p in (running.settings.home / "uploads" / "kb").rglob("*") if p.is_file()]
    assert [p.read_text() for p in stored] == ["Beta text about egrets.\n"]
    assert _sources(client, "kb") == ["x.txt"]


def test_a_replace_that_fails_keeps_the_earlier_version(running: Running) -> None:
    client = make_kb(running, "kb")
    assert upload(client, "kb", "policy.md", "# Policy\n\nThe limit is 500 yuan.\n").status_code == 201
    failed = upload(client, "kb", "policy.md", " \n\n \n")
    assert failed.status_code == 422
    assert "policy.md" in failed.json()["detail"]
    hits = client.post("/v1/kb/kb/search", json={"query": "limit yuan"}).json()["hits"]
    assert "500 yuan" in hits[0]["text"]
    stored = [p for p in (running.settings.home / "uploads" / "kb").rglob("*") if p.is_file()]
    assert [p.read_text() for p in stored] == ["# Policy\n\nThe limit is 500 yuan.\n"]
    assert upload(client, "kb", "fresh.md", " \n").status_code == 422
    assert len([p for p in (running.settings.home / "uploads" / "kb").rglob("*") if p.is_file()]) == 1
