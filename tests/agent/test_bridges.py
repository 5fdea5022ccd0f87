"""Model-free answers to questions that reach their answer through another entity, and typed short answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from agentrag.types import Answer
from tests.helpers import write


def _ask(settings: Settings, embedder: Embedder, root: Path, docs: dict[str, str], *questions: str) -> list[Answer]:
    """The answers to the questions over a knowledge base of the given Markdown documents (name: text)."""
    for name, text in docs.items():
        write(root / "docs" / name, text)
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        kb.ingest([root / "docs"])
        return [kb.ask(q) for q in questions]


@pytest.fixture
def kb(settings: Settings, embedder: Embedder, tmp_path: Path) -> Iterator[KnowledgeBase]:
    root = tmp_path / "docs"
    write(
        root / "mcfarland.md",
        "# Billy McFarland\n\nBilly McFarland is an American businessman. In 2017 he was charged with wire fraud "
        "over the Fyre Festival, which he had promoted to investors.\n",
    )
    write(
        root / "fyre.md",
        "# Fyre Festival\n\nA fraudulent luxury music event promoted on social media. It was scheduled to take "
        "place on the island of Great Exuma in the Bahamas in April and May 2017.\n",
    )
    write(
        root / "chargers.md",
        "# 2017 Los Angeles Chargers season\n\nThe 2017 season was the team's first under head coach "
        "Anthony Lynn, and its first in Los Angeles since 1960.\n",
    )
    write(
        root / "lynn.md",
        "# Anthony Lynn\n\nAnthony Lynn is an American football coach and former running back. As a player "
        "he won two Super Bowls with the Denver Broncos.\n",
    )
    write(
        root / "tutu.md",
        "# Archbishop\n\nSouth Africa's anti-apartheid movement was led in the church by Archbishop "
        "Desmond Tutu, who won the Nobel Peace Prize in 1984.\n",
    )
    write(
        root / "travis.md",
        "# Scott Travis\n\nScott Travis (born September 6, 1961) is an American drummer, the drummer of "
        "Judas Priest since 1989.\n",
    )
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as knowledge_base:
        knowledge_base.ingest([root])
        yield knowledge_base


def test_an_answer_that_is_a_passage_s_subject_is_followed_into_that_passage(kb: KnowledgeBase) -> None:
    """The Fyre Festival answers "which festival", not "where": its own passage (titled by it) says where."""
    answer = kb.ask(
        "Where was the music festival Billy McFarland was charged with wire fraud over supposed to take place?"
    )
    assert answer.short_answer is not None
    assert "Great Exuma" in answer.short_answer, answer.answer


def test_an_answer_whose_passage_says_it_is_the_kind_asked_for_is_not_followed(kb: KnowledgeBase) -> None:
    """For "which coach", Anthony Lynn's own passage says he is a coach: its Denver Broncos is not the answer."""
    answer = kb.ask("The 2017 Los Angeles Chargers season was the first under which coach?")
    assert answer.short_answer == "Anthony Lynn", answer.answer


def test_who_is_answered_with_a_name_that_can_be_someone_s(kb: KnowledgeBase) -> None:
    answer = kb.ask("Which South African archbishop led the anti-apartheid movement in the church?")
    assert answer.short_answer is not None
    assert "Desmond Tutu" in answer.short_answer, answer.answer


def test_what_year_is_answered_with_the_year(kb: KnowledgeBase) -> None:
    answer = kb.ask("In what year was Scott Travis born?")
    assert answer.short_answer == "1961", answer.answer
    assert kb.ask("When was Scott Travis born?").short_answer == "September 6, 1961"


def test_constraints_spread_over_two_passages_are_answered_not_called_missing(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """No passage names the games, the complex and Downtown Los Angeles together, yet each is in the evidence: the
    answer is the complex's name, at a confidence below high, not "not found"."""
    docs = {
        "games.md": "# 2015 CrossFit Games\n\nThe 2015 CrossFit Games were held on July 21–26, 2015 at the StubHub "
        "Center in Carson, California.\n",
        "stubhub.md": "# StubHub Center\n\nThe StubHub Center is a multiple-use sports complex on the campus of "
        "California State University, approximately 14 miles south of Downtown Los Angeles.\n",
    }
    question = (
        "The 2015 CrossFit Games were held at what multiple-use sports complex that is approximately 14 miles "
        "south of Downtown Los Angeles?"
    )
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.stop_reason == "answered", answer.answer
    assert answer.short_answer == "StubHub Center", answer.answer
    assert answer.confidence != "high"


def test_a_value_missing_from_the_best_passage_is_read_from_the_passage_about_what_it_names(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    docs = {
        "galleria.md": "# The Peak Galleria\n\nThe Peak Galleria is a shopping complex located at Victoria Gap, "
        "near the summit of Victoria Peak in Hong Kong.\n",
        "peak.md": "# Victoria Peak\n\nWith an elevation of 552 m, it is the highest mountain on Hong Kong Island.\n",
    }
    question = "The Peak Galleria is located near the summit of a mountain that has an elevation of how many meters?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer is not None
    assert answer.short_answer.startswith("552"), answer.answer


def test_both_yes_no_checks_the_attribute_in_each_subject_s_passage(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    docs = {
        "marray.md": "# Jonathan Marray\n\nJonathan Marray is a British former professional tennis player.\n",
        "black.md": "# Wayne Black\n\nWayne Black is a former professional tennis player from Zimbabwe.\n",
        "murray.md": "# Jamie Murray\n\nJamie Murray is a British professional tennis player.\n",
    }
    no, yes = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "Are both Jonathan Marray and Wayne Black British?",
        "Are both Jonathan Marray and Jamie Murray British?",
    )
    assert (no.short_answer, yes.short_answer) == ("no", "yes")
    # One answer first, then what each side's passage says: not "yes; no".
    assert no.answer.startswith("No — Jonathan Marray: yes[")
    assert "; Wayne Black: no[" in no.answer.splitlines()[0]
    assert yes.answer.startswith("Yes — Jonathan Marray: yes[")


def test_two_things_one_person_did_are_not_compared_side_by_side() -> None:
    from agentrag.agent.planner import comparison_entities

    assert comparison_entities("Who worked on the origins of Mickey Mouse and created Oswald the Lucky Rabbit?") == []
    pairs = {
        "Are both Jonathan Marray and Wayne Black British?": ["Jonathan Marray", "Wayne Black"],
        "Is the Marsilea or the Brabejum the genus of more species?": ["Marsilea", "Brabejum"],
        "Which costs more, the Standard plan or the Enterprise plan?": ["Standard", "Enterprise"],
    }
    for question, sides in pairs.items():
        assert comparison_entities(question) == sides, question


def test_what_year_from_a_table_row_is_the_year(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    table = (
        "| Version | Released | Status |\n|---|---|---|\n"
        "| 2.3 | 2024-06-03 | Deprecated |\n| 3.0 | 2025-03-01 | Current |\n"
    )
    (answer,) = _ask(
        settings,
        embedder,
        tmp_path,
        {"versions.md": f"# Release history\n\n{table}"},
        "In what year was version 2.3 released?",
    )
    assert answer.short_answer == "2024", answer.answer


def test_a_possessive_name_is_the_owner_not_the_answer(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    text = "# Aunt Judy's Magazine\n\nThe magazine is named after Juliana Horatia Ewing’s childhood nickname, “Judy”.\n"
    (answer,) = _ask(
        settings, embedder, tmp_path, {"magazine.md": text}, "What was the childhood nickname of Juliana Horatia Ewing?"
    )
    assert answer.short_answer == "Judy", answer.answer
