"""English short answers that are the answer: the span of the answering sentence the question's words point at
(hotpotqa passages, model-free)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrag.agent.gap import slot_span
from agentrag.agent.question import analyze
from agentrag.agent.values import looks_like_person, names, values
from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from agentrag.vocab import AnswerType
from tests.agent.test_bridges import _ask

_LOADER = (
    "# Kevin Loader\n\nKevin Loader is a British film and television producer. Since 1996, he and co-owner Roger "
    "Michell have run a London-based production company, Free Range Films, through which the pair have made several "
    'feature films directed by Michell, including "The Mother", "Enduring Love", "Venus", "Hyde Park on Hudson", '
    '"and "Le Week-end". Their most recent film is an adaptation by Michell of Daphne Du Maurier\'s "My Cousin '
    'Rachel".\n'
)
_RACHEL = (
    "# My Cousin Rachel (2017 film)\n\nMy Cousin Rachel is a 2017 romantic drama film, written and directed by Roger "
    "Michell, based upon the 1951 novel of the same name by Daphne du Maurier. It stars Rachel Weisz, Sam Claflin, "
    "Iain Glen, Holliday Grainger and Pierfrancesco Favino.\n"
)


def test_the_kind_asked_for_names_the_answer(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """ "production company, Free Range Films" answers "what production company", not the novel's author."""
    docs = {
        "loader.md": _LOADER,
        "rachel.md": _RACHEL,
    }
    (company,) = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "What production company co-owned by Kevin Loader and Rodger Michell produced My Cousin Rachel?",
    )
    assert company.short_answer == "Free Range Films"


def test_a_sort_of_thing_is_the_word_that_sorts_it(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """ "What industry did both X and Y work in?" is answered by "the American film industry" on one side's page
    (not Hollywood, nor a passage about some film), and "what types of plants" by the word both pages put before
    "plants" (not each genus's family)."""
    docs = {
        "korda.md": "# Zoltan Korda\n\nZoltan Korda (June 3, 1895 – October 13, 1961) was a Hungarian-born motion "
        "picture screenwriter, director and producer. He made his first film in Hungary in 1918, and worked with his "
        "brother Alexander Korda on film-making there and in London. They both moved to the United States in 1940 to "
        "Hollywood and the American film industry.\n",
        "field.md": "# William Todd Field\n\nWilliam Todd Field (born February 24, 1964) is an American actor and "
        "three-time Academy Award nominated filmmaker.\n",
        "arbutus.md": "# Arbutus\n\nArbutus is a genus of 11 accepted species of flowering plants in the family "
        "Ericaceae, native to warm temperate regions of the Mediterranean, western Europe, the Canary Islands "
        "(Teneriffa) and North America.\n",
        "aspidistra.md": "# Aspidistra\n\nAspidistra is a genus of flowering plants in the family Asparagaceae, "
        "subfamily Nolinoideae, native to eastern and southeastern Asia, particularly China and Vietnam. They grow "
        "in shade under trees and shrubs.\n",
    }
    industry, plants = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "What industry did both William Todd Field and Zoltan Korda work in?",
        "Arbutus and Aspidistra are what types of plants?",
    )
    assert industry.short_answer == "film"
    assert plants.short_answer == "flowering"


def test_a_count_is_of_the_thing_counted(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """ "canceled after one season": "how many seasons" is answered "one", in words, not with the year of the date
    in the same sentence."""
    docs = {
        "will.md": "# Will (TV series)\n\nWill is an American drama television series about the (fictional) life of "
        "William Shakespeare in his early 20s. The series was ordered for a first season containing 10 episodes, on "
        'May 18, 2016, and premiered on TNT on July 10, 2017. On September 5, 2017, "Will" was canceled after one '
        "season by TNT.\n",
        "bower.md": "# Jamie Campbell Bower\n\nJames Metcalfe Campbell Bower (born 22 November 1988) is an English "
        "actor, singer, and model. As of 2017, he portrays Elizabethan playwright Kit Marlowe in the TNT series "
        '"Will".\n',
    }
    (seasons,) = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "Jamie Campbell Bower was a cast member of the TNT show that was canceled after how many seasons?",
    )
    assert seasons.short_answer == "one"


def test_initials_stay_inside_the_name_they_belong_to() -> None:
    """ "U.S." is one word of a name: never the short answer "U" of "located on U.S. Routes 20 and 169"."""
    assert [n.text for n in names("It is located on U.S. Routes 20 and 169.")] == ["U.S. Routes"]
    assert [n.text for n in names("He met J.K. Rowling in the U.K. in May.")] == ["J.K. Rowling", "U.K."]


def test_a_gap_never_ends_inside_a_word() -> None:
    """ "When does monsoon season happen" against "Post-monsoon or autumn season": "Post-" answers nothing."""
    assert slot_span("When does monsoon season happen in Delhi?", "Post-monsoon or autumn season, in October.") is None
    assert slot_span("When does monsoon season happen in Delhi?", "In June monsoon season starts.") == "In June"


def test_the_day_and_year_of_a_date_count_nothing() -> None:
    """ "What is the area code ..." is not answered "23" from "since February 23, 1973"."""
    assert values("It has been listed on the register since February 23, 1973.", AnswerType.NUMBER) == []
    found = values("It had 1,363 students and opened on May 4, 1921.", AnswerType.NUMBER)
    assert [v.text for v in found] == ["1,363 students"]


def test_a_day_without_its_year_and_a_time_of_day_answer_when() -> None:
    """ "on 21 June" and "at noon" say when, though no year is given."""
    assert [v.text for v in values("The glacier melts on 21 June every year.", AnswerType.DATE)] == ["21 June"]
    assert [v.text for v in values("Glacier G7 melts at noon.", AnswerType.DATE)] == ["noon"]
    assert [v.text for v in values("The shop opens at 9 am.", AnswerType.DATE)] == ["9 am"]
    assert [v.text for v in values("It opens at 9 a.m. daily.", AnswerType.DATE)] == ["9 a.m."]
    assert values("He scored 21 goals in June.", AnswerType.DATE) == []


def test_an_adverb_opening_a_sentence_is_no_name() -> None:
    """ "Originally editor of Mayfair": "Originally" names nothing; names ending in -ly still do."""
    found = [v.text for v in names('Originally editor of "Mayfair", Graham Masterton wrote horror. Italy is big.')]
    assert "Originally" not in found
    assert "Mayfair" in found
    assert "Italy" in found
    assert [v.text for v in names("Emily Reilly met Beverly Hills.")] == ["Emily Reilly", "Beverly Hills"]


def test_a_hall_of_fame_or_a_university_is_nobody() -> None:
    """A "who" answer is a person: "SIU Edwardsville Athletics Hall of Fame" was given for "what basketball player";
    surnames that are also words (Hall, Church) still name people."""
    assert not looks_like_person("SIU Edwardsville Athletics Hall of Fame")
    assert not looks_like_person("Truman State University")
    assert looks_like_person("Wayman Tisdale")
    assert looks_like_person("Stephen Hall")


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What party was the man who largely repealed the Black Act a member of?", AnswerType.ENTITY),
        ("Which retired Argentine footballer played for Boca Juniors?", AnswerType.PERSON),
        ("What American actor starred in Gigli?", AnswerType.PERSON),
    ],
)
def test_the_kind_asked_for_ends_at_a_verb(question: str, kind: AnswerType) -> None:
    """ "What party was the man who ...": a party is asked for, the man is the bridge."""
    assert analyze(question).parts[0].answer_type == kind


POSTMORTEM = {
    "inc-7.md": "# INC-7 postmortem\n\n## Timeline\n\n14:05 Searches start failing with E5003.\n\n14:45 Root cause "
    "confirmed: the connection pool size is empty in the rendered worker configuration.\n",
}


def test_the_root_cause_asked_for_is_a_reason_not_a_number(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "What was the root cause of INC-2291?" was read as asking for a thing and answered "14" (from the timestamp
    14:45) with high confidence: the cause asked for is a reason, stated by the sentence, with no short answer."""
    assert analyze("What was the root cause of INC-7?").parts[0].answer_type == AnswerType.REASON
    (answer,) = _ask(settings, embedder, tmp_path, POSTMORTEM, "What was the root cause of INC-7?")
    assert answer.short_answer is None
    assert "connection pool size is empty" in answer.answer


def test_a_label_in_the_questions_words_names_which_value_is_asked_for() -> None:
    """ "When does Aurora 2.3 reach end of support?" was answered "21 March 2025" (high confidence) from "Update, 21
    March 2025: Aurora 2.3 now has a fixed end-of-support date: 30 September 2025": the date the label made of the
    question's words introduces is the one asked for."""
    from agentrag.agent.typed import short_answer
    from agentrag.agent.units import Unit, unit_tokens

    sentence = "Update, 21 March 2025: Aurora 2.3 now has a fixed end-of-support date: 30 September 2025."
    part = analyze("When does Aurora 2.3 reach end of support?").parts[0]
    assert short_answer(part, Unit(1, sentence, "sentence", 0, (), unit_tokens(sentence))) == "30 September 2025"


def test_a_pronoun_opening_a_sentence_names_no_one() -> None:
    """ "Who is on call this week?" was answered "You", from "You will not be on call in your first six weeks"."""
    assert names("You will not be on call in your first six weeks.", AnswerType.PERSON) == []
    assert [v.text for v in names("You Only Live Twice is a 1967 spy film.")] == ["You Only Live Twice"]


HANDBOOK_AND_RELEASE = {
    "handbook.md": "---\ndate: 2025-03-20\n---\n# Aurora handbook\n\n## E1042\n\nWhen the expanded query exceeds the "
    "clause limit — 64 in version 2.3, 128 in version 3.0 — Aurora refuses it with HTTP 400.\n",
    "release.md": "---\ndate: 2025-02-17\n---\n# Aurora 3.0 is generally available\n\nWe also raised the clause "
    "limit to 128, which means far fewer E1042 errors.\n",
}


def test_the_version_asked_for_picks_its_own_value_of_several() -> None:
    """ "What is the clause limit in Aurora 3.0?" was answered 64 from "the clause limit — 64 in version 2.3, 128 in
    version 3.0 —": each version the sentence names owns the value beside it."""
    from agentrag.agent.typed import short_answer
    from agentrag.agent.units import Unit, unit_tokens

    def answer(question: str, sentence: str) -> str | None:
        return short_answer(analyze(question).parts[0], Unit(1, sentence, "sentence", 0, (), unit_tokens(sentence)))

    listed = HANDBOOK_AND_RELEASE["handbook.md"].split("\n\n")[-1].strip()
    assert answer("What is the clause limit in Aurora 3.0?", listed) == "128"
    assert answer("What is the clause limit in Aurora 2.3?", listed) == "64"
    leading = "In version 2.3 the clause limit is 64 and in version 3.0 it is 128."
    assert answer("What is the clause limit in Aurora 3.0?", leading) == "128"
    assert answer("What is the clause limit in Aurora 2.3?", leading) == "64"


def test_two_sources_giving_the_same_value_for_the_version_asked_do_not_disagree(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The handbook's 64 (for 2.3) was set against the release note's 128 as sources that disagree."""
    (answer,) = _ask(settings, embedder, tmp_path, HANDBOOK_AND_RELEASE, "What is the clause limit in Aurora 3.0?")
    assert answer.short_answer == "128"
    assert not answer.conflicts
