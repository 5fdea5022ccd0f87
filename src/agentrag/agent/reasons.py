"""Why questions, model-free: a passage's title, or a line that only names the subject, is no reason.

The unit that best repeats a "why" question's words is often the title of the passage that answers it: "INC-2291
Postmortem: Aurora strict-freshness searches failing with E5003" for "INC-2291 的根因是什么？", where the postmortem's
own "Root cause confirmed: ..." shares no word with the question; or a field line such as "Incident: INC-2291.".
Only then is the answer looked for elsewhere: the best unit about the question's subject that states a cause, or
else the best one that says more than a name. Sentences are not otherwise preferred for a causal word: in Chinese
text 由于 and 因为 are everywhere, and cmrc2018's "why" answers are found by the question's own words (a variant that
gave causal sentences the type bonus and took one scoring within 60% of the best cost cmrc2018 0.0034 EM and 0.0067
F1 in both modes).
"""

from __future__ import annotations

import re

from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Scored, Selector
from agentrag.text.fingerprint import normalize_for_match
from agentrag.vocab import AnswerType

# A cause stated, in either language (the passage may be in the other one).
_CAUSE = re.compile(
    r"\b(?:because|caused|causes|due to|root cause|the reason|as a result|owing to|which is why|led to|leads to)\b|"
    r"因为|由于|导致|造成|原因|根因|起因",
    re.I,
)


def gives_cause(text: str) -> bool:
    """Whether the text states a cause (`_CAUSE`)."""
    return _CAUSE.search(text) is not None


# A unit of fewer words than this names something and says nothing of it ("Incident: INC-2291.").
_CLAUSE_WORDS = 4


def past_the_title(part: QuestionPart, selector: Selector, best: Scored, ranked: list[Scored]) -> Scored:
    """For a why question whose best unit only names (its passage's title, a field line): the best unit on the same
    subject (met as `best` is) that states a cause, else the best that says more; `best` itself otherwise."""
    if part.answer_type != AnswerType.REASON or not _names_only(selector, best):
        return best
    others = [s for s in ranked if s.met == best.met and not _names_only(selector, s)]
    return next((s for s in others if gives_cause(s.unit.text)), others[0] if others else best)


def _names_only(selector: Selector, scored: Scored) -> bool:
    unit = scored.unit
    return len(unit.tokens) < _CLAUSE_WORDS or normalize_for_match(unit.text) == selector.title(unit.block)
