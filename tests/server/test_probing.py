"""A key learns nothing about knowledge bases it may not use: not from creating one, not from /health,
not from the access log."""

from __future__ import annotations

import logging
from pathlib import Path

from agentrag.settings import load_settings
from tests.server.conftest import Running, start
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


def test_health_without_a_key_does_not_count_knowledge_bases(running: Running) -> None:
    make_kb(running, "finance")
    health = running.client().get("/health").json()
    assert health["status"] == "ok"
    assert "knowledge_bases" not in health
    assert "1" not in str({k: v for k, v in health.items() if k not in ("version", "cache")})


def test_a_key_in_the_query_string_is_refused_and_not_logged(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "home")
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Collect()
    server, thread, url = start(settings, log_level="info")
    logging.getLogger("uvicorn.access").addHandler(handler)
    try:
        running = Running(url=url, settings=settings, admin="")
        secret = running.key(admin=True)
        client = running.client()
        for query in (f"key={secret}", f"api_key={secret}&page=2", f"token={secret[3:]}", f"x={secret}"):
            response = client.get(f"/v1/kb?{query}")
            assert response.status_code == 401
            assert "Authorization" in response.json()["detail"]
        assert running.client(secret).get("/v1/kb?page=2").status_code == 200
    finally:
        logging.getLogger("uvicorn.access").removeHandler(handler)
        server.should_exit = True
        thread.join(timeout=10)
    assert len([line for line in lines if "/v1/kb" in line]) == 5, lines
    assert all(secret not in line and secret[3:] not in line for line in lines), lines
    assert any("page=2" in line for line in lines), "the rest of the query string stays readable"
