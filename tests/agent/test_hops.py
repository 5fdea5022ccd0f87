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


CLEOPATRA = (
    "# Cleopatra\n\nCleopatra VII Philopator (69 – August 12, 30 BC), known to history simply as Cleopatra, was the "
    "last active ruler of the Ptolemaic Kingdom of Egypt, briefly survived as pharaoh by her son Caesarion. After "
    "her reign, Egypt became a province of the recently established Roman Empire.\n"
)
ATHENION = (
    "# Athenion (general)\n\nAthenion was in the late 30s BC a military commander of the Egyptian queen Cleopatra "
    "in Coele-Syria.\n"
)
POLYCRATES = (
    "# Polycrates of Argos\n\nPolycrates of Argos, son of Mnasiades, was a Ptolemaic commander at the Battle of "
    "Raphia, as well as a governor of Cyprus and chancellor of the Ptolemaic Kingdom in the late third and early "
    "second centuries BC.\n"
)


def test_the_anchors_sentence_leads_to_the_answer_it_does_not_give(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The sentence stating the anchor (the last ruler of the Ptolemaic Kingdom) names Cleopatra, and the answer is
    a hop away, on the page about her commander: not "Cleopatra" from the anchor's own sentence, nor another
    Ptolemaic commander."""
    docs = {"cleopatra.md": CLEOPATRA, "athenion.md": ATHENION, "polycrates.md": POLYCRATES}
    question = "Who was the military commander of the last active ruler of the Ptolemaic Kingdom of Egypt?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer == "Athenion"


def test_a_relative_clauses_pronoun_is_not_the_question_word() -> None:
    """ "who" and "which" opening a relative clause describe a noun; the question word comes later: a singer
    whose album won what prize asks for a prize, the House which meets where asks for a place."""

    def kind(question: str) -> str:
        return analyze(question).parts[0].answer_type.value

    assert kind('"Hold On" features the vocals of a British singer whose debut album won what prize in 2017?') == (
        "entity"
    )
    assert kind("Sal de Mi Piel is a song by the actress who is of what nationality?") == "entity"
    assert kind("Phyllis Kohn holds a seat in the House of Representatives which meets where?") == "place"
    assert kind('The band who released the debut album "Tinted Windows" had their first performance in what city?') == (
        "place"
    )
    # Asking words stay asking: after a preposition, and before the noun they ask about.
    assert kind("The not-for-profit company which owns a Mark VI monorail was assisted in financing by whom?") == (
        "person"
    )
    assert kind("The Un-Americans contained which wrestler who also went by what TNA Wrestling name?") == "person"
    assert kind("Who directed the film in which Susanne Pollatschek voiced what character?") == "person"


def test_the_county_is_read_on_the_birthplace_page_not_the_town_sentence(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "In which county is | the town | in which X was born": the town is the bridge, so the answer is the county
    its page names, given with its kind ("Finnmark county"), not the town or the country after the comma."""
    docs = {
        "robertsen.md": "# Raymond Robertsen\n\nRaymond Robertsen (born 12 September 1974 in Hammerfest) is a "
        "Norwegian politician for the Conservative Party.\n",
        "hammerfest.md": "# Hammerfest\n\nHammerfest is a municipality in Finnmark county, Norway. The administrative "
        "centre of the municipality is the town of Hammerfest. Some of the main villages in the municipality "
        "include Rypefjord and Akkarfjord.\n",
    }

    def head(question: str) -> str:
        return " ".join(head_clause(analyze(question).parts[0]).split())

    assert head("What party was the man who repealed the Black Act a member of?") == "What party was"
    assert head("How long is the tidal estuary in which Branford is a shoreline town?") == "How long is"
    question = "In which county is the town in which Raymond Robertsen was born?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer == "Finnmark county"
