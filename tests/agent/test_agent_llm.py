"""The agent with an LLM, driven through a scripted OpenAI-compatible server on 127.0.0.1.

Every role uses its own model name, so the script can answer each role the way a model would.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.helpers import ASK_KEYS, CITATION_KEYS, write
from tests.llm_server import Reply, ScriptedLLM, error, prompt_text, text, tool_calls

ROLES = ("router", "planner", "grader", "rewriter", "sufficiency", "synthesizer", "summarizer", "agent")
QUESTION = "Who leads the team that owns the service that caused INC-2291?"


def docs(root: Path) -> Path:
    write(
        root / "postmortem.md",
        "# INC-2291 postmortem\n\nINC-2291 was caused by Kestrel, the indexing queue. "
        "A misspelled pool size in a template left Kestrel with eight database connections.\n",
    )
    write(
        root / "teams.md",
        "# Teams\n\n## Storage team\n\nThe storage team owns Kestrel and Heron. "
        "Zhang Wei leads the storage team.\n\n## Search team\n\nThe search team owns Aurora. Li Na leads it.\n",
    )
    write(root / "holidays.md", "# Holidays\n\nThe office closes for the spring festival for one week.\n")
    return root


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return docs(tmp_path / "docs")


def blocks(body: dict[str, Any]) -> dict[int, str]:
    """The numbered passages of a synthesizer prompt: {n: header and text}."""
    prompt = prompt_text(body)
    found = {}
    for m in re.finditer(r"^\[(\d+)\](.*?)\n<<<\n(.*?)\n>>>", prompt, re.M | re.S):
        found[int(m.group(1))] = m.group(2) + "\n" + m.group(3)
    return found


def cite(body: dict[str, Any], needle: str) -> int:
    return next(n for n, block in blocks(body).items() if needle in block)


CAUSE = "INC-2291 was caused by Kestrel, the indexing queue"
STORAGE = "The storage team owns Kestrel and Heron"
AURORA = "The search team owns Aurora"
HOLIDAYS = "The office closes for the spring festival for one week"


def grades(answer: Any) -> dict[str, tuple[str, str, str]]:
    """The passages shown, by first sentence: (grade, why, the query that found it)."""
    return {e.chunk.text.split(".")[0]: (e.grade, e.grade_reason, e.found_by) for e in answer.evidence}


def role_of(body: dict[str, Any]) -> str:
    return str(body["model"]).removeprefix("m-")


Script = Callable[[dict[str, Any], int], Reply]


def by_role(**handlers: Callable[[dict[str, Any]], Reply]) -> Script:
    def script(body: dict[str, Any], index: int) -> Reply:
        role = role_of(body)
        if role == "grader":
            ids = re.findall(r"^\[(\d+)\]", prompt_text(body), re.M)
            default = text(json.dumps({"grades": [{"id": int(i), "grade": "correct", "reason": "ok"} for i in ids]}))
            return handlers.get("grader", lambda b: default)(body)
        return handlers[role](body)

    return script


def open_kb(tmp_path: Path, embedder: Embedder, llm: ScriptedLLM, **llm_overrides: Any) -> KnowledgeBase:
    settings = load_settings(
        tmp_path / "home",
        llm={
            "base_url": llm.base_url,
            "api_key": "test-key",
            "model": "m-default",
            "role_models": {r: f"m-{r}" for r in ROLES},
            "max_retries": 0,
            **llm_overrides,
        },
    )
    return KnowledgeBase.open("kb", settings=settings, embedder=embedder)


@pytest.fixture
def kb_factory(tmp_path: Path, embedder: Embedder, corpus: Path) -> Iterator[Callable[..., KnowledgeBase]]:
    opened: list[KnowledgeBase] = []

    def make(llm: ScriptedLLM, **overrides: Any) -> KnowledgeBase:
        kb = open_kb(tmp_path, embedder, llm, **overrides)
        kb.ingest([corpus])
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


def plan(*queries: str) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: text(json.dumps({"subqueries": [{"query": q, "intent": "find it"} for q in queries]}))


def good_answer(body: dict[str, Any]) -> Reply:
    return text(
        f"INC-2291 was caused by Kestrel [{cite(body, 'caused by Kestrel')}]. "
        f"Kestrel is owned by the storage team, which Zhang Wei leads [{cite(body, 'Zhang Wei')}]."
    )


def test_plan_search_answer_with_correct_citations(kb_factory: Callable[..., KnowledgeBase]) -> None:
    turns = iter(
        [tool_calls([("semantic_search", {"query": "which team owns Kestrel and who leads it"})]), text("DONE")]
    )
    script = by_role(planner=plan("INC-2291 root cause service"), agent=lambda b: next(turns), synthesizer=good_answer)
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        events: list[str] = []
        answer = kb.ask(QUESTION, mode="agent", on_event=lambda e: events.append(e.step))
    assert answer.stop_reason == "answered"
    assert answer.unsupported == []
    assert "Zhang Wei" in answer.answer
    assert {Path(c.source).name for c in answer.citations} == {"postmortem.md", "teams.md"}
    assert all(c.quote for c in answer.citations)
    agent_requests = [r for r in llm.requests if r["model"] == "m-agent"]
    assert agent_requests[0]["tools"][0]["function"]["name"] == "semantic_search"
    assert any(
        m.get("role") == "tool" and "Zhang Wei" in (m.get("content") or "") for m in agent_requests[1]["messages"]
    )
    assert answer.usage.llm_calls == len(llm.requests)
    assert answer.usage.retrieval_calls == 2
    graded = grades(answer)
    assert graded[CAUSE][::2] == ("correct", "INC-2291 root cause service")
    assert graded[STORAGE][::2] == ("correct", "which team owns Kestrel and who leads it")
    assert graded[HOLIDAYS][0] == "incorrect"
    assert "off topic" in graded[HOLIDAYS][1]
    assert not any(r["model"] == "m-grader" for r in llm.requests), "no borderline passage: the score cut decided"
    assert answer.usage.prompt_tokens > 0
    assert answer.usage.completion_tokens > 0
    assert [e for e in events if e in ("plan", "search", "agent", "tool", "synthesize", "cite", "done")] == [
        "plan",
        "search",
        "agent",
        "tool",
        "agent",
        "synthesize",
        "synthesize",
        "cite",
        "done",
    ]
    contract = answer.contract()
    assert set(contract) == ASK_KEYS
    assert set(contract["citations"][0]) == CITATION_KEYS  # type: ignore[index]


def cause_answer(body: dict[str, Any]) -> Reply:
    return text(
        f"INC-2291 was caused by Kestrel [{cite(body, 'caused by Kestrel')}]. The documents found do not say "
        "who leads the team that owns it."
    )


def test_a_model_that_repeats_its_search_stops_within_budget(kb_factory: Callable[..., KnowledgeBase]) -> None:
    same = tool_calls([("semantic_search", {"query": "INC-2291 root cause"})])
    script = by_role(planner=plan("INC-2291 root cause"), agent=lambda b: same, synthesizer=cause_answer)
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        answer = kb.ask(QUESTION, mode="agent", budget={"max_llm_calls": 5, "max_rounds": 10})
    assert answer.stop_reason == "budget"
    assert answer.usage.llm_calls <= 5
    assert answer.citations, "an answer from what was found"
    refusals = [
        m["content"]
        for r in llm.requests
        for m in r["messages"]
        if m.get("role") == "tool" and "refused" in m["content"]
    ]
    assert refusals
    assert "change strategy" in refusals[0].lower()
    synth = [r for r in llm.requests if r["model"] == "m-synthesizer"]
    assert "budget ran out" in prompt_text(synth[0])
    graded = grades(answer)
    assert graded[CAUSE][0] == "correct"
    assert {graded[k][0] for k in (STORAGE, AURORA, HOLIDAYS)} == {"incorrect"}


def test_malformed_json_and_an_unknown_tool_do_not_crash(kb_factory: Callable[..., KnowledgeBase]) -> None:
    turns = iter(
        [
            tool_calls([("web_search", {"query": "Kestrel owner"}), ("semantic_search", '{"query": "Kestrel own')]),
            tool_calls([("semantic_search", {"query": "who leads the storage team"})]),
            text("DONE"),
        ]
    )
    script = by_role(
        planner=lambda b: text("Sure! Here is the plan: {subqueries: [INC-2291]"),
        agent=lambda b: next(turns),
        synthesizer=good_answer,
    )
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        events = []
        answer = kb.ask(QUESTION, mode="agent", budget={"max_llm_calls": 8}, on_event=events.append)
    assert answer.stop_reason == "answered"
    assert "Zhang Wei" in answer.answer
    assert answer.unsupported == []
    planner_requests = [r for r in llm.requests if r["model"] == "m-planner"]
    assert len(planner_requests) == 2, "one repair attempt, then the rule planner"
    plan_event = next(e for e in events if e.step == "plan")
    assert "rules" in plan_event.reason
    tool_messages = [m["content"] for r in llm.requests for m in r["messages"] if m.get("role") == "tool"]
    assert any("unknown tool 'web_search'" in m for m in tool_messages)
    assert any("not valid JSON" in m for m in tool_messages)
    graded = grades(answer)  # the rule plan searched the question: the LLM grader judged the borderline passages
    assert [graded[k][:2] for k in (CAUSE, STORAGE)] == [("correct", "LLM: ok"), ("correct", "LLM: ok")]
    assert graded[HOLIDAYS][0] == "incorrect"
    assert "off topic" in graded[HOLIDAYS][1], "an off-topic passage is never sent to the LLM grader"
    grader = prompt_text(next(r for r in llm.requests if r["model"] == "m-grader"))
    assert f"Question: {QUESTION}" in grader
    assert STORAGE in grader
    assert HOLIDAYS not in grader


def test_a_model_slower_than_its_timeout_still_gets_an_answer_in_time(kb_factory: Callable[..., KnowledgeBase]) -> None:
    slow = text("too late", delay=3.0)
    with ScriptedLLM(lambda body, i: slow, strict=False) as llm:
        kb = kb_factory(llm)
        started = time.monotonic()
        answer = kb.ask(QUESTION, mode="agent", budget={"max_seconds": 4.0, "llm_timeout_s": 0.8})
        elapsed = time.monotonic() - started
    assert elapsed < 4.0 + 1.0
    assert answer.stop_reason == "fallback"
    assert answer.citations, "the fixed pipeline answered from the documents"
    assert "Kestrel" in answer.answer


def test_fabricated_citations_are_listed_as_unsupported(kb_factory: Callable[..., KnowledgeBase]) -> None:
    def fabricated(body: dict[str, Any]) -> Reply:
        n = cite(body, "caused by Kestrel")
        return text(
            f"INC-2291 was caused by Kestrel [{n}]. The outage cost the company four million dollars [{n}]. "
            "Kestrel was written in Rust in 2019 [9]."
        )

    with ScriptedLLM(
        by_role(router=lambda b: text('{"kind": "simple", "reason": "one fact"}'), synthesizer=fabricated)
    ) as llm:
        kb = kb_factory(llm)
        answer = kb.ask("What caused INC-2291?", mode="single")
    assert answer.unsupported == [
        "The outage cost the company four million dollars.",
        "Kestrel was written in Rust in 2019.",
    ]
    assert "[9]" not in answer.answer
    assert answer.answer.count("[unverified]") == 2
    assert [Path(c.source).name for c in answer.citations] == ["postmortem.md"]
    graded = grades(answer)
    assert graded[CAUSE][0] == "correct"
    assert {graded[k][0] for k in (STORAGE, AURORA, HOLIDAYS)} == {"incorrect"}


def test_the_answer_streams_tokens_and_keeps_the_users_question(kb_factory: Callable[..., KnowledgeBase]) -> None:
    with ScriptedLLM(by_role(synthesizer=good_answer)) as llm:
        kb = kb_factory(llm)
        tokens: list[str] = []
        answer = kb.ask(QUESTION, mode="single", on_token=tokens.append)
    assert len(tokens) > 5
    assert "".join(tokens).replace(" ", "") == answer.answer.replace(" ", "")
    synth = next(r for r in llm.requests if r["model"] == "m-synthesizer")
    assert f"Question: {QUESTION}" in prompt_text(synth)


def test_a_repeated_question_is_served_from_the_cache_until_the_knowledge_base_changes(
    kb_factory: Callable[..., KnowledgeBase], corpus: Path
) -> None:
    def synthesize(body: dict[str, Any]) -> Reply:
        culprit = "Heron" if "caused by Heron" in prompt_text(body) else "Kestrel"
        return text(f"INC-2291 was caused by {culprit} [{cite(body, f'caused by {culprit}')}].")

    with ScriptedLLM(by_role(synthesizer=synthesize)) as llm:
        kb = kb_factory(llm)
        first = kb.ask("What caused INC-2291?", mode="single")
        calls = len(llm.requests)
        again = kb.ask("What caused INC-2291?", mode="single")
        assert len(llm.requests) == calls, "the same question over the same content never reaches the model"
        assert again.answer == first.answer
        assert again.usage.prompt_tokens == 0
        write(
            corpus / "postmortem.md",
            "# INC-2291 postmortem\n\nINC-2291 was caused by Heron, the upload gateway, after a bad deploy.\n",
        )
        kb.ingest([corpus])
        updated = kb.ask("What caused INC-2291?", mode="single")
    assert len(llm.requests) > calls
    assert "Heron" in updated.answer
    assert "Kestrel" in first.answer


def test_the_same_words_with_another_tool_or_filter_are_not_a_repeat(kb_factory: Callable[..., KnowledgeBase]) -> None:
    words = "INC-2291 root cause"
    turns = iter(
        [
            tool_calls(
                [
                    ("keyword_search", {"query": words}),  # the advice a refusal gives: exact terms, another tool
                    ("filtered_search", {"query": words, "source": "*postmortem*"}),
                    ("semantic_search", {"query": words}),  # the planned search again: a repeat
                ]
            ),
            tool_calls([("filtered_search", {"query": words, "source": "*postmortem*"})]),  # same tool, same filter
            text("DONE"),
        ]
    )
    script = by_role(planner=plan(words), agent=lambda b: next(turns), synthesizer=cause_answer)
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        answer = kb.ask(QUESTION, mode="agent", budget={"max_llm_calls": 8})
    agent_requests = [r for r in llm.requests if r["model"] == "m-agent"]
    results = [m["content"] for m in agent_requests[-1]["messages"] if m.get("role") == "tool"]
    assert len(results) == 4
    keyword, filtered, semantic, filtered_again = results
    assert "refused" not in keyword
    assert "caused by Kestrel" in keyword
    assert "refused" not in filtered
    assert "caused by Kestrel" in filtered
    assert "refused" in semantic
    assert "refused" in filtered_again
    assert answer.usage.retrieval_calls == 3


# ------------------------------------------------------------------------------------------ iterative mode

COFFEE = "The office coffee machine is descaled every 30 days by the facilities team."


def no_grades(body: dict[str, Any]) -> Reply:
    """An LLM grader that finds no borderline passage answers the question."""
    ids = re.findall(r"^\[(\d+)\]", prompt_text(body), re.M)
    return text(json.dumps({"grades": [{"id": int(i), "grade": "incorrect", "reason": "off topic"} for i in ids]}))


def test_iterative_grades_a_hypothetical_passage_s_hits_against_the_question(
    kb_factory: Callable[..., KnowledgeBase], corpus: Path
) -> None:
    """A HyDE passage the model made up (here, the words of an off-topic document) finds that document; graded
    against the made-up text it would look like a perfect match and end the search as answered."""
    write(corpus / "facilities.md", f"# Facilities\n\n{COFFEE}\n")
    hyde = json.dumps({"hypothetical_passage": COFFEE, "paraphrases": []})
    script = by_role(
        grader=no_grades,
        rewriter=lambda b: text(hyde),
        synthesizer=lambda b: text("The documents do not say what the Falcon drone's warranty period is."),
    )
    question = "What is the warranty period of the Falcon drone?"
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        events: list[Any] = []
        answer = kb.ask(question, mode="iterative", on_event=events.append)
    searched = [e.args["query"] for e in events if e.step == "search"]
    assert searched[:2] == [question, COFFEE], "the hypothetical passage was searched"
    coffee = [e for e in answer.evidence if COFFEE in e.chunk.text]
    assert coffee, "its hit is among the passages shown"
    assert [e.grade for e in coffee] == ["incorrect"], coffee[0].grade_reason
    assert "off topic" in coffee[0].grade_reason
    assert answer.stop_reason == "no_evidence"
    synth = next(r for r in llm.requests if r["model"] == "m-synthesizer")
    assert "no passage clearly answers the question" in prompt_text(synth)


def test_iterative_asks_the_llm_about_a_rewrite_s_borderline_hits_against_the_question(
    kb_factory: Callable[..., KnowledgeBase],
) -> None:
    question = "Who is the boss of the people running the indexing queue?"
    graded: list[str] = []

    def grader(body: dict[str, Any]) -> Reply:
        graded.append(prompt_text(body))
        if len(graded) == 1:
            return error(500, "overloaded")  # the first round's judgement is lost: the score grades stand
        passages = re.split(r"^\[(\d+)\]", prompt_text(body), flags=re.M)[1:]
        grades = [
            {"id": int(n), "grade": "correct" if "caused by Kestrel" in p else "incorrect", "reason": "names it"}
            for n, p in zip(passages[::2], passages[1::2], strict=True)
        ]
        return text(json.dumps({"grades": grades}))

    paraphrase = json.dumps({"hypothetical_passage": "", "paraphrases": ["who runs the indexing queue"]})
    script = by_role(grader=grader, rewriter=lambda b: text(paraphrase), synthesizer=cause_answer)
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        events: list[Any] = []
        answer = kb.ask(question, mode="iterative", on_event=events.append)
    assert [e.args["query"] for e in events if e.step == "search"] == [question, "who runs the indexing queue"]
    assert len(graded) == 2
    assert f"Question: {question}" in graded[1]
    cause = next(e for e in answer.evidence if "caused by Kestrel" in e.chunk.text)
    assert (cause.grade, cause.grade_reason) == ("correct", "LLM: names it")
    assert answer.stop_reason == "answered"


# ------------------------------------------------------------------------------------------ the LLM router

UNSURE = "Tell me what the postmortem says about Kestrel and its database connection pool size"


def test_the_llm_router_decides_only_where_the_rules_are_unsure(kb_factory: Callable[..., KnowledgeBase]) -> None:
    script = by_role(
        router=lambda b: text('{"kind": "complex", "reason": "two facts about one service"}'),
        planner=plan("Kestrel postmortem", "Kestrel database connection pool size"),
        agent=lambda b: text("DONE"),
        synthesizer=cause_answer,
    )
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        events: list[Any] = []
        unsure = kb.ask(UNSURE, on_event=events.append)
        routers = [r for r in llm.requests if r["model"] == "m-router"]
        sure = kb.ask("What caused INC-2291?")
    assert len(routers) == 1
    assert routers[0]["messages"][-1]["content"].startswith(UNSURE.removeprefix("Tell me "))  # filler stripped
    assert (unsure.mode, unsure.route_reason) == ("agent", "complex: two facts about one service")
    assert next(e for e in events if e.step == "route").args["by"] == "llm"
    assert len([r for r in llm.requests if r["model"] == "m-router"]) == 1, "a sure rule never asks the model"
    assert sure.mode == "single"


def test_a_failing_llm_router_leaves_the_decision_to_the_rules(kb_factory: Callable[..., KnowledgeBase]) -> None:
    script = by_role(router=lambda b: text("complex, I think"), synthesizer=cause_answer)
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        events: list[Any] = []
        answer = kb.ask(UNSURE, on_event=events.append)
    assert len([r for r in llm.requests if r["model"] == "m-router"]) == 2, "one repair attempt"
    assert answer.mode == "single"
    assert answer.route_reason == "simple: no complexity cue, but long"
    assert next(e for e in events if e.step == "route").args["by"] == "rules"
    assert "Kestrel" in answer.answer


def test_summarising_older_turns_is_a_step_of_the_question_counted_traced_and_budgeted(
    kb_factory: Callable[..., KnowledgeBase],
) -> None:
    from agentrag.agent.memory import Conversation

    def cause(body: dict[str, Any]) -> Reply:
        return text(f"INC-2291 was caused by Kestrel [{cite(body, 'caused by Kestrel')}].")

    script = by_role(
        rewriter=lambda b: text(json.dumps({"query": "Who owns Kestrel?"})),
        synthesizer=cause,
        summarizer=lambda b: text("The user asked what caused INC-2291: Kestrel."),
    )
    with ScriptedLLM(script) as llm:
        kb = kb_factory(llm)
        conversation = Conversation(conversation_id="c", keep_verbatim=1)
        kb.ask("What caused INC-2291?", mode="single", conversation=conversation)
        before = len(llm.requests)
        events: list[Any] = []
        answer = kb.ask("Who owns it?", mode="single", conversation=conversation, on_event=events.append)
        asked = llm.requests[before:]
        assert [r["model"] for r in asked][-1] == "m-summarizer"
        assert conversation.summary == "The user asked what caused INC-2291: Kestrel."
        assert answer.usage.llm_calls == len(asked), "the summary's call is the question's"
        summary_tokens = next(e.tokens for e in events if e.step == "memory" and e.decision == "summarised")
        assert summary_tokens > 0
        assert summary_tokens == len(prompt_text(asked[-1]).split()) + len(conversation.summary.split())
        total = answer.usage.prompt_tokens + answer.usage.completion_tokens
        assert total == events[-1].tokens > summary_tokens, "the summary's tokens are on the question's meter"
        assert [e.step for e in events][-2:] == ["memory", "done"]

        before = len(llm.requests)
        events = []
        spent = kb.ask(
            "And what caused it?",
            mode="single",
            conversation=conversation,
            budget={"max_llm_calls": 1},
            on_event=events.append,
        )
        asked = llm.requests[before:]
    assert "m-summarizer" not in [r["model"] for r in asked], "no call past the budget"
    assert spent.usage.llm_calls == len(asked) <= 1
    refused = next(e for e in events if e.step == "memory" and e.decision != "summarised")
    assert "budget" in refused.reason
    assert "Who owns it?" in conversation.summary, "the turn is still kept, folded in by the rules"
