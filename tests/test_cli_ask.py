"""`ask` takes what the README lists: `--filter` in the syntax of `search --filter`, and `-k`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentrag.cli import app
from tests.helpers import write

runner = CliRunner()


def ask(home: str, *args: str) -> dict:
    result = runner.invoke(app, ["ask", *args, "--home", home, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ask_filter_keeps_every_search_inside_it_and_k_caps_the_passages(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    d = tmp_path / "d"
    write(d / "plans-2024.md", "# Plans 2024\n\nThe Standard plan costs 90 dollars a month.\n")
    write(d / "plans-2025.md", "# Plans 2025\n\nThe Standard plan costs 120 dollars a month.\n")
    write(d / "ops.md", "# Ops\n\nThe Standard plan is hosted in Frankfurt. Standard plan support answers in a day.\n")
    assert runner.invoke(app, ["ingest", str(d), "--home", home]).exit_code == 0
    assert runner.invoke(app, ["ingest", str(d / "ops.md"), "--home", home, "--tag", "team=ops"]).exit_code == 0
    question = "What does the Standard plan cost?"

    unfiltered = ask(home, question)
    assert {Path(c["source"]).name for c in unfiltered["citations"]} >= {"plans-2025.md"}

    only_2024 = ask(home, question, "--filter", "source=*2024*")
    assert {Path(c["source"]).name for c in only_2024["citations"]} == {"plans-2024.md"}
    assert "90 dollars" in only_2024["answer"]
    assert "120" not in only_2024["answer"]

    tagged = ask(home, "Where is the Standard plan hosted?", "--filter", "team=ops", "--mode", "agent")
    assert {Path(c["source"]).name for c in tagged["citations"]} == {"ops.md"}

    nothing = ask(home, question, "--filter", "team=sales")
    assert nothing["stop_reason"] == "no_evidence"
    assert nothing["citations"] == []

    one = ask(home, question, "-k", "1")
    assert len(one["citations"]) == 1

    bad = runner.invoke(app, ["ask", question, "--home", home, "--filter", "after=someday"])
    assert bad.exit_code == 2
    assert "someday" in bad.output
