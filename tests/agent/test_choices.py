"""Choices between named options, model-free: which options a question names, and which one the pages support."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrag.agent.options import options
from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask


@pytest.mark.parametrize(
    ("question", "named"),
    [
        # A comma inside a name is part of it; a comma before "or" closes the first option.
        (
            "Which long-established US university is older: University of California, Berkeley or Syracuse University?",
            ["University of California, Berkeley", "Syracuse University"],
        ),
        (
            "Which battle, the Battle of Cold Harbor, or the Second Battle of Bull Run, was fought first?",
            ["Battle of Cold Harbor", "Second Battle of Bull Run"],
        ),
        # What the question says of the second option is not part of its name.
        ("Which band The Innocence Mission or Starflyer 59 was formed first ?", ["Innocence Mission", "Starflyer 59"]),
        # Two names joined by "and" that the question picks one of.
        ("Who was born first of Leslie S. Hiscott and James Rolfe", ["Leslie S. Hiscott", "James Rolfe"]),
        ("Among Kele Okereke and Jon Hume who made the New Zealand band Evermore?", ["Kele Okereke", "Jon Hume"]),
        (
            "Of the retired tennis players Ross Case and Slobodan Živojinović, which player reached a higher ranking?",
            ["Ross Case", "Slobodan Živojinović"],
        ),
        (
            "Which is a French documentary, The Seine Meets Paris and Great Old Amusement Parks?",
            ["Seine Meets Paris", "Great Old Amusement Parks"],
        ),
        ("Which is older, Lyon or Turin?", ["Lyon", "Turin"]),
        (
            "Between two scientists Ernst Messerschmid and Philippe Perrin, who is older?",
            ["Ernst Messerschmid", "Philippe Perrin"],
        ),
    ],
)
def test_the_options_a_question_names(question: str, named: list[str]) -> None:
    assert options(question, zh=False) == named


@pytest.mark.parametrize(
    "question",
    [
        "Who is the father of Anne Smith and John Smith?",  # one answer about both: no choice
        "Were both Daniel Mann and Todd Solondz directors?",
        "Cranium and Twin Tin Bots are both what?",
        # the last two of a longer list are no options
        "Which Nigerian footballer played in the top divisions in Italy, Spain, England and Germany?",
        # the two contrasted, not one to pick ("Standard" was the short answer, from "China Standard Time")
        "What is the difference between the Standard and Enterprise plans?",
        "What are the similarities between Lyon and Turin?",
    ],
)
def test_names_joined_by_and_are_not_always_options(question: str) -> None:
    assert options(question, zh=False) == []


WRITERS = {
    "algren.md": "# Nelson Algren\n\nNelson Algren (March 28, 1909 – May 9, 1981) was an American writer. His novel "
    '"The Man with the Golden Arm" won the National Book Award in 1950.\n',
    "west.md": "# Nathanael West\n\nNathanael West (October 17, 1903 – December 22, 1940) was an American author, "
    'screenwriter and satirist. His novel "The Day of the Locust" appeared in 1939.\n',
}


def test_who_lived_longer_is_the_longer_life_span(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """Not the later birth nor the later death: Algren lived 72 years, West 37 (West was born first)."""
    (answer,) = _ask(
        settings, embedder, tmp_path, WRITERS, "Which author lived longer, Nelson Algren or Nathanael West?"
    )
    assert answer.short_answer == "Nelson Algren"


COMPOSERS = {
    "tippett.md": "# Michael Tippett\n\nSir Michael Kemp Tippett (2 January 1905 – 8 January 1998) was an English "
    "composer who rose to prominence during and immediately after the Second World War.\n",
    "cherubini.md": "# Luigi Cherubini\n\nLuigi Cherubini (8 or 14 September 1760 – 15 March 1842) was an Italian "
    "composer who spent most of his working life in France.\n",
}


def test_most_recently_is_later_not_more(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    question = "Which composer wrote his music most recently, Michael Tippett or Luigi Cherubini?"
    (answer,) = _ask(settings, embedder, tmp_path, COMPOSERS, question)
    assert answer.short_answer == "Michael Tippett"


PLAYERS = {
    "case.md": "# Ross Case\n\nRoss Case (born 1 November 1951) is an Australian former tennis player. His "
    "career-high singles ranking was world no. 14.\n",
    "boba.md": "# Slobodan Živojinović\n\nSlobodan Živojinović (born 23 July 1963) is a Serbian former tennis player. "
    "Together with Nenad Zimonjić he is the only tennis player from Serbia to be the World No. 1 in doubles. As a "
    "singles player, he reached the semi-finals of the 1985 Australian Open, achieving a career-high ranking of "
    "World No. 19.\n",
}


def test_a_higher_ranking_is_the_smaller_number_beside_what_is_ranked(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """No. 14 in singles beats No. 19 in singles; the No. 1 in doubles is another ranking."""
    question = (
        "Of the tennis players Ross Case and Slobodan Živojinović, which reached a higher career-high singles ranking?"
    )
    (answer,) = _ask(settings, embedder, tmp_path, PLAYERS, question)
    assert answer.short_answer == "Ross Case"


BANDS = {
    "innocence.md": "# The Innocence Mission\n\nThe Innocence Mission (stylized as the innocence mission on all "
    "releases "
    "since 1995) is an American folk rock band. The group was formed in Lancaster, Pennsylvania in the early 1980s "
    "when the members met during a school production.\n",
    "starflyer.md": "# Starflyer 59\n\nStarflyer 59 is an alternative rock band from Riverside, California that was "
    "founded in 1993 by Jason Martin.\n",
}


def test_the_year_compared_is_the_one_beside_the_property_asked(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "formed first": the 1980s of "was formed", not the 1995 of a stylized name; "band" is the kind, not the
    property, so a year beside "band" proves nothing."""
    question = "Which band The Innocence Mission or Starflyer 59 was formed first ?"
    (answer,) = _ask(settings, embedder, tmp_path, BANDS, question)
    assert answer.short_answer == "Innocence Mission"


SAME = {
    "tiger.md": "# Tiger Please\n\nTiger Please is an Indie / Alternative five-piece band from Cardiff, Wales. The "
    "band formed in August 2008.\n",
    "brmc.md": "# Black Rebel Motorcycle Club\n\nBlack Rebel Motorcycle Club is an American rock band from San "
    "Francisco, California.\n",
    "digital.md": "# Digital Summer\n\nDigital Summer is an American hard rock band from Phoenix, Arizona, formed in "
    "2006.\n",
    "underoath.md": "# Underoath\n\nUnderoath is an American Christian post-hardcore band from Tampa, Florida.\n",
    "catasetum.md": "# Catasetum\n\nCatasetum is a genus of showy epiphytic orchids, family Orchidaceae, subfamily "
    "Epidendroideae.\n",
    "origanum.md": "# Origanum\n\nOriganum is a genus of herbaceous perennials and subshrubs in the family Lamiaceae, "
    "native to Europe and North Africa.\n",
}


def test_the_same_attribute_is_read_off_each_sides_page(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """ "the same country": Welsh (a band from Cardiff, Wales) against American; "the same US state": Arizona
    against Florida; "the same family": Orchidaceae against Lamiaceae. Each answer names both values."""
    country, state, family = _ask(
        settings,
        embedder,
        tmp_path,
        SAME,
        "Are the bands Tiger Please and Black Rebel Motorcycle Club from the same country?",
        "Are both bands, Digital Summer and Underoath, from the same US state ?",
        "Are Catasetum and Origanum in the same family?",
    )
    assert country.short_answer == "no"
    assert country.answer.startswith("No — Tiger Please: Welsh[")
    assert "Black Rebel Motorcycle Club: American[" in country.answer
    assert state.short_answer == "no"
    assert "Arizona" in state.answer
    assert "Florida" in state.answer
    assert family.short_answer == "no"
    assert "Orchidaceae" in family.answer
    assert "Lamiaceae" in family.answer


CHRISTIAN_ROCK = {
    "deerhunter.md": "# Deerhunter\n\nDeerhunter is an American rock band from Atlanta, Georgia, formed in 2001.\n",
    "nine-lashes.md": "# Nine Lashes\n\nNine Lashes is an American Christian rock band from Birmingham, Alabama "
    "formed in 2006.\n",
}


def test_both_is_no_when_one_page_leaves_out_the_faith_asked_of_both(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """Deerhunter's page says "American rock band": three of the four words asked, but not "Christian"."""
    question = "Are both Deerhunter and Nine Lashes American Christian rock bands?"
    (answer,) = _ask(settings, embedder, tmp_path, CHRISTIAN_ROCK, question)
    assert answer.short_answer is not None
    assert answer.short_answer.lower() == "no"
    assert "Deerhunter: no" in answer.answer


PLANS = {
    "standard.md": "# Standard plan\n\nThe Standard plan costs 3,000 yuan per month per tenant. Its availability "
    "target is 99.9%, with no service credits. Maintenance windows are announced in China Standard Time.\n",
    "enterprise.md": "# Enterprise plan\n\nThe Enterprise plan starts at 25,000 yuan per month on an annual "
    "contract. It carries a 99.95% availability SLA with service credits.\n",
}


def test_a_difference_between_two_things_is_no_choice_of_one(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "What is the difference between A and B" contrasts the two: no short answer naming one of them ("Standard",
    read off "China Standard Time"), and the sentences of both sides."""
    (answer,) = _ask(
        settings, embedder, tmp_path, PLANS, "What is the difference between the Standard and Enterprise plans?"
    )
    assert answer.short_answer is None
    assert "3,000 yuan" in answer.answer
    assert "25,000 yuan" in answer.answer
