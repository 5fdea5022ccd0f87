"""Knowledge bases named in any script on the command line and in the Python API: `--kb 网页测试` creates one with
a safe derived id and finds it again by either name. (The HTTP side is tests/server/test_kb_names.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentrag import KnowledgeBase
from agentrag.cli import app
from agentrag.server.keys import KeyStore
from tests.test_cli import docs

runner = CliRunner()
NAME = "网页测试"


def cli(*args: str) -> dict[str, object]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    parsed: dict[str, object] = json.loads(result.stdout)
    return parsed


def test_the_cli_ingests_lists_searches_and_answers_in_a_knowledge_base_with_a_chinese_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    report = cli("ingest", str(docs(tmp_path / "d")), "--home", str(home), "--kb", NAME)
    assert report["added"] == 2
    with KnowledgeBase.open(NAME, home=home, create=False) as kb:
        kb_id = kb.name
        assert kb.display_name == NAME
    assert kb_id.isascii()
    assert kb_id.startswith("kb-")
    assert [p.name for p in (home / "kbs").iterdir()] == [kb_id], "the folder is named by the id"
    assert json.loads((home / "kbs" / kb_id / "kb.json").read_text("utf-8"))["display_name"] == NAME

    for named in (NAME, kb_id):
        assert cli("docs", "list", "--home", str(home), "--kb", named)["total"] == 2
        hits = cli("search", "住宿标准", "--home", str(home), "--kb", named)["hits"]
        assert "五百元" in hits[0]["text"]  # type: ignore[index]
        answer = cli("ask", "出差住宿标准是多少？", "--home", str(home), "--kb", named)
        assert "五百元" in str(answer["answer"])
    again = cli("ingest", str(tmp_path / "d"), "--home", str(home), "--kb", NAME)
    assert (again["added"], again["unchanged"]) == (0, 2), "the same knowledge base, not a second one"

    created = cli("keys", "create", "--kb", NAME, "--home", str(home))
    assert created["kbs"] == [kb_id], "a key for the display name is a key for its id"
    with KeyStore(home) as keys:
        key = keys.authenticate(str(created["key"]))
    assert key is not None
    assert key.can_use(kb_id)

    missing = runner.invoke(app, ["search", "x", "--home", str(home), "--kb", "别的库", "--json"])
    assert missing.exit_code == 2
    error = json.loads(missing.stdout)["error"]
    assert "no knowledge base '别的库'" in error
    assert f"{kb_id} ({NAME})" in error, "the known ones, by both names"


def test_failures_of_a_knowledge_base_are_found_by_its_display_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli("ingest", str(docs(tmp_path / "d")), "--home", str(home), "--kb", NAME)
    answer = cli("ask", "Kestrel 的可用性 SLA 是多少？", "--home", str(home), "--kb", NAME)
    assert answer["stop_reason"] == "no_evidence"
    rows = cli("failures", "--home", str(home), "--kb", NAME)["failures"]
    assert [r["question"] for r in rows] == ["Kestrel 的可用性 SLA 是多少？"]  # type: ignore[index]
