"""Which value of a sentence answers: the bound a question asks for, a number the question does not state, no version
number and no example request's value (found by asking the bundled sample about Aurora 3.0, model-free)."""

from __future__ import annotations

from pathlib import Path

from agentrag.agent.question import analyze
from agentrag.agent.typed import holds_answer, short_answer
from agentrag.agent.units import Unit, unit_tokens
from agentrag.agent.value_choice import marks_asked_bound
from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask


def _unit(sentence: str) -> Unit:
    return Unit(1, sentence, "sentence", 0, (), unit_tokens(sentence))


def _answer(question: str, sentence: str) -> str | None:
    return short_answer(analyze(question).parts[0], _unit(sentence))


def test_a_question_asking_for_a_bound_gets_the_value_the_sentence_marks_as_that_bound() -> None:
    """ "The maximum timeout" was answered 10 from "defaults to 10 seconds and can be raised to 30 seconds"."""
    timeout = "The timeout defaults to 10 seconds and can be raised to 30 seconds with timeout_ms."
    assert _answer("What is the maximum timeout of a search request?", timeout) == "30 seconds"
    assert _answer("What is the default timeout of a search request?", timeout) == "10 seconds"
    length = "A password must be at least 12 characters long and at most 64 characters long."
    assert _answer("What is the minimum password length?", length) == "12"
    assert _answer("What is the maximum password length?", length) == "64"
    assert _answer("密码最少要多少位？", "密码至少 12 位，最多 64 位。") == "12 位"
    assert _answer("密码最多可以多少位？", "密码至少 12 位，最多 64 位。") == "64 位"


def test_a_number_is_asked_only_when_the_question_writes_that_number() -> None:
    """ "30" was taken for something "Aurora 3.0" states (both are "30" once the dot is dropped), and so never
    answered a question about version 3.0."""
    assert (
        _answer("How many keys did Aurora 3.0 issue in its first week?", "Aurora 3.0 issued 30 keys in its first week.")
        == "30"
    )
    assert _answer("How many keys did Aurora 3.0 issue in 2030?", "In 2030 Aurora 3.0 issued 20 keys.") == "20"
    # A number the question does write is still no answer to it.
    assert (
        _answer("How many of the 30 keys did Aurora issue in 2030?", "Of the 30 keys, Aurora issued 12 in 2030.")
        == "12"
    )


def test_a_version_the_text_names_is_no_value_of_a_version_qualified_question() -> None:
    """ "2.3.0 (2024-06-03) — filters on custom fields" answered "the maximum page size in Aurora 3.0" with 2.3."""
    part = analyze("What is the maximum page size in Aurora 3.0?").parts[0]
    for sentence in (
        "2.3.0 (2024-06-03) — filters on custom fields;",
        "Aurora 2.3 now has a fixed end-of-support date.",
    ):
        assert not holds_answer(part, _unit(sentence))
    assert _answer(
        "What is the maximum page size in Aurora 3.0?", "In version 3.0 a page holds up to 500 results."
    ) == ("500 results")


def test_an_example_request_holds_no_answer_value(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """The handbook's example request `{"q": ..., "page_size": 50}` answered "What is the maximum page_size in Aurora
    3.0?" with 50, over the release note's "A single page can now hold up to 500 results"."""
    example = '{"q": "waterproof boots", "mode": "hybrid", "page_size": 50}'
    assert not holds_answer(analyze("What is the maximum page_size in Aurora 3.0?").parts[0], _unit(example))
    docs = {
        "handbook.md": "# Aurora API handbook\n\n## Searching in 3.0\n\nSend a search as JSON:\n\n```json\n"
        f"{example}\n```\n\nThe response lists the results best first.\n",
        "release.md": "# Aurora 3.0 is generally available\n\n## Larger pages\n\nA single page can now hold up to 500 "
        "results. Pagination uses an opaque cursor.\n",
    }
    (answer,) = _ask(settings, embedder, tmp_path, docs, "What is the maximum page_size in Aurora 3.0?")
    assert answer.short_answer == "500 results"


def test_a_chinese_question_about_a_code_is_answered_from_an_english_sentence_stating_it(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "INC-2291 影响了多长时间？" was answered "not found" beside "Duration: 72 minutes": its one target word (影响)
    could only be in the Chinese runbook's sentences about other things, so the answer looked said of them alone."""
    docs = {
        "postmortem.md": "# INC-2291 postmortem\n\nIncident: INC-2291. Duration: 72 minutes of errors (14:05-15:17). "
        "Severity: SEV-2.\n\nKestrel's workers waited on a saturated connection pool.\n",
        "runbook.md": "# 值班手册\n\nSEV-3：功能降级但有替代方案，或仅影响内部工具。\n\n"
        "SEV-2：任何企业版客户受到明显影响，15 分钟内响应。\n",
    }
    (answer,) = _ask(settings, embedder, tmp_path, docs, "INC-2291 影响了多长时间？")
    assert answer.short_answer == "72 minutes"
    assert answer.stop_reason == "answered"


def test_a_price_answers_what_something_costs_in_whatever_words_it_is_given(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "How much does the Enterprise plan cost?" was "not found" beside "The Enterprise plan starts at ¥25,000 per
    month": the sentence says no word of "cost", and the Standard plan's sentence, which does, is about another
    plan. And "企业版多少钱？" found no amount in 钱, the unit it asks in."""
    docs = {
        "plans.md": "# Plans\n\n## Standard plan\n\nThe Standard plan costs ¥3,000 per month per tenant.\n\n"
        "## Enterprise plan\n\nThe Enterprise plan starts at ¥25,000 per month on an annual contract.\n",
    }
    (answer,) = _ask(settings, embedder, tmp_path, docs, "How much does the Enterprise plan cost?")
    assert answer.short_answer == "¥25,000"
    assert answer.stop_reason == "answered"
    assert _answer("企业版多少钱？", "企业版每月 25,000 元起，按年签约。") == "25,000 元"
    assert _answer("一张门票多少钱？", "门票 ¥80，学生半价。") == "¥80"


def test_a_span_does_not_end_at_the_comma_inside_a_number() -> None:
    """ "标准版的价格是多少？" against "标准版的价格是 3,000 元，不含税" answered 3: the span ended at the comma of
    3,000 as at the one after 元."""
    from agentrag.agent.gap import slot_span

    assert slot_span("标准版的价格是多少？", "标准版的价格是 3,000 元，不含税。") == "3,000 元"
    assert (
        slot_span("Aurora 的月配额是多少？", "Aurora 的月配额是 2,000,000 次请求, 每月 1 日重置。")
        == "2,000,000 次请求"
    )


def test_a_count_in_words_is_a_number_and_a_clock_time_is_not() -> None:
    """ "How many approvals does a change to Osprey need?" was answered ¥500, from another sentence, beside "Changes
    to Osprey need two"; and "00" was an amount, from "Monday 10:00"."""
    assert _answer("How many approvals does a change to Osprey need?", "Changes to Osprey need two.") == "two"
    assert _answer("How many rooms does the hotel have?", "The hotel has twenty rooms on 12 floors.") == "twenty"
    assert not holds_answer(analyze("How much is the allowance?").parts[0], _unit("Monday 10:00 — on-call handover."))
    # Only "how many" asks for a count in words, and "the two" counts things already named: "merges the two result
    # lists" answered "the maximum page_size in Aurora 3.0" with two.
    merged = "Aurora 3.0 runs two searches side by side and merges the two result lists."
    assert not holds_answer(analyze("What is the maximum page size in Aurora 3.0?").parts[0], _unit(merged))
    assert _answer("How many searches does a hybrid query run?", merged) == "two"
    # A word that starts a name or a phrase counts nothing: "One Direction", "two of them".
    assert _answer("How many records did they sell?", "Two of them sold 40 records.") == "40"


def test_a_question_asking_for_a_bound_is_answered_by_a_unit_that_states_one(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "What is the minimum uptime the Enterprise SLA promises?" was answered 11, from "11 Enterprise tenants use
    freshness=strict", which outscored the SLA's "at least 99.95%" on the question's name alone."""
    assert marks_asked_bound("What is the minimum uptime?", "an uptime of at least 99.95% each month") is True
    assert marks_asked_bound("What is the minimum uptime?", "11 Enterprise tenants use freshness=strict.") is False
    assert marks_asked_bound("What is the uptime?", "an uptime of at least 99.95% each month") is None
    docs = {
        "postmortem.md": "# INC-2291 Postmortem: Enterprise SLA breach\n\n## Impact\n\n- 11 Enterprise tenants use "
        "freshness=strict. About 18% of their search requests failed with E5003 for 72 minutes. All 72 minutes count "
        "as downtime under the Enterprise SLA, so their monthly uptime fell below the Enterprise SLA.\n",
        "sla.md": "# Aurora Service Level Agreement\n\n## 3. Service Commitment\n\nFor the Enterprise plan, Northwind "
        "Lab will use commercially reasonable efforts to make Aurora available with a Monthly Uptime Percentage of at "
        "least 99.95% in each calendar month. This SLA covers the search API.\n",
    }
    (answer,) = _ask(settings, embedder, tmp_path, docs, "What is the minimum uptime the Enterprise SLA promises?")
    assert answer.short_answer == "99.95%"
