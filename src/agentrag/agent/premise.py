"""A false premise, model-free: the question takes for granted what a passage denies.

"How many times has Rory McIlroy won the Masters?" presupposes that he won it; "McIlroy has yet to win the
Masters" says he has not. When no passage answers the question and a passage about what it asks negates the
very event it asks about, the answer says so first, instead of offering the closest passages as if they were
near an answer. English only: Chinese questions rarely carry their presupposition in a verb phrase the same way.
"""

from __future__ import annotations

import re

from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Scored, Selector
from agentrag.agent.typed import holds_answer
from agentrag.agent.units import Unit
from agentrag.text.tokenize import has_cjk, tokenize_query
from agentrag.vocab import AnswerType

# Questions whose answer exists only if the event happened: how many times, when, where, who.
PRESUPPOSING = frozenset({AnswerType.NUMBER, AnswerType.DATE, AnswerType.PLACE, AnswerType.PERSON})
_DENIAL = re.compile(
    r"\b(?:never|(?:has|have|had|is|are|was|were) yet to|(?:has|have|had) not|(?:has|have|had)n['’]t|"
    r"did not|didn['’]t|failed to|(?:has|have) never)\b",
    re.I,
)
# The words that only say what kind of answer is wanted: a denial must be of the event, not of these.
_SCAFFOLD = frozenset(tokenize_query("how many much times time number when where who whom what which year date"))
FOLLOWING_WORDS = 5  # the denied event follows its negation closely ("has yet to win the Masters")
MIN_SHARED = 0.5  # of the question's words that the passage (with its headings) must state: the same subject
CONSIDERED = 40  # best-ranked units looked at (a denial holds no value, so it ranks low for a value asked)


def denied_premise(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> Unit | None:
    """The best unit that denies the event the question asks about, if the question presupposes one."""
    if has_cjk(part.text) or part.answer_type not in PRESUPPOSING:
        return None
    asked = set(tokenize_query(part.text)) - _SCAFFOLD
    if len(asked) < 2:
        return None
    for scored in ranked[:CONSIDERED]:
        unit = scored.unit
        headings = selector.headings(unit.block)
        if len(asked & (unit.tokens | headings)) < MIN_SHARED * len(asked):
            continue
        if holds_answer(part, unit):
            continue  # "did not win until 2014": a value of the asked kind answers, it does not deny
        # What the question asks happened, less its subject (the passage's title and headings): the denied phrase
        # must hold one of its rarer words, not only a common verb ("hasn't won a major championship" denies no
        # Masters win; "has yet to win the Masters" does).
        event = sorted(asked - headings, key=lambda t: selector.idf.get(t, 0.0))
        if not event:
            continue
        rare = set(event[(len(event) - 1) // 2 :])  # as rare as the median word of the event, or rarer
        for m in _DENIAL.finditer(unit.text):
            if rare & set(tokenize_query(" ".join(unit.text[m.end() :].split()[:FOLLOWING_WORDS]))):
                return unit
    return None
