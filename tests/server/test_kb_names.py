"""Knowledge bases named in any script through the HTTP service: a display name (`网页测试`) with a safe derived id,
usable wherever a knowledge base is named (URL path, the facade's `model`, `keys create --kb`)."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

from tests.server.conftest import Running
from tests.server.test_api import AURORA, POLICY, upload

NAME = "网页测试"


def test_a_chinese_name_creates_a_knowledge_base_with_a_safe_id_and_is_usable_everywhere(running: Running) -> None:
    client = running.client(running.admin)
    created = client.post("/v1/kb", json={"name": NAME})
    assert created.status_code == 201, created.text
    body = created.json()
    kb_id = body["id"]
    assert body == {"name": kb_id, "id": kb_id, "display_name": NAME, "created": True}
    assert kb_id.isascii()
    assert kb_id.startswith("kb-")
    assert (running.settings.home / "kbs" / kb_id).is_dir()
    again = client.post("/v1/kb", json={"name": unicodedata.normalize("NFD", f"  {NAME} ")})
    assert again.json() == {**body, "created": False}, "the same display name is the same knowledge base"

    assert upload(client, NAME, "policy.md", POLICY).status_code == 201
    assert upload(client, kb_id, "aurora.md", AURORA).status_code == 201
    for named in (NAME, kb_id):  # the display name and the id are the same knowledge base
        path = f"/v1/kb/{quote(named)}"
        assert len(client.get(f"{path}/documents").json()["documents"]) == 2
        hits = client.post(f"{path}/search", json={"query": "住宿标准"}).json()["hits"]
        assert hits[0]["source"] == "policy.md"
        answer = client.post(f"{path}/ask", json={"question": "出差住宿标准是多少？"}).json()
        assert "五百元" in answer["answer"]
        assert client.get(f"{path}/traces/{answer['trace_id']}").status_code == 200
    chat = {"model": NAME, "messages": [{"role": "user", "content": "What does error E1042 mean?"}]}
    assert "128 clauses" in client.post("/v1/chat/completions", json=chat).json()["agentrag"]["answer"]

    listed = client.get("/v1/kb").json()["knowledge_bases"]
    assert listed == [{"name": kb_id, "id": kb_id, "display_name": NAME, "documents": 2, "chunks": 2}]

    # A key issued for the display name before or after it exists works with both names.
    scoped = running.client(running.key(NAME))
    assert [k["display_name"] for k in scoped.get("/v1/kb").json()["knowledge_bases"]] == [NAME]
    assert scoped.get(f"/v1/kb/{quote(NAME)}/documents").status_code == 200
    assert scoped.post("/v1/kb", json={"name": NAME}).status_code == 201
    early = running.key("新的知识库")
    made = running.client(early).post("/v1/kb", json={"name": "新的知识库"})
    assert made.status_code == 201, made.text
    assert made.json()["display_name"] == "新的知识库"

    assert client.delete(f"/v1/kb/{quote(NAME)}").status_code == 204
    assert not (running.settings.home / "kbs" / kb_id).exists()
    assert client.get(f"/v1/kb/{kb_id}/documents").status_code == 404


def test_an_id_with_a_display_name_and_the_names_that_are_refused(running: Running) -> None:
    client = running.client(running.admin)
    ops = client.post("/v1/kb", json={"name": "ops", "display_name": "运维"}).json()
    assert ops == {"name": "ops", "id": "ops", "display_name": "运维", "created": True}
    plain = client.post("/v1/kb", json={"name": "sales"}).json()
    assert plain["display_name"] == "sales", "a valid id is its own display name"
    assert client.get(f"/v1/kb/{quote('运维')}/documents").status_code == 200
    assert client.post("/v1/kb", json={"name": "运维"}).json() == {**ops, "created": False}

    taken = client.post("/v1/kb", json={"name": "ops2", "display_name": "运维"})
    assert taken.status_code == 409
    assert "'运维' already names knowledge base 'ops'" in taken.json()["detail"]
    renamed = client.post("/v1/kb", json={"name": "ops", "display_name": "Operations"})
    assert renamed.status_code == 409
    assert "already named '运维'" in renamed.json()["detail"]
    assert client.post("/v1/kb", json={"name": "x", "display_name": "sales"}).status_code == 409, "another's id"
    for bad, why in [("a/b", "'/'"), ("line\nbreak", "'\\n'"), ("长" * 101, "1-100 characters"), ("  ", "1-100")]:
        refused = client.post("/v1/kb", json={"name": bad})
        assert refused.status_code == 422, bad
        assert "invalid knowledge base name" in refused.json()["detail"]
        assert why in refused.json()["detail"]
    assert "display_name" in client.post("/v1/kb", json={"name": "y", "display_name": "\x07"}).json()["detail"]
    names = {k["id"]: k["display_name"] for k in client.get("/v1/kb").json()["knowledge_bases"]}
    assert names == {"ops": "运维", "sales": "sales"}, "nothing refused was created or renamed"
