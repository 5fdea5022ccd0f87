"""What a comparison question compares, model-free: "Which is older, Lyon or Turin?" → Lyon, Turin;
"A 和 B 有什么区别" → A, B; "What is the difference between apt and aptitude?" → apt, aptitude. The planner searches
each of them with the question's predicate (`predicate`): "Lyon older", "Turin older".
"""

from __future__ import annotations

import re

from agentrag.agent.kind import DEMONYM_WORD, DEMONYMS
from agentrag.text.tokenize import CJK_RANGES, has_cjk, segment

QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]|《([^》]{1,40})》")
_CAP_WORD = r"[A-Z0-9][\w'’.&-]*"
_CAP_PHRASE = re.compile(rf"{_CAP_WORD}(?:\s+(?:of|the|de|la|le|von|van|der|for|on|in|at|y|&)?\s*{_CAP_WORD})*")
_EN_CONJ = re.compile(r"\s+(?:or|and|vs\.?|versus)\s+", re.I)
_AUXILIARY = re.compile(r"^(?:(?:Are|Were|Is|Was|Did|Do|Does|Has|Have|Had|Can|Could)\s+)?(?:the\s+)?")
_DEMONYM = re.compile(rf"\s{DEMONYM_WORD}$")
# Words after a name that say nothing of it: "Katherine Sarafian | both Armenian" keeps its surname.
_NOT_A_NOUN = frozenset("both all each either is are was were has have had also and or do does did".split())
_ZH_PAIR = re.compile(
    rf"([{CJK_RANGES}\w·\-]{{1,20}}?)\s*(?:和|与|跟|同|及|还是|对比|vs)\s*([{CJK_RANGES}\w·\-]{{1,20}}?)\s*"
    r"(?:的|有|之间|相比|哪|谁|分别|各|比较|区别|不同|差别|异同|在|是|？|\?|$)"
)
_ZH_QUESTION_LEAD = re.compile(r"^(请问|请|一下|比较|对比|说说|介绍)+")
_COMPARISON_WORDS = re.compile(
    r"\b(which|what|who|is|are|was|were|did|does|do|both|either|neither|compare|comparison|between|"
    r"difference|different|versus|vs|or|and|the|a|an|than)\b|对比|比较|区别|差别|差异|不同|异同|相比|还是|哪个|哪一个|谁|分别|有什么|什么|的|和|与|跟|吗|呢|是|[?？,，。]",
    re.I,
)
SENTENCE_START = frozenset(
    "the a an in on at of for to and but or he she it they we his her its their this that these those "
    "there when while after before during since although however also later then first one two some many "
    "most january february march april may june july august september october november december".split()
)


def predicate(question: str, entities: list[str]) -> str:
    """The question without the entities and the words that compare them: what each entity is searched with."""
    rest = question
    for e in sorted(entities, key=len, reverse=True):
        # Whole words only: taking "apt" out of "aptitude" would leave "itude" in every sub-query.
        rest = re.sub(rf"(?<![A-Za-z0-9]){re.escape(e)}(?![A-Za-z0-9])", " ", rest)
    rest = _COMPARISON_WORDS.sub(" ", rest)
    return " ".join(dict.fromkeys(rest.split()))


def _says_of(rest: str) -> bool:
    """The words after a name go on saying what it is: a noun ("rock bands") or another nationality or faith."""
    following = (rest.split() or [""])[0]
    return (following.islower() and following not in _NOT_A_NOUN) or following in DEMONYMS


def _en_pair(question: str) -> list[str]:
    """The two capitalised names around 'or' / 'and' / 'vs', e.g. 'Which is older, Lyon or Turin?'."""
    tail = question.rsplit(",", 1)[-1] if "," in question else question
    m = _EN_CONJ.search(tail)
    if not m:
        return []
    left = _CAP_PHRASE.findall(tail[: m.start()])
    right = _CAP_PHRASE.findall(tail[m.end() :])
    if not left or not right:
        return []
    first, second = _AUXILIARY.sub("", left[-1].strip()), right[0].strip()
    if first.lower() in SENTENCE_START or second.lower() in SENTENCE_START or not first:
        return []
    # "Are both X and Wayne Black British?", "... and Nine Lashes American Christian rock bands?": the nationality
    # or faith after the second name is what is asked of both.
    rest = tail[m.end() :].rstrip(" ?？")
    rest = rest[rest.find(second) + len(second) :]
    while _DEMONYM.search(second) and (
        (not rest.strip() and len(second.split()) >= 3)  # at the end: "Wayne Black British", not "Ryan Sarafian"
        or (len(second.split()) >= 2 and _says_of(rest))
    ):
        rest = second[second.rfind(" ") :] + rest
        second = second.rsplit(" ", 1)[0]
    # The two names stand on either side of the conjunction: "Mickey Mouse and created Oswald the Lucky Rabbit"
    # joins two things one person did, it compares nothing.
    before = tail[: m.start()].rstrip(" \"'”’),")
    after = re.sub(r"^(?:the|a|an)\s+", "", tail[m.end() :].lstrip(" \"'“‘("), flags=re.I)
    if not re.search(rf"{re.escape(first)}(?:\s[a-z]+){{0,2}}$", before) or not after.startswith(second):
        return []
    return [first, second]


def comparison_entities(question: str) -> list[str]:
    """The things a comparison or list question is about, if it names two or more."""
    quoted = [next(g for g in m.groups() if g).strip() for m in QUOTED.finditer(question)]
    if len(quoted) >= 2:
        return quoted[:5]
    if has_cjk(question):
        for m in _ZH_PAIR.finditer(question):
            a = _ZH_QUESTION_LEAD.sub("", m.group(1)).strip()
            b = m.group(2).strip()
            if a and b and a != b and _zh_compared(question, m):
                return [a, b]
        return []  # a list inside a sentence ("A、B、C") is ambiguous without a model: the question stays whole
    return _en_pair(question) or _difference_pair(question)


# Words that ask to set two things side by side: "A 和 B 有什么区别", "A 与 B 哪个更", "A 和 B 分别".
_ZH_COMPARING = re.compile(r"区别|差别|差异|不同|异同|相比|比较|对比|哪个|哪一个|谁更|更|分别|各自|还是|vs", re.I)
_ZH_ASKING = re.compile(r"什么|哪|谁|多少|几|怎|如何|为何|何时|是否")


def _zh_compared(question: str, pair: re.Match[str]) -> bool:
    """Two things the question compares, not a noun pair inside what it asks ("莱索托为什么没有港口和海港" is one
    question): the conjunction is a word of its own (not the 和 of 诺贝尔和平奖), neither side holds the question
    word, and the question asks to compare them or the pair opens it ("北京和上海的人口")."""
    if _ZH_ASKING.search(pair.group(1)) or _ZH_ASKING.search(pair.group(2)):
        return False
    between = question[pair.end(1) : pair.start(2)]
    at = pair.end(1) + len(between) - len(between.lstrip())
    conjunction = between.strip()
    if _word_at(question, at) != conjunction:
        return False  # "武藏浦和站", "诺贝尔和平奖", "跟随": the character is part of another word
    if conjunction in ("还是", "对比") or conjunction.lower() == "vs":
        return True  # the conjunction itself compares
    opens = not _ZH_QUESTION_LEAD.sub("", question[: pair.start(1)]).strip() and question[pair.end(2) :][:1] == "的"
    return opens or bool(_ZH_COMPARING.search(question[pair.end(2) :]))


def _word_at(text: str, at: int) -> str:
    """The word (jieba) that starts at this offset, or "" when the offset is inside a word."""
    position = 0
    for word in segment(text, hmm=False):
        if position == at:
            return word
        if position > at:
            return ""
        position += len(word)
    return ""


# "What is the difference between apt and aptitude?": names that need not be capitalised (tools, commands).
_DIFFERENCE = re.compile(
    r"\b(?:difference|differences|compare|comparison)\b[^?]*?\bbetween\s+(?P<a>[\w.+#-]+(?:\s[\w.+#-]+){0,2}?)"
    r"\s+and\s+(?P<b>[\w.+#-]+(?:\s[\w.+#-]+){0,2}?)\s*[?.]?$",
    re.I,
)


def _difference_pair(question: str) -> list[str]:
    m = _DIFFERENCE.search(question.strip())
    if not m:
        return []
    a, b = (re.sub(r"^(the|a|an)\s+", "", x, flags=re.I) for x in (m.group("a"), m.group("b")))
    return [a, b] if a.lower() != b.lower() else []
