"""Model-free multi-hop answers that follow the chain past its first hop, on passages of the hotpotqa corpus
(Wikipedia openings): the page the anchor names is where the answer is read, and the words that ask are those
outside the noun phrase naming the anchor."""

from __future__ import annotations

from pathlib import Path

from agentrag.agent.chain import head_clause
from agentrag.agent.question import analyze
from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask

BROCK = (
    "# David Brock\n\nDavid Brock (born November 2, 1962) is an American Neo-Liberal political operative, author, and "
    'commentator who founded the media watchdog group Media Matters for America. He has been described by "Time" '
    'as "one of the most influential operatives in the Democratic Party".\n'
)
SEDUCTION = (
    "# The Seduction of Hillary Rodham\n\nThe Seduction of Hillary Rodham is a 1996 book about the early years of "
    "Hillary Rodham Clinton written by David Brock.\n"
)
HOPE = (
    "# Between Hope and History\n\nBetween Hope and History: Meeting America's Challenges for the 21st Century is a "
    "1996 book by then-incumbent United States President Bill Clinton. It was published by Random House in "
    "September 1996 in the lead up to the 1996 US presidential election, partly as a means to reach out to the "
    "electorate.\n"
)


def test_the_book_is_read_past_the_founder_the_anchor_names(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The founder of Media Matters is the bridge, not the answer: the 1996 book is read on the page of the book
    he wrote, not from the founder's own page (which answered "David Brock")."""
    docs = {"brock.md": BROCK, "seduction.md": SEDUCTION, "hope.md": HOPE}
    question = "What 1996 book was written by the founder of Media Matters for America?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer is not None
    assert "Seduction of Hillary Rodham" in answer.short_answer


def test_the_asking_words_leave_out_the_anchors_noun_phrase() -> None:
    """What a nested question asks, without the phrase that names its anchor: a possessive, a "the X of ..."
    phrase, a relative clause closed by "is located", or the phrase the question word completes."""

    def head(question: str) -> str:
        return " ".join(head_clause(analyze(question).parts[0]).split())

    assert head("What 1996 book was written by the founder of Media Matters for America?") == (
        "What 1996 book was written by ?"
    )
    assert head("What is the most popular hotel in Gisvi's city of birth?") == "What is the most popular hotel in ?"
    # The possessed phrase ends with the relation it names: the verb after it is what is asked.
    assert head("When did the Deane Waldo Malott's alma mater start issuing degrees in engineering?") == (
        "When did the start issuing degrees in engineering?"
    )
    assert analyze("When did the Deane Waldo Malott's alma mater start issuing degrees?").parts[0].nested
    assert head("Who was president when the area where Intrepid Wind Farm is located became a state?") == (
        "Who was president when the area became a state?"
    )
    assert head("Anna Camp had a recurring role in the Fox series created by whom?") == (
        "the Fox series created by whom?"
    )
    # A title's capitalised "Who" opens no relative clause.
    nest = "The Girl Who Kicked the Hornets' Nest"
    assert "airport" in head(f"What is the main international airport in the birthplace of the director of {nest}?")
    # A clause that goes on past the anchor keeps the words before it.
    assert head("Who directed a 2006 film where Ron Perkins' character plays the manager of a hotel?") == (
        "Who directed a 2006 film"
    )
