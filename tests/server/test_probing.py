"""A key learns nothing about knowledge bases it may not use: not from creating one, not from /health,
not from the access log."""

from __future__ import annotations

from tests.server.conftest import Running
from tests.server.test_api import make_kb


def test_creating_a_name_a_key_was_not_issued_for_answers_the_same_whether_it_exists(running: Running) -> None:
    make_kb(running, "finance")
    outsider = running.client(running.key("marketing"))
    taken = outsider.post("/v1/kb", json={"name": "finance"})
    free = outsider.post("/v1/kb", json={"name": "nothing-here"})
    assert taken.status_code == free.status_code == 403
    assert taken.json()["detail"].replace("finance", "X") == free.json()["detail"].replace("nothing-here", "X")
    assert "issued for" in free.json()["detail"]
    names = [k["name"] for k in running.client(running.admin).get("/v1/kb").json()["knowledge_bases"]]
    assert names == ["finance"], "a refused create makes nothing"

    mine = outsider.post("/v1/kb", json={"name": "marketing"})
    assert (mine.status_code, mine.json()["created"]) == (201, True)
    again = outsider.post("/v1/kb", json={"name": "marketing"})
    assert (again.status_code, again.json()["created"]) == (201, False)
    assert [k["name"] for k in outsider.get("/v1/kb").json()["knowledge_bases"]] == ["marketing"]
    admin = running.client(running.admin)
    assert admin.post("/v1/kb", json={"name": "finance"}).json()["created"] is False
    assert admin.post("/v1/kb", json={"name": "legal"}).json()["created"] is True
