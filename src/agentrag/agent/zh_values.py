"""Chinese short answers, model-free: where a value asked for in Chinese starts and ends.

- A count or amount carries the unit the question asks in ("多少平方米" → 4998平方米, "几号球衣" → 10号), and a
  number in that unit wins over other numbers of the sentence ("全长多少公里": 27公里, not 3条).
- A unit of the page whose title the question names is preferred (selection.py's W_SUBJECT).
- A place opens an address that goes on after its first name ("位于哪里": 山东省北部沿海地区, not 山东省); names
  joined by 和/与/、 are given together ("由哪两个公司": 甲公司和乙公司).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from agentrag.agent.gap import tagged
from agentrag.agent.question import ZH_CLASSIFIERS, QuestionPart
from agentrag.agent.values import Value
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk, segment
from agentrag.vocab import AnswerType

MAX_SLOT_NAME = 30  # a place or a list of names given whole from the gap, at most this long
_NAME_JOINS = re.compile(r"以及|[和与及、]")
_ASKED_COUNT = re.compile(r"(第)?(?:多少|几)")
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[万亿])?|[零一二两三四五六七八九十百千万亿]+"
_MONEY = r"(?:万元|亿元|美元|欧元|港元|元|块钱|块)"

# An address holds no preposition, verb, adverb or aspect particle (jieba tags): "广东向尚可喜等人投降" is no place.
_NOT_ADDRESS = re.compile(r"^(?:p|v(?!n)|d|u[lzgdv])")


def whole_slot(part: QuestionPart, slot: str, inside: list[Value]) -> bool:
    """The gap's words are the answer when a name starts them and what follows belongs to it: a place opening an
    address, or short names joined by 和/与/、 (a name found among them)."""
    if len(slot) > MAX_SLOT_NAME or not inside:
        return False
    if part.answer_type == AnswerType.PLACE:
        return slot.startswith(inside[0].text) and not any(_NOT_ADDRESS.match(flag) for _, flag in tagged(slot))
    if part.answer_type == AnswerType.PERSON:
        pieces = _NAME_JOINS.split(slot)
        return len(pieces) >= 2 and all(0 < len(p) <= 12 for p in pieces)
    return False


@lru_cache(maxsize=1024)
def asked_unit(question: str) -> tuple[str, bool] | None:
    """The unit or classifier a Chinese count question asks in ("多少平方米" → 平方米, "第几代" → 代, ordinal), or
    None when the question word is followed by no unit ("是多少")."""
    m = _ASKED_COUNT.search(question)
    if m is None:
        return None
    rest = question[m.end() :]
    following = [w for w in segment(rest, hmm=False)[:1] if re.fullmatch(r"[\u4e00-\u9fff]{1,3}", w)]
    if not following or following[0] in ("是", "的", "呢", "吗", "了", "为", "有"):
        return None
    unit = following[0]
    if len(unit) > 1 and unit[0] in ZH_CLASSIFIERS:  # "几个国际机场": the classifier, not the noun after it
        unit = unit[0]
    return unit, bool(m.group(1))


def counted(text: str, unit: str, ordinal: bool) -> list[Value]:
    """The numbers of the text written in the asked unit, with it ("4998平方米", "第二代")."""
    prefix = "第" if ordinal else ""
    if unit == "钱":  # "多少钱" asks for money in whatever currency the text gives it
        pattern = re.compile(rf"[¥￥$]\s?(?:{_NUMBER})|(?:{_NUMBER})\s?{_MONEY}")
    else:
        pattern = re.compile(rf"{prefix}(?:{_NUMBER})\s?{re.escape(unit)}")
    return [Value(m.group(0), m.start(), m.end()) for m in pattern.finditer(text)]


def named_pages(question: str, titles: Iterable[str]) -> frozenset[str]:
    """The page titles (normalised) a Chinese question names: each stands in the question, and no longer title that
    holds it does ("德龙烟铁路全长" names 德龙烟铁路, not 龙烟铁路)."""
    if not has_cjk(question):
        return frozenset()
    key = normalize_for_match(question)
    found = {t for t in titles if len(t) >= 2 and t in key}
    return frozenset(t for t in found if not any(t != other and t in other for other in found))
