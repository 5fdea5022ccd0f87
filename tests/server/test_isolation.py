"""Keys × knowledge bases × endpoints: a key never reads, searches, asks or lists another key's knowledge base,
and every refusal looks exactly like a knowledge base that does not exist."""

from __future__ import annotations

from urllib.parse import quote

from tests.server.conftest import Running
from tests.server.test_api import make_kb, upload

SECRETS = {
    "red": "Red secret: the vault code is R-7731.",
    "blue": "Blue secret: the vault code is B-4410.",
    "绿队": "Green secret: the vault code is G-5520.",  # a display name: its id is derived (kb-...)
}


def test_no_key_reaches_another_keys_knowledge_base(running: Running) -> None:
    keys = {name: running.key(name) for name in SECRETS}
    found: dict[str, dict[str, str]] = {}
    kb_ids: dict[str, str] = {}
    for name, secret in SECRETS.items():
        client = make_kb(running, name, keys[name])
        kb_ids[name] = client.post("/v1/kb", json={"name": name}).json()["id"]
        doc = upload(client, name, f"{name}.md", f"# {name}\n\n{secret}\n").json()
        hit = client.post(f"/v1/kb/{name}/search", json={"query": "vault code"}).json()["hits"][0]
        answer = client.post(f"/v1/kb/{name}/ask", json={"question": "What is the vault code?"}).json()
        found[name] = {"doc": doc["doc_id"], "chunk": hit["chunk_id"], "trace": answer["trace_id"]}
    assert kb_ids["red"] == "red"
    assert kb_ids["绿队"].startswith("kb-")

    for me, key in keys.items():
        client = running.client(key)
        listed = client.get("/v1/kb").json()["knowledge_bases"]
        assert [(k["name"], k["display_name"]) for k in listed] == [(kb_ids[me], me)]
        # Another's knowledge base, by its display name or by its id, is refused as a missing one is.
        for other in {alias for name in SECRETS if name != me for alias in (name, kb_ids[name])}:
            ids = found[next(name for name in SECRETS if other in (name, kb_ids[name]))]
            probes = [
                ("GET", f"/v1/kb/{other}/documents", None),
                ("GET", f"/v1/kb/{other}/documents/{ids['doc']}", None),
                ("DELETE", f"/v1/kb/{other}/documents/{ids['doc']}", None),
                ("GET", f"/v1/kb/{other}/chunks/{quote(ids['chunk'], safe='')}", None),
                ("POST", f"/v1/kb/{other}/search", {"query": "vault code"}),
                ("POST", f"/v1/kb/{other}/ask", {"question": "What is the vault code?"}),
                ("POST", f"/v1/kb/{other}/ask", {"question": "What is the vault code?", "stream": True}),
                ("GET", f"/v1/kb/{other}/traces/{ids['trace']}", None),
                ("DELETE", f"/v1/kb/{other}", None),
                ("POST", "/v1/chat/completions", {"model": other, "messages": [{"role": "user", "content": "code?"}]}),
            ]
            for method, path, body in probes:
                response = client.request(method, path, json=body)
                missing = client.request(method, path.replace(f"/kb/{other}", "/kb/nope"), json=body)
                if body and "model" in body:
                    missing = client.request(method, path, json={**body, "model": "nope"})
                assert response.status_code == 404, (me, method, path, response.status_code)
                assert response.json()["detail"].replace(other, "nope") == missing.json()["detail"], (me, path)
                assert all(secret not in response.text for secret in SECRETS.values())
            # Its own knowledge base never shows the other's document, however it asks.
            mine = client.post(f"/v1/kb/{me}/ask", json={"question": "What are both vault codes?"}).json()
            assert all(s.split()[-1] not in mine["answer"] for n, s in SECRETS.items() if n != me)
            assert all(c["doc_id"] != ids["doc"] for c in mine["citations"])
            assert client.get(f"/v1/kb/{me}/documents/{ids['doc']}").status_code == 404
    for name in SECRETS:  # nothing was deleted by the probes
        assert len(running.client(keys[name]).get(f"/v1/kb/{name}/documents").json()["documents"]) == 1
