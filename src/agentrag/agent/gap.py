"""The question's gap, model-free: the words of a sentence that stand where the question has its question word.

"广茂铁路全长多少公里？" against "广茂铁路全长364.6公里" gives "364.6"; "赵鹏的职业是什么？" against
"赵鹏，中国足球运动员，司职后卫" gives "中国足球运动员". A value of the expected type inside the gap is a strong
sign that the sentence answers (selection.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentrag.agent.question import ZH_CLASSIFIERS, QuestionPart
from agentrag.text.tokenize import has_cjk, segment, tokenize
from agentrag.vocab import AnswerType

_QUESTION_WORDS_ZH = re.compile(r"什么|哪[些个里位年天]?|谁|多少|几|何|怎样|怎么|如何|为什么")
_QUESTION_WORDS_EN = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b", re.I)
_FUNCTION_WORDS = frozenset(
    "的 是 在 了 有 和 与 及 为 被 把 由 对 从 向 于 以 而 也 都 就 又 还 这 那 其 该 此 个 之 吗 呢 啊 呀 "
    "the a an of in on at to for by with from and or is are was were be been do does did has have had it its "
    "can could will would should may might must shall".split()
)
# Where a span ends: a mark of punctuation, but not the comma inside a number ("25,000"). A decimal point still ends
# one: not ending there lets "标准按单人上限的 1.5 倍执行" fill the gap of "出差住宿标准是多少" (BENCHMARKS.md).
_PUNCTUATION = re.compile(r"[，。.；;！!？?]|,(?!\d)")
_SPAN_TRIM = "，,。.；;：:、 的是为由在了和与及\"'“”《》()（）"


def words(text: str) -> list[str]:
    return list(_words(text))


@lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    if has_cjk(text):
        return tuple(w for w in segment(text) if w.strip())
    return tuple(re.findall(r"[\w'-]+", text))


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
    "赵鹏的职业是什么"). A Chinese question's gap is found only in a Chinese sentence: its anchors met in an English one
    ("E7001" of "E7001 出现了多少次" in "E7001 responses appeared") leave English words between them, not an answer.
    """
    zh = has_cjk(question)
    if zh and not has_cjk(sentence):
        return None
    gap = (_QUESTION_WORDS_ZH if zh else _QUESTION_WORDS_EN).search(question)
    if gap is None:
        return None
    before = _anchors(words(question[: gap.start()]))[::-1][:3]  # nearest to the gap first
    after = _anchors([w for w in words(question[gap.end() :]) if w not in "？?。."])
    kind = None if zh else _kind_word(gap.group(0), question[gap.end() :])
    if kind is not None:  # "which engineer designed ...": "the engineer John Bradfield" names the answer
        named = re.search(rf"\b(?i:{re.escape(kind)})s?\s+((?:[A-Z][\w'’.-]*\s?){{1,4}})", sentence)
        if named:
            return named.group(1).strip()
        after = [w for w in after if w != kind]  # the kind is not where the sentence's answer ends
    after = after[:3]
    zh_kind = _zh_kind_word(gap.group(0), question[gap.end() :]) if zh else None
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
        if zh_kind is not None and sentence.startswith(zh_kind, right) and span.strip(_SPAN_TRIM):
            span += zh_kind  # "获得了什么奖" against "获得法朗基奖": the prize is 法朗基奖
    elif left >= 0:
        rest = sentence[left:].lstrip(_SPAN_TRIM)
        span = _PUNCTUATION.split(rest, maxsplit=1)[0]
        if zh and question[gap.end() :].startswith("的") and "的" in span:
            span = span[: span.index("的")]  # "是用来生产什么的": 碳酸钠, not 碳酸钠的主要方法
    else:
        span = _PUNCTUATION.split(sentence[:right])[-1]
    if zh:
        span = _zh_trim(question, gap.start(), span)
    elif right > 0 and (sentence[right - 1].isalnum() or sentence[right - 1] == "-"):
        return None  # the word after the gap found inside another word: "monsoon" in "Post-monsoon" ends no span
    span = span.strip(_SPAN_TRIM)
    if all(w.lower() in _FUNCTION_WORDS or not any(c.isalnum() for c in w) for w in words(span)):
        return None  # "the", "的": particles alone answer nothing
    if zh and all(w in question for w in words(span)):
        return None  # "哪个王朝的建立者" against "舜天王朝建立者": the question's own words are no answer
    return span if len(span) <= 40 else None


# The noun after a Chinese question word names the kind asked for ("什么奖", "哪个大学", "哪两个公司"); where the
# sentence has it right after the answer, it belongs to the answer's name (法朗基奖, 香港中文大学). Nouns that only
# say what sort of thing is asked (什么地区, 什么方式) are no part of a name.
_ZH_CLASSIFIER = re.compile(rf"^[一两二三四五六七八九十几]?[{ZH_CLASSIFIERS}]")
_ZH_GENERIC_KINDS = frozenset(
    "地区 地方 方面 方式 方法 类型 性质 东西 事情 事 样子 程度 作用 用途 问题 原因 意思 内容 情况 特点 关系 名字 名称 "
    "人 时候 时间 语言 颜色 形状".split()
)
# Words a sentence opens its answer with that only relate it to the subject: "又称 X", "意为 X", "就是 X".
_ZH_RELATION_LEAD = re.compile(
    r"^(?:(?:又|也|亦|俗|前|原|今|简|通|另|或)(?:称|名|叫)(?:为|作|做)?|(?:又|也|亦|或)?(?:被)?(?:称为|称作|叫做|叫作|名为)|"
    r"意为|意思是|意即|就是|即是|乃是|乃|系|被用作|被视为|被列为|改编自|源自|来自|出自|位于|限于)"
)


def _zh_kind_word(question_word: str, rest: str) -> str | None:
    if question_word not in ("什么", "哪", "哪个", "哪些"):
        return None
    following = tagged(_ZH_CLASSIFIER.sub("", rest))[:1]
    if not following or not following[0][1].startswith(("n", "l")):  # a noun, not the verb "由什么代替"
        return None
    kind = following[0][0]
    return kind if kind not in _ZH_GENERIC_KINDS else None


@lru_cache(maxsize=4096)
def tagged(text: str) -> tuple[tuple[str, str], ...]:
    """The words of a Chinese text with their part of speech (jieba)."""
    from agentrag.agent.pos import posseg  # numpy and the tag files: not at import

    return tuple((w.word, w.flag) for w in posseg().cut(text, HMM=False) if w.word.strip())


def _nominal(span: str) -> bool:
    """A short span that can name a thing on its own: nouns only ("前锋", "甘油"), not "一传说" or "探讨"."""
    words_tags = tagged(span)
    return bool(words_tags) and all(flag.startswith(("n", "l", "j")) for _, flag in words_tags)


# Words that close a condition ("未达标时", "毕业以后", "需要的话"): a question that names the condition leaves them out
# ("未达标怎么办"), so the words after its anchor in the sentence open with one; the answer starts after it.
_CONDITION_CLOSE = frozenset({"时", "时候", "的时候", "之时", "后", "以后", "之后", "的话"})
_CONDITION_FIRST = frozenset(word[0] for word in _CONDITION_CLOSE)  # only a span opening so is cut into words


# "值班补贴怎么发放" against "值班补贴、加班餐补随当月工资统一发放": the subject is one of a list, whose other items
# stand between it and the gap's words; those start at the coverb after them (随, 按, 通过 ...).
_COVERBS = "随|按照|按|依照|依据|根据|通过|经由|经过|由|以|于|在|向|从|用"
_LISTED = re.compile(rf"^[、及和与][^，,。；;、]{{1,12}}?(?={_COVERBS})")


def _zh_trim(question: str, gap_at: int, span: str) -> str:
    """A Chinese span without what only restates how the question joins the gap to its subject: the particle the
    question puts just before its question word ("由什么运载火箭" against "于1998年由长征三号乙" gives 长征三号乙), and
    a relation word the sentence opens with ("又称细点齿鲷")."""
    if (listed := _LISTED.match(span)) is not None:
        span = span[listed.end() :]
    joint = re.search(r"[由以被从向在于对与和给用将把]$", question[:gap_at])
    if joint and joint.group(0) in "在于" and span[:1] in ("在", "于") and len(span) > 3:
        span = span[1:]  # "分布在什么海域" against "分布于西北太平洋"
    elif joint and joint.group(0) in span[:-1]:
        cut = span.rindex(joint.group(0), 0, len(span) - 1) + 1
        if len(span) - cut >= 2:
            span = span[cut:]
    lead = span.lstrip(" ，,：:")
    first = segment(lead, hmm=False)[:1] if lead[:1] in _CONDITION_FIRST else []
    if first and first[0] in _CONDITION_CLOSE and len(lead) - len(first[0]) >= 2:
        span = lead[len(first[0]) :]  # "未达标怎么办" against "未达标时按 SLA 给予服务抵扣": not "时按 SLA…"
    return zh_clean(span)


_OPENING, _CLOSING = "（(", "）)"  # a parenthesis; titles and quotes lose their opening mark to the trim


def zh_clean(span: str) -> str:
    """A Chinese answer span without the tail of a parenthesis it starts inside ("SINOSAT-1）是法国宇航公司" gives
    法国宇航公司), a relation word it opens with ("又称细点齿鲷") or the 所 of "由 X 所经营" it ends with."""
    span = span.strip(_SPAN_TRIM)  # the trim takes an opening parenthesis, not its closing one
    depth, cut = 0, 0
    for i, ch in enumerate(span):
        if ch in _OPENING:
            depth += 1
        elif ch in _CLOSING:
            if depth == 0:
                cut = i + 1  # closes what opened before the span
            depth = max(depth - 1, 0)
    if cut and len(span) - cut >= 2:
        span = span[cut:]
    span = span.strip(_SPAN_TRIM)
    if span.endswith("所") and len(span) > 3:
        span = span[:-1]
    return _ZH_RELATION_LEAD.sub("", span).strip(_SPAN_TRIM) or span


MIN_CLAUSE = 4
MIN_NAME = 2  # a slot this short still names a thing asked for with 什么 ("甘油", "前锋")
_CAUSE = re.compile(r"因为|由于|因|为了|缘于|源于|是为")  # the clause that gives a cause
_CONSEQUENCE = re.compile(r"^(?:所以|因此|因而|故|于是|从而)")  # a clause that follows from the one before


def answer_clause(part: QuestionPart, sentence: str) -> str | None:
    """For a reason, a list or steps asked in Chinese: the words filling the question's gap, or else the clause
    of the sentence that shares most of the question's words (a reason is a clause, not the whole passage) —
    unless that clause only restates the question: then, for a reason, the clause that gives the cause ("莱索托没有
    港口和海港，因是一个内陆国家"; the one before "所以…"), else the clause after it ("其生存受到威胁，主要是…")."""
    slot = slot_span(part.text, sentence)
    named = part.answer_type in (AnswerType.ENTITY, AnswerType.DEFINITION)
    if slot is not None and (len(slot) >= MIN_CLAUSE or (named and len(slot) >= MIN_NAME and _nominal(slot))):
        return slot
    clauses = [c.strip() for c in re.split(r"[，；;。]|,(?!\d{3})", sentence) if len(c.strip()) >= MIN_CLAUSE]
    if not clauses:
        return None
    wanted = set(part.target_tokens)
    at = max(range(len(clauses)), key=lambda i: len(wanted & set(tokenize(clauses[i]))))
    if not _restates(part, clauses[at]):
        return zh_clean(clauses[at]) if named else clauses[at]
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
