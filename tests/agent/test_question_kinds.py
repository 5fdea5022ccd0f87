"""What kind of answer a question asks for, where the sample was answered with the wrong kind of thing."""

from __future__ import annotations

from agentrag.agent.question import analyze
from agentrag.vocab import AnswerType
from tests.agent.test_value_rules import _answer


def test_a_time_taken_is_asked_as_a_duration_and_a_root_cause_as_a_reason() -> None:
    """ "What is the P1 response time for Enterprise support?" was answered "Priority Example First" with confidence
    "high", from the SLA's table read as one line: the question was taken to ask for a thing named. And
    "INC-2291 的根因是什么？" was answered "Date: 2025-02-26" the same way."""
    table = (
        "Priority Example First response P1 Production search unavailable or severely degraded 30 minutes P2 A "
        "feature failing for part of the traffic 2 hours P3 Minor issue with a workaround 1 business day"
    )
    assert analyze("What is the P1 response time for Enterprise support?").parts[0].answer_type == AnswerType.DURATION
    assert _answer("What is the P1 response time for Enterprise support?", table) == "30 minutes"
    assert analyze("What is the default timeout of a search?").parts[0].answer_type == AnswerType.DURATION
    assert analyze("INC-2291 的根因是什么？").parts[0].answer_type == AnswerType.REASON
    assert analyze("这次故障的起因是什么？").parts[0].answer_type == AnswerType.REASON


def test_asking_to_compare_two_things_asks_for_their_differences() -> None:
    """ "Compare the Standard and Enterprise plans." was answered "¥3,000; Northwind Lab" (a thing named for each
    plan), and "How do the Standard and Enterprise plans differ?" was read as asking for steps."""
    for question in (
        "Compare the Standard and Enterprise plans.",
        "How do the Standard and Enterprise plans differ?",
        "How does Aurora 3.0 compare with 2.3?",
    ):
        assert analyze(question).parts[0].answer_type == AnswerType.LIST, question
    assert analyze("How do I rotate an API key?").parts[0].answer_type == AnswerType.PROCEDURE


def test_asking_what_a_code_stands_for_asks_for_its_definition() -> None:
    """ "错误码 E1042 表示什么？" asks what the code means, as "E1042 是什么意思？" does, not for a thing named."""
    for question in ("错误码 E1042 表示什么？", "E1042 代表什么？", "E1042 错误是什么意思？"):
        assert analyze(question).parts[0].answer_type == AnswerType.DEFINITION, question
