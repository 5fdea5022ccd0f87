"""Which of a sentence's values a question may take, beyond their type: the bound it asks for ("the maximum
timeout" in "defaults to 10 seconds and can be raised to 30 seconds"), not a number the question itself writes,
and nothing from an example request written out in a document; and when a unit answers a question without its
words (a price for a cost, an English sentence for a Chinese question about a code)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentrag.agent.question import QuestionPart
from agentrag.agent.units import Unit
from agentrag.agent.values import Value
from agentrag.text.tokenize import has_cjk
from agentrag.vocab import AnswerType

if TYPE_CHECKING:  # selection imports typed, which imports this module
    from agentrag.agent.selection import Scored

# A question asking for a bound, and the words that mark a value as that bound when they stand just before it:
# (asked, marked), the maximum first.
_BOUNDS = (
    (
        re.compile(
            r"\b(?:max(?:imum)?|at most|upper limit|largest|longest|highest|biggest|greatest)\b|"
            r"最多|最大|最长|最高|上限|至多",
            re.I,
        ),
        re.compile(
            r"(?:\bup to|\bat most|\bno more than|\bnot more than|\bas (?:many|much|long|high) as|"
            r"\bmax(?:imum)?(?: of)?|\braised to|\bincreased to|\bextended to|\bcapped at|\blimited to|"
            r"最多|至多|不超过|上限[为是]?|最长|最大|最高|提高[到至]|提升[到至]|增加[到至]|延长[到至])\s*$",
            re.I,
        ),
    ),
    (
        re.compile(
            r"\b(?:min(?:imum)?|at least|lower limit|smallest|shortest|lowest|fewest)\b|最少|最小|最短|最低|下限|至少",
            re.I,
        ),
        re.compile(
            r"(?:\bat least|\bno less than|\bnot less than|\bas (?:few|little|short|low) as|\bmin(?:imum)?(?: of)?|"
            r"至少|不少于|不低于|最少|最短|最低|下限[为是]?)\s*$",
            re.I,
        ),
    ),
)
_MARKER_REACH = 24  # characters before a value that its marker may take ("can be raised to ")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_JSON = re.compile(r'\s*[\[{]\s*"[^"\n]*"\s*:')  # a JSON object (or a list of them), written out
_ASKS_PRICE = re.compile(
    r"\b(?:costs?|price[sd]?|fees?|charged?|charges|pay|paid|spend|spent)\b|多少钱|价格|价钱|费用|收费|售价|多少元",
    re.I,
)
_PRICE = re.compile(
    r"(?:[¥$€£]|\bRMB|\bUS\$)\s?\d|\d(?:[\d,.]*\d)?\s?(?:元|美元|万元|亿元|(?:euros?|dollars?|yuan|RMB|CNY|USD)\b)",
    re.I,
)


def _bound_marker(question: str) -> re.Pattern[str] | None:
    """The words that mark a value as the bound the question asks for; None when it asks for no bound."""
    return next((marked for asked, marked in _BOUNDS if asked.search(question)), None)


def _marked(marker: re.Pattern[str], text: str, at: int) -> bool:
    """The value starting at `at` stands just after the marker."""
    return marker.search(text, max(0, at - _MARKER_REACH), at) is not None


def _marks_a_number(marker: re.Pattern[str], text: str) -> bool:
    return any(_marked(marker, text, m.start()) for m in _NUMBER.finditer(text))


def bounded(question: str, text: str, found: list[Value]) -> list[Value]:
    """For a question asking for a bound, the values the text marks as one; all of them when it marks none (or the
    question asks for no bound)."""
    marker = _bound_marker(question)
    if marker is None:
        return found
    return [v for v in found if _marked(marker, text, v.start)] or found


def marks_asked_bound(question: str, text: str) -> bool | None:
    """Whether the text marks a number as the bound the question asks for ("at least 99.95%" for "the minimum
    uptime"); None when the question asks for no bound."""
    marker = _bound_marker(question)
    return None if marker is None else _marks_a_number(marker, text)


def stating_the_bound(part: QuestionPart, best: Scored, ranked: list[Scored], share: float) -> Scored:
    """For a question asking for a bound of a quantity ("the minimum uptime the SLA promises"): when the best unit
    marks no number as that bound, the best unit on the same subject (met as `best` is) that holds the answer's type
    and does, if it scores at least `share` of the best. "11 Enterprise tenants use freshness=strict" outscored the
    SLA's "a Monthly Uptime Percentage of at least 99.95%" on the question's name alone."""
    if part.answer_type not in (AnswerType.NUMBER, AnswerType.DURATION):
        return best
    marker = _bound_marker(part.text)  # looked up once, not per unit
    if marker is None or _marks_a_number(marker, best.unit.text):
        return best
    marking = next((s for s in ranked if s.typed and s.met == best.met and _marks_a_number(marker, s.unit.text)), None)
    return marking if marking is not None and marking.score >= share * best.score else best


def numbers(text: str) -> set[str]:
    """The numbers a text writes, thousands separators dropped: {"1200", "3.0"} for "1,200 keys in 3.0"."""
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def said_otherwise(part: QuestionPart, unit: Unit) -> bool:
    """The unit is on the question's target though it holds too few of its words: it states the price a question
    about a cost asks for ("starts at ¥25,000 per month" for "how much does the Enterprise plan cost"), or it is an
    English sentence read for a Chinese question about a code (INC-2291, E1042) whose target words are all Chinese,
    none of which it can hold ("Duration: 72 minutes" for "INC-2291 影响了多长时间？"; the code, met by the sentence or
    its passage, names the one thing it is about). A name (Kestrel) is no such pin: an English sentence about
    Kestrel's quota does not tell "Kestrel 的可用性" by its words."""
    if part.answer_type == AnswerType.NUMBER and _ASKS_PRICE.search(part.text) and _PRICE.search(unit.text):
        return True
    return (
        has_cjk(part.text)
        and not has_cjk(unit.text)
        and bool(part.target_tokens)
        and all(has_cjk(token) for token in part.target_tokens)
        and any(c.kind == "code" for c in part.constraints)
    )


def written_example(text: str) -> bool:
    """A unit that is an example request or response (JSON): its `"page_size": 50` shows the form, not a fact."""
    return _JSON.match(text) is not None
