"""When the evidence answers and when it does not: "not found" only when what is asked is said of something the
question does not name at all, never because a name of the question is a stopword or a passage meets only part
of the question's names (as the passage across a bridge does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrag.agent.question import analyze
from agentrag.agent.typed import short_answer
from agentrag.agent.units import Unit, unit_tokens
from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from agentrag.vocab import StopReason
from tests.agent.test_bridges import _ask

COMPANY = {
    "tkachuk.md": "# Bordan Tkachuk\n\nBordan Tkachuk is a British business executive, the former CEO of Viglen, also "
    'known from his appearances on "The Apprentice".\n',
    "viglen.md": "# Viglen\n\nViglen Ltd provides IT products and services, including storage systems, servers and "
    "workstations.\n",
}


def test_a_name_that_is_a_stopword_is_still_stated(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """ "IT" lower-cased is the pronoun "it", which no index keeps: the passage saying "IT products" states it, and
    the answer is the company, not the run of capitalised words "CEO of Viglen"."""
    question = "Bordan Tkachuk was the former CEO of which company, which provides IT products?"
    (answer,) = _ask(settings, embedder, tmp_path, COMPANY, question)
    assert answer.stop_reason == StopReason.ANSWERED
    assert answer.short_answer is not None
    assert answer.short_answer.startswith("Viglen")


GAMES = {
    "fade.md": "# Fade to Black (video game)\n\nFade to Black is an action-adventure game developed by Delphine "
    "Software International and published by Electronic Arts. It is the sequel to the 1992 video game "
    '"Flashback".\n',
    "flashback.md": "# Flashback (video game)\n\nFlashback is a 1992 science fiction cinematic platform game "
    "developed by Delphine Software of France.\n",
    "raven.md": "# Raven Software\n\nRaven Software is an American video game developer based in Wisconsin.\n",
}


def test_a_passage_meeting_part_of_the_names_asked_answers(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The passage naming the developer meets "Fade to Black" but not "1992" or "Flashback" (another sentence of
    its page does): what is asked is said of something the question names, so it answers, not "not found"."""
    question = "What software company developed Fade to black and it's 1992 Sequel, Flashback?"
    (answer,) = _ask(settings, embedder, tmp_path, GAMES, question)
    assert answer.stop_reason == StopReason.ANSWERED
    assert answer.short_answer == "Delphine Software International"


@pytest.mark.parametrize(
    ("question", "sentence", "wrong"),
    [
        (
            "In what town is Suffolk county hamlet that was served by the Suffolk Traction Company?",
            "Borodino is a hamlet located at the intersection of New York State Route 41 in the Town of Spafford.",
            "Borodino is a",
        ),
        (
            "For how many years did a player, who woke up on March 28, 1996 without vision in his right eye, play "
            "for the Minnesota Twins?",
            "Kirby Puckett, the team's franchise player, had been tattooing the Grapefruit League for a .360 "
            "average, but that morning woke up without vision in his right eye.",
            "the team's franchise",
        ),
    ],
)
def test_a_short_answer_is_a_phrase_of_the_asked_kind(question: str, sentence: str, wrong: str) -> None:
    """Not the words around a phrase ("Borodino is a"), and a count holds a number ("the team's franchise" is
    the words in the question's gap, which count nothing)."""
    part = analyze(question).parts[0]
    short = short_answer(part, Unit(1, sentence, "sentence", 0, tokens=unit_tokens(sentence)))
    assert short != wrong
    assert short is None or not short.endswith((" is a", " of", " the")), short


ROUTES = {
    "sr582.md": "# Nevada State Route 582\n\nState Route 582 (SR 582) is a major 16.688 mi highway in the Las Vegas "
    "Valley. It connects Downtown Las Vegas with Henderson.\n",
    "sr147.md": "# Nevada State Route 147\n\nState Route 147 (SR 147) is a major 12.5 mi highway in the Las Vegas "
    "Valley in southern Nevada.\n",
    "sr607.md": "# Nevada State Route 607\n\nState Route 607 was a 9.3 mi state highway serving the Las Vegas Valley "
    "including North Las Vegas.\n",
}


def test_statements_about_two_things_do_not_conflict(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """Three pages about three highways say much the same words with different lengths: each names its own
    subject (582, 147, 607), so they describe three things and no "sources disagree" is reported."""
    question = "What is the length of the Las Vegas Valley highway State Route 582?"
    (answer,) = _ask(settings, embedder, tmp_path, ROUTES, question)
    assert answer.short_answer == "16.688"
    assert answer.conflicts == []
    assert "disagree" not in answer.answer


def test_a_year_is_no_count() -> None:
    """ "How many records": the year in the sentence ("not until 1980") counts nothing."""
    part = analyze("How many records did Shakin' Stevens sell?").parts[0]
    sentence = "His recording career began in the late 1960s, although it was not until 1980 that his success began."
    assert short_answer(part, Unit(1, sentence, "sentence", 0, tokens=unit_tokens(sentence))) is None
