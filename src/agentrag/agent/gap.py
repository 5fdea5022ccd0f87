"""The question's gap, model-free: the words of a sentence that stand where the question has its question word.

"广茂铁路全长多少公里？" against "广茂铁路全长364.6公里" gives "364.6"; "赵鹏的职业是什么？" against
"赵鹏，中国足球运动员，司职后卫" gives "中国足球运动员". A value of the expected type inside the gap is a strong
sign that the sentence answers (selection.py).
"""

from __future__ import annotations

import re

from agentrag.agent.question import QuestionPart
from agentrag.text.tokenize import has_cjk, tokenize
from agentrag.vocab import AnswerType

_QUESTION_WORDS_ZH = re.compile(r"什么|哪[些个里位年天]?|谁|多少|几|何|怎样|怎么|如何|为什么")
_QUESTION_WORDS_EN = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b", re.I)
_FUNCTION_WORDS = frozenset(
    "的 是 在 了 有 和 与 及 为 被 把 由 对 从 向 于 以 而 也 都 就 又 还 这 那 其 该 此 个 之 吗 呢 啊 呀 "
    "the a an of in on at to for by with from and or is are was were be been do does did has have had it its "
    "can could will would should may might must shall".split()
)
_SPAN_TRIM = "，,。.；;：:、 的是为由在了和与及\"'“”《》()（）"


def words(text: str) -> list[str]:
    if has_cjk(text):
        import jieba

        return [w for w in jieba.lcut(text) if w.strip()]
    return re.findall(r"[\w'-]+", text)


def _anchors(words: list[str]) -> list[str]:
    """Question words that can locate the gap in a sentence: content words, not particles or copulas."""
    return [w for w in words if w not in _FUNCTION_WORDS and (len(w) > 1 or (has_cjk(w) and w.isalnum()))]


def _kind_word(question_word: str, rest: str) -> str | None:
    """The noun after "which"/"what" that names the kind of thing asked for: "engineer" in "which engineer ..."."""
    if question_word.lower() not in ("which", "what", "whose"):
        return None
    following: list[str] = re.findall(r"[\w'-]+", rest)[:1]
    if not following or following[0].lower() in _FUNCTION_WORDS:
        return None
    return following[0]


def slot_span(question: str, sentence: str) -> str | None:
    """The words of the sentence that stand where the question has its question word.

    "广茂铁路全长多少公里？" against "广茂铁路全长364.6公里" gives "364.6": the question's content word nearest before
    the gap ("全长") and the nearest after it ("公里") are found in the sentence, and what lies between them is the
    answer; with only the word before, what follows it up to the next punctuation ("赵鹏，中国足球运动员" for
    "赵鹏的职业是什么").
    """
    pattern = _QUESTION_WORDS_ZH if has_cjk(question) else _QUESTION_WORDS_EN
    gap = pattern.search(question)
    if gap is None:
        return None
    before = _anchors(words(question[: gap.start()]))[::-1][:3]  # nearest to the gap first
    after = _anchors([w for w in words(question[gap.end() :]) if w not in "？?。."])
    kind = _kind_word(gap.group(0), question[gap.end() :])
    if kind is not None:  # "which engineer designed ...": "the engineer John Bradfield" names the answer
        named = re.search(rf"\b(?i:{re.escape(kind)})s?\s+((?:[A-Z][\w'’.-]*\s?){{1,4}})", sentence)
        if named:
            return named.group(1).strip()
        after = [w for w in after if w != kind]  # the kind is not where the sentence's answer ends
    after = after[:3]
    left = next((sentence.find(w) + len(w) for w in before if w in sentence), -1)
    if left >= 0:  # what follows the anchor in both ("3》是由") is still the question's, not the answer
        anchor = next(w for w in before if w in sentence)
        tail = question[question.find(anchor) + len(anchor) : gap.start()]
        while tail and left < len(sentence) and sentence[left] == tail[0]:
            left, tail = left + 1, tail[1:]
    start = max(left, 0)
    right = next((p for w in after if (p := sentence.find(w, start)) > start), -1)
    if left < 0 and right < 0:
        return None
    if left >= 0 and right > left:
        span = sentence[left:right]
    elif left >= 0:
        rest = sentence[left:].lstrip(_SPAN_TRIM)
        span = re.split(r"[，,。.；;！!？?]", rest, maxsplit=1)[0]
    else:
        span = re.split(r"[，,。.；;！!？?]", sentence[:right])[-1]
    span = span.strip(_SPAN_TRIM)
    if all(w.lower() in _FUNCTION_WORDS or not any(c.isalnum() for c in w) for w in words(span)):
        return None  # "the", "的": particles alone answer nothing
    return span if len(span) <= 40 else None


MIN_CLAUSE = 4
_CAUSE = re.compile(r"因为|由于|因|为了|缘于|源于|是为")  # the clause that gives a cause
_CONSEQUENCE = re.compile(r"^(?:所以|因此|因而|故|于是|从而)")  # a clause that follows from the one before


def answer_clause(part: QuestionPart, sentence: str) -> str | None:
    """For a reason, a list or steps asked in Chinese: the words filling the question's gap, or else the clause
    of the sentence that shares most of the question's words (a reason is a clause, not the whole passage) —
    unless that clause only restates the question: then, for a reason, the clause that gives the cause ("莱索托没有
    港口和海港，因是一个内陆国家"; the one before "所以…"), else the clause after it ("其生存受到威胁，主要是…")."""
    slot = slot_span(part.text, sentence)
    if slot is not None and len(slot) >= MIN_CLAUSE:
        return slot
    clauses = [c.strip() for c in re.split(r"[，；;。]|,(?!\d{3})", sentence) if len(c.strip()) >= MIN_CLAUSE]
    if not clauses:
        return None
    wanted = set(part.target_tokens)
    at = max(range(len(clauses)), key=lambda i: len(wanted & set(tokenize(clauses[i]))))
    if not _restates(part, clauses[at]):
        return clauses[at]
    if part.answer_type == AnswerType.REASON:
        if _CONSEQUENCE.match(clauses[at]) and at > 0:
            return clauses[at - 1]
        near = sorted((i for i, c in enumerate(clauses) if i != at and _CAUSE.search(c)), key=lambda i: abs(i - at))
        if near:
            return clauses[near[0]]
    return clauses[at + 1] if at + 1 < len(clauses) else clauses[at]


def _restates(part: QuestionPart, clause: str) -> bool:
    """The clause names nothing the question does not ("其生存受到威胁" for "会受到什么威胁"): no content word of
    its own (one-character words such as 其, 他 are not content)."""
    asked = set(tokenize(part.text))
    return not any(len(t) >= 2 or not has_cjk(t) for t in set(tokenize(clause)) - asked)
