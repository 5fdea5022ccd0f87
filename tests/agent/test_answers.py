"""Model-free answers a user can act on: the value asked for, from the right row or definition, in clean text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrag.agent.planner import rule_plan
from agentrag.agent.question import analyze
from agentrag.agent.typed import short_answer
from agentrag.agent.units import Unit, block_units, unit_tokens
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from agentrag.text.tokenize import tokenize
from agentrag.types import Answer
from agentrag.vocab import StopReason
from tests.helpers import Corpus, write


@pytest.fixture
def kb(settings: Settings, embedder: Embedder, tmp_path: Path) -> Iterator[KnowledgeBase]:
    root = tmp_path / "docs"
    write(
        root / "runbook.md",
        "# On-call runbook\n\n## Severity levels\n\nEvery incident gets a severity level when it is declared:\n\n"
        "| Severity | Meaning | Response time |\n|---|---|---|\n"
        "| SEV-1 | Every customer is down | 5 minutes |\n"
        "| SEV-2 | A core feature is down for some customers | 15 minutes |\n"
        "| SEV-3 | Degraded, with a workaround | 4 hours |\n",
    )
    write(
        root / "errors.md",
        "# Error codes\n\n## E2001\n\nError E2001 means the monthly request quota of the tenant is exhausted. "
        "Requests fail until the quota resets on the first day of the month.\n",
    )
    write(
        root / "bridge.md",
        "# Harbour Bridge\n\nThe Harbour Bridge opened to traffic in 1932.[8] Its main span is 503 metres long.[9] "
        "It was designed by the engineer John Bradfield.[10]\n",
    )
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as knowledge_base:
        knowledge_base.ingest([root])
        yield knowledge_base


def test_a_table_row_answers_for_the_level_asked_about(kb: KnowledgeBase) -> None:
    answer = kb.ask("What is the response time for SEV-2?", mode="single")
    assert answer.short_answer == "15 minutes"
    assert "Severity: SEV-2, Meaning: A core feature is down for some customers, Response time: 15 minutes" in (
        answer.answer
    ), "the row is given as header: value pairs, not as raw cells"
    assert "| SEV-2 |" not in answer.answer
    assert answer.stop_reason == "answered"
    assert answer.confidence == "high"


def test_a_definition_question_gets_the_definition(kb: KnowledgeBase) -> None:
    answer = kb.ask("What does error E2001 mean?", mode="single")
    assert answer.short_answer is not None
    assert "monthly request quota of the tenant is exhausted" in answer.short_answer
    assert answer.answer.startswith(answer.short_answer)


def test_the_asker_is_no_name_the_evidence_must_state(kb: KnowledgeBase) -> None:
    """ "How do I ..." asks about E2001, not about someone called "I": the error's passage answers it."""
    answer = kb.ask("How do I avoid error E2001?", mode="single")
    assert answer.stop_reason == StopReason.ANSWERED
    assert "quota resets on the first day of the month" in answer.answer


def test_source_footnotes_are_not_taken_for_citations(kb: KnowledgeBase) -> None:
    answer = kb.ask("How long is the main span of the Harbour Bridge?", mode="single")
    assert answer.short_answer == "503 metres"
    assert not re.search(r"\[(8|9|10)\]", answer.answer), answer.answer
    assert answer.unsupported == []
    assert {c.n for c in answer.citations} == {1}


def test_every_answer_sentence_is_one_passage_s_words(kb: KnowledgeBase) -> None:
    """Sentences never run across passages: each cited sentence of the answer is in the passage it cites."""
    answer = kb.ask("When did the Harbour Bridge open and who designed it?", mode="single")
    passages = {c.n: kb.chunk(c.chunk_id).text for c in answer.citations}
    for sentence in re.split(r"(?<=\])[.。]?\s*", answer.answer):
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", sentence)]
        words = set(tokenize(re.sub(r"\[\d+\]", "", sentence)))
        for n in numbers:
            assert words <= set(tokenize(passages[n])), (sentence, passages[n])


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        ("apt 和 aptitude 有什么区别？", ["apt", "aptitude"]),
        ("What is the difference between apt and aptitude?", ["apt", "aptitude"]),
        ("标准版和企业版有什么区别？", ["标准版", "企业版"]),
        ("Which is older, Lyon or Turin?", ["Lyon", "Turin"]),
    ],
)
def test_comparison_sub_queries_are_phrases_of_the_question(question: str, sides: list[str]) -> None:
    plan = rule_plan(question)
    assert [s.about for s in plan] == sides
    for sub in plan:
        for word in sub.query.split():
            assert word in question, f"{word!r} of {sub.query!r} is not in the question"


def test_named_options_in_a_lowercase_question_are_chosen_between_not_answered_yes(kb: KnowledgeBase) -> None:
    answer = kb.ask("was the harbour bridge designed by john bradfield or joseph strauss?")
    assert answer.short_answer is not None
    assert answer.short_answer.lower() == "john bradfield"


def test_a_short_answer_is_never_a_bare_article(kb: KnowledgeBase) -> None:
    answer = kb.ask("which engineer designed the harbour bridge?")
    assert answer.short_answer is not None
    assert answer.short_answer.lower() not in {"the", "a", "an", "of"}
    assert "Bradfield" in answer.short_answer


def test_a_row_that_only_mentions_the_attribute_does_not_give_another_column_as_its_value(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """A row whose meaning cell names the quota ("Indexing quota exceeded") does not state it in its HTTP cell."""
    root = tmp_path / "docs"
    write(
        root / "errors.md",
        "# Error codes\n\n| Code | HTTP | Meaning |\n|---|---|---|\n"
        "| E1031 | 429 | Indexing quota exceeded |\n| E2001 | 429 | Monthly quota exhausted |\n",
    )
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest([root])
        answer = kb.ask("What is the indexing quota?", mode="single")
    assert answer.short_answer is None or "429" not in answer.short_answer, answer.answer
    assert answer.confidence != "high"


def test_rows_about_other_keys_are_not_given_as_support(kb: KnowledgeBase) -> None:
    """The SEV-2 question is answered by the SEV-2 row; the SEV-1 and SEV-3 rows are about other levels."""
    answer = kb.ask("What is the response time for SEV-2?", mode="single")
    assert "SEV-2" in answer.answer
    assert "SEV-1" not in answer.answer, answer.answer
    assert "SEV-3" not in answer.answer, answer.answer


def test_a_sentence_two_copies_of_a_passage_share_is_shown_once(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """Two documents holding the same passage give the same sentence twice: the answer shows it once and uses the
    room for another sentence."""
    sentence = "Swan was twice wounded at the Battle of Bunker Hill, and later became secretary of the Board of War."
    write(tmp_path / "docs" / "swan.md", f"# James Swan\n\n{sentence} He lived in Boston.\n")
    write(tmp_path / "docs" / "swan-copy.md", f"# James Swan (financier)\n\n{sentence} He died in Paris.\n")
    write(
        tmp_path / "docs" / "bunker.md",
        "# Battle of Bunker Hill\n\nThe battle is named after Bunker Hill in Charlestown, Massachusetts.\n",
    )
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest([tmp_path / "docs"])
        answer = kb.ask("At which battle was James Swan twice wounded?", mode="agent")
    assert answer.answer.count("twice wounded") == 1, answer.answer


def test_the_answer_is_followed_by_what_it_is(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """A name found as the answer is shown with the opening of its own page, when the evidence holds it: who or
    what the answer is, which the sentence that named it does not say."""
    files = {
        "coach.md": "# Huntington Beach High School\n\nHuntington Beach High School produced the nation's first openly "
        "gay, actively playing, professional team sport athlete, Robbie Rogers, who plays for LA Galaxy. Its coach was "
        "the first openly gay high-school coach in the state. The LA Galaxy player visited the school in 2014. "
        "Openly gay athletes in team sport were rare before 2013. The school's team sport programme is its "
        "largest.\n",
        "galaxy.md": "# LA Galaxy\n\nLA Galaxy is a team sport club whose players include the first openly gay player "
        "in the league. The Galaxy plays in Carson.\n",
        "rogers.md": "# Robbie Rogers\n\nRobbie Rogers is an American former professional soccer player who played as "
        "a winger. He played for the United States national team.\n",
    }
    question = "Which LA Galaxy player was the first openly gay, actively playing team sport athlete?"
    (answer,) = _asked(settings, embedder, tmp_path, files, [question], mode="auto")
    assert answer.short_answer == "Robbie Rogers"
    assert "soccer player" in answer.answer


def _asked(
    settings: Settings,
    embedder: Embedder,
    tmp_path: Path,
    files: dict[str, str],
    questions: list[str],
    mode: str = "single",
) -> list[Answer]:
    """The answers to the questions, asked of a knowledge base of these files (name: content)."""
    root = Corpus("", files).write(tmp_path / "docs")
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest([root])
        return [kb.ask(question, mode=mode) for question in questions]


def test_a_table_row_leaves_out_its_empty_cells() -> None:
    """A scraped table's empty cells ("Score: ,") are not shown as pairs; the row still has its cells to answer."""
    (row,) = block_units(1, "| Player | Score | Team |\n|---|---|---|\n| Rory McIlroy |  | Europe |")
    assert row.text == "Player: Rory McIlroy, Team: Europe"
    assert row.kind == "row"


def test_a_gloss_in_brackets_after_the_code_defines_it(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """ "E3107（索引分片不可用）报错…": the bracketed words right after the code say what it means, though the passage
    says 报错 where the question says 错误; an English "(…)" likewise. A bracketed year, a name in another language and
    a list of labelled values are no definition."""
    files = {
        "周会纪要.txt": "周会纪要\n\n修复上线后，E3107（索引分片不可用）报错比上月少了约一半，相关工单也明显减少。\n",
        "notes.md": "# Release notes\n\nAfter the fix, E3512 (replica lag too high) errors fell by half in a week. "
        "Release R4000 (2025) shipped on time and brought the new billing page.\n",
        "货币.txt": "货币\n\n拉里（Lari）在 1995 年发行。马纳特（符号: m; 代码: TMT）在 2009 年换新。\n",
    }
    questions = [
        "E3107 错误是什么意思？",
        "What does error E3512 mean?",
        "What does R4000 mean?",
        "拉里是什么？",
        "马纳特是什么？",
    ]
    zh, en, year, named, labelled = _asked(settings, embedder, tmp_path, files, questions)
    # A name in another language, or a list of labelled values, in brackets is no gloss.
    assert named.short_answer != "Lari"
    assert labelled.short_answer is None or "符号" not in labelled.short_answer
    assert zh.stop_reason == StopReason.ANSWERED, zh.answer
    assert zh.short_answer == "索引分片不可用"
    assert en.short_answer == "replica lag too high"
    assert year.short_answer != "2025"


def test_words_placed_after_a_code_in_passing_do_not_define_it(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "E7001 是什么？" against sentences that name the code in passing: "补充 E7001 的排查步骤" (the steps are the
    code's, not what it is: answered "排查步骤" with confidence high), "若以 E7001 为主" (answered "主"), "fail with
    E7001, by design" (answered "by design")."""
    files = {
        "值班手册.md": "# 值班手册\n\n## 更新记录\n\n2025-03-10：补充 E7001 的排查步骤。\n\n"
        "## 告警\n\n若以 E7001 为主，说明存储一侧出了问题，转到 5.2 检查队列。\n",
        "notes.md": "# Notes\n\nRequests that demand strict freshness then fail with E7001, by design.\n",
    }
    (answer,) = _asked(settings, embedder, tmp_path, files, ["E7001 是什么？"])
    assert answer.short_answer not in {"排查步骤", "主", "by design"}
    assert answer.confidence != "high"


def test_a_long_definition_is_cut_at_a_clause_not_mid_word(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """A meaning cell past the short answer's length ("Indexing backend unavailable: freshness could not be confirmed
    with Kestrel within 2 seconds") was cut mid-word ("… Kestrel wit…"), and the full stop after that ellipsis came
    back as a sentence of its own, marked unverified. The short answer is now its first clause, and every sentence
    of the answer is matched to a source."""
    files = {
        "errors.md": "# Error codes\n\n| Code | HTTP | Meaning | What to do |\n|---|---|---|---|\n"
        "| E7310 | 503 | Storage backend unavailable: the write could not be confirmed by a second replica within "
        "5 seconds | Retry the write. |\n"
        "| E7311 | 400 | Payload too large | Split the payload. |\n"
        "| E7312 | 409 | Write rejected because another client changed the same document after this client last "
        "read it | Read it again. |\n",
    }
    answer, unbroken = _asked(
        settings, embedder, tmp_path, files, ["What does error E7310 mean?", "What does error E7312 mean?"]
    )
    assert answer.short_answer == "Storage backend unavailable"
    assert "within 5 seconds" in answer.answer, "the whole meaning is still shown under the short answer"
    # No clause break to cut at: the meaning whole, not a fragment.
    assert unbroken.short_answer == (
        "Write rejected because another client changed the same document after this client last read it"
    )
    for each in (answer, unbroken):
        assert "…" not in each.answer
        assert each.unsupported == []


def _definer_files(paragraphs: int = 12) -> dict[str, str]:
    """An incident report that names error E7421 in its title and every paragraph, and the error table that defines
    it, its row in a chunk of its own (the table's header in the chunk before)."""
    codes = [(f"E74{n:02d}", f"Condition number {n} of the upload service") for n in range(1, 31)]
    codes[20] = ("E7421", "Upload rejected: the object store refused the checksum")
    rows = "".join(
        f"| {code} | 4{n % 10:02d} | {meaning} | Contact support. |\n" for n, (code, meaning) in enumerate(codes)
    )
    report = "\n\n".join(
        f"At 10:{minute:02d} uploads kept failing with E7421 on shard {minute}; the on-call engineer restarted the "
        f"uploader there and E7421 went on regardless, so the shard was drained and E7421 was tracked on the board."
        for minute in range(paragraphs)
    )
    return {
        "errors.md": "# Upload service handbook\n\n## Error codes\n\n| Code | HTTP | Meaning | What to do |\n"
        f"|---|---|---|---|\n{rows}",
        "incident.txt": f"INC-88: uploads failing with E7421\n\n{report}\n",
    }


def test_a_passage_that_defines_the_code_is_used_whatever_its_rank(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "What is E7421?": the incident report names the code in its title and every paragraph, so its chunks fill the
    first eight places and the table row that defines the code ranks below them; the answer read only those eight
    and said nothing states it. A passage that defines what a definition question asks about is now read first."""
    (answer,) = _asked(settings, embedder, tmp_path, _definer_files(), ["What is E7421?"])
    assert answer.short_answer == "Upload rejected: the object store refused the checksum", answer.answer
    assert answer.stop_reason == StopReason.ANSWERED
    assert any(c.source.endswith("errors.md") for c in answer.citations)


def test_english_sentences_in_a_chinese_answer_keep_their_spaces(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """A Chinese question answered from English passages: their sentences were joined as Chinese ones are, with
    nothing between them ("…only E5003.AI-3 Shorten…"), a row without a full stop got "。", and a count was
    answered with the English words standing after the code."""
    files = {
        "incident.md": "# Incident notes\n\nAt 14:05 the first E7001 responses appeared. The breakdown showed almost "
        "only E7001. AI-3 adds E7001 triage steps to the runbook.\n\n| Code | Count |\n|---|---|\n| E7001 | 410 |\n",
        "banner.md": "# Hanggin Rear Banner\n\nHanggin Rear Banner is a banner of Inner Mongolia. Its administrative "
        "center is Shanba (陕坝镇). Shuangmiao is a town of the banner, 26 km southwest of Shanba.\n",
    }
    answer, count, english = _asked(
        settings,
        embedder,
        tmp_path,
        files,
        ["E7001 是什么？", "E7001 出现了多少次？", "What is the administrative center of Hanggin Rear Banner?"],
    )
    # An English answer keeps its spaces after a sentence that ends in Chinese words.
    assert "(陕坝镇)[1]. " in english.answer, english.answer
    assert "E7001" in answer.answer
    assert not re.search(r"[.!?](\[\d+\])*[A-Za-z0-9]", answer.answer), answer.answer
    assert not re.search(r"[A-Za-z0-9](\[\d+\])*。", answer.answer), answer.answer
    # The words after the code in an English sentence fill no gap of a Chinese question (it answered this one
    # "responses appeared").
    assert count.short_answer != "responses appeared"


def test_a_definition_nowhere_in_the_evidence_is_looked_up_by_its_subject(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "E7421 是什么？" against an English error table: thirty paragraphs of an incident report name the code, and the
    table's row ranks 30th, past the 20 hits a search hands on; nothing in the evidence said what E7421 is. One more
    search, for the code alone, finds the row, and only that passage joins the evidence."""
    (answer,) = _asked(settings, embedder, tmp_path, _definer_files(paragraphs=30), ["E7421 是什么？"])
    assert answer.short_answer == "Upload rejected: the object store refused the checksum", answer.answer
    assert answer.usage.retrieval_calls == 2
    assert sum(c.source.endswith("errors.md") for c in answer.citations) == 1


def test_a_count_asked_of_something_no_passage_names_is_not_answered(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "年假有多少天？" against an expense policy that says nothing of annual leave: it answered "15 天内" (from
    "可在结果通知后 15 天内向财务部提出复核"), the unit "天" and the verb "有" counted as what the question is about,
    and "年" of 年假 met "2025 年" in the title. Now it says nothing answers it, as the English question does."""
    files = {
        "差旅费报销管理办法.md": "# 差旅费报销管理办法（2025 年修订）\n\n## 八、附则\n\n"
        "员工对报销结果有异议的，可在结果通知后 15 天内向财务部提出复核。报销单应在费用发生后 30 天内提交。\n",
    }
    zh, en = _asked(
        settings, embedder, tmp_path, files, ["年假有多少天？", "How many days of annual leave do employees get?"]
    )
    assert en.short_answer is None
    assert zh.short_answer is None, zh.answer
    assert zh.confidence == "low"
    assert zh.answer.startswith("知识库中没有"), zh.answer


def test_a_measure_is_answered_by_a_number_with_its_unit(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "How long is the on-call shift?" answered "128", from a release note's "raised the clause limit to 128": a
    question asking how long, tall, high, wide, deep or far something is asks for a measure, and a bare number is
    none. A number with its unit, in the value or right after it, still answers."""
    files = {
        "onboarding.md": "# Engineering onboarding\n\n## On call\n\nYou will not be on call in your first six weeks. "
        "Shadow the primary on-call of your team for one rotation: join the handovers and read the incident threads.\n",
        "release.md": "# Aurora 3.0\n\n## More room for heavy queries\n\nSome of you run large queries that need more "
        "than a few seconds. We also raised the clause limit to 128, which means far fewer errors for long "
        "product-code lists.\n",
    }
    (shift,) = _asked(settings, embedder, tmp_path, files, ["How long is the on-call shift?"])
    assert shift.short_answer is None, shift.answer
    assert not shift.answer.startswith("128"), shift.answer
    measured = {
        "How long is the main span of the Harbour Bridge?": ("Its main span is 503 metres long.", "503 metres"),
        "How wide is the deck of the Harbour Bridge?": ("Its deck is 160 feet wide.", "160"),
        "How long is the Tana estuary?": ("The Tana estuary is 5 mi long.", "5"),
    }
    for question, (sentence, short) in measured.items():
        part = analyze(question).parts[0]
        assert short_answer(part, Unit(1, sentence, "sentence", 0, tokens=unit_tokens(sentence))) == short, question
