"""Malformed request bodies get a 4xx that names what is wrong, never a 500 (and never crash the error handler)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.server.conftest import Running
from tests.server.test_api import make_kb

ROOT = Path(__file__).resolve().parents[2]

# Valid JSON syntax that Python's json module accepts, but that is not JSON (NaN, Infinity) or not Unicode
# (a lone surrogate escape).
ODD_BODIES = [
    '{"name": "\\ud800"}',
    '{"question": "\\udc00 hello"}',
    '{"query": "\\ud83d", "k": 3}',
    '{"question": "why", "k": NaN}',
    '{"query": "a", "k": Infinity}',
    '{"name": -Infinity}',
    '{"model": "kb", "messages": [{"role": "user", "content": "\\ud800"}]}',
    '{"model": NaN, "messages": []}',
]
PATHS = ["/v1/kb", "/v1/kb/kb/ask", "/v1/kb/kb/search", "/v1/chat/completions"]


@pytest.mark.parametrize("body", ODD_BODIES)
def test_odd_json_is_a_422_naming_the_problem(running: Running, body: str) -> None:
    client = make_kb(running, "kb")
    for path in PATHS:
        response = client.post(path, content=body.encode(), headers={"content-type": "application/json"})
        assert response.status_code == 422, (path, body, response.text)
        detail = response.json()["detail"]
        assert detail[0]["type"] == "json_invalid", detail
        text = str(detail)
        assert "surrogate" in text or "NaN" in text or "Infinity" in text, text


def test_invalid_utf8_and_broken_json_are_4xx(running: Running) -> None:
    client = make_kb(running, "kb")
    for raw in [b'{"query": "\xff\xfe\xfa"}', b'{"query": ', b"\x00\x01", b'["a", 1]']:
        response = client.post("/v1/kb/kb/search", content=raw, headers={"content-type": "application/json"})
        assert 400 <= response.status_code < 500, (raw, response.status_code, response.text)


def test_odd_tags_on_upload_are_a_422(running: Running) -> None:
    client = make_kb(running, "kb")
    for tags in ['["ops"]', '"ops"', "{bad", '{"team": NaN}', '{"team": "\\ud800"}']:
        response = client.post(
            "/v1/kb/kb/documents", files={"file": ("a.md", b"# A\n\nSome text.\n")}, data={"tags": tags}
        )
        assert response.status_code == 422, (tags, response.text)
        assert "tags" in response.json()["detail"]
    assert client.get("/v1/kb/kb/documents").json()["documents"] == [], "a refused upload stores nothing"


def test_tags_are_checked_without_assert_under_python_O(tmp_path: Path) -> None:
    """`python -O` strips asserts: the tags check must still answer 422 there."""
    script = textwrap.dedent(
        f"""
        from fastapi.testclient import TestClient
        from agentrag.server.app import create_app
        from agentrag.server.keys import KeyStore
        from agentrag.settings import load_settings

        settings = load_settings({str(tmp_path / "home")!r})
        with KeyStore(settings.home) as keys:
            _, secret = keys.create(admin=True)
        client = TestClient(create_app(settings), raise_server_exceptions=False)
        client.headers["Authorization"] = "Bearer " + secret
        client.post("/v1/kb", json={{"name": "kb"}})
        files = {{"file": ("a.md", b"# A\\n\\ntext\\n")}}
        r = client.post("/v1/kb/kb/documents", files=files, data={{"tags": '["ops"]'}})
        print(r.status_code)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "422", out.stdout + out.stderr
