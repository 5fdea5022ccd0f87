"""A "why" question answered model-free: by the sentence that gives the cause, in either language, not by the one that
best repeats the question's words (found by asking the bundled sample "INC-2291 的根因是什么？")."""

from __future__ import annotations

from pathlib import Path

from agentrag.agent.reasons import gives_cause
from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask

_POSTMORTEM = (
    "# INC-2291 Postmortem: Aurora searches failing with E5003\n\n"
    "Incident: INC-2291. Date: 2025-02-26. Severity: SEV-2. Status: Resolved.\n\n"
    "## Summary\n\n"
    "Aurora search requests failed with error E5003 for 72 minutes. The incident was caused by a configuration "
    "change that cut the connection pool of every Kestrel worker from 64 connections to 8.\n\n"
    "## Follow-up\n\n"
    "The team met on 2025-03-07 and agreed on four action items.\n"
)


def test_a_cause_is_recognised_in_either_language() -> None:
    assert gives_cause("The incident was caused by a configuration change.")
    assert gives_cause("由于配置模板中的变量名拼错，连接池被降到 8 个。")
    assert not gives_cause("INC-2291 Postmortem: Aurora searches failing with E5003")


def test_a_why_question_is_answered_by_the_cause_not_by_the_title_that_repeats_it(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "INC-2291 的根因是什么？" was answered with the sample postmortem's title, and here with "Incident: INC-2291.":
    lines that name INC-2291 and give no cause."""
    questions = ("INC-2291 的根因是什么？", "Why did INC-2291 happen?")
    answers = _ask(settings, embedder, tmp_path, {"postmortem.md": _POSTMORTEM}, *questions)
    for answer in answers:
        first = answer.answer.split("[", 1)[0]
        assert "caused by a configuration change" in first, answer.answer
