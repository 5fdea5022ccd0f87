"""Question analysis, model-free, Chinese and English: what kind of answer a question wants, about what.

For each part of a question ("INC-2291 是几级故障？按值班手册，值班人应在多长时间内响应？" has two) it finds:
- the expected answer type (a definition, a person or team, a date, a number or amount, a duration, yes/no,
  a choice between named options, a list, steps, a reason, a place, another name);
- the target attribute: the words naming what is asked ("default rate limit", "住宿标准", "response time");
- the constraints the answer must respect: codes and ids (INC-2291, E1042, SEV-2), versions (2.3), dates,
  quoted titles, and names (Kestrel, Aurora API).

Answer selection scores passages for the type and the target, and confidence asks whether the constraints
were met (see extractive.py). The analysis goes into the trace.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from agentrag.agent.options import options as named_options
from agentrag.text.tokenize import has_cjk, tokenize_query
from agentrag.vocab import AnswerType

ConstraintKind = Literal["code", "version", "date", "quoted", "name"]


class Constraint(BaseModel):
    kind: ConstraintKind
    text: str


class QuestionPart(BaseModel):
    text: str
    answer_type: AnswerType
    target: str = Field(description="The words naming what is asked for.")
    constraints: list[Constraint] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list, description="For a choice: the named alternatives.")
    side: str = Field("", description="For one side of a comparison: the thing this part is about.")
    whole: str = Field("", description="For one side of a comparison: the whole question, as asked.")
    nested: bool = Field(
        False, description="Names its subject through another entity (the service that caused INC-2291): multi-hop."
    )

    @property
    def asked_as(self) -> str:
        """The question as asked: a side's part is searched as "Arbutus types of plants", asked as "Arbutus and
        Aspidistra are what types of plants?"."""
        return self.whole or self.text

    @property
    def target_tokens(self) -> list[str]:
        return [t for t in tokenize_query(self.target) if t not in _ZH_SCAFFOLD_WORDS]


class QuestionAnalysis(BaseModel):
    question: str
    language: Literal["zh", "en"]
    parts: list[QuestionPart]

    @property
    def answer_type(self) -> AnswerType:
        return self.parts[0].answer_type

    @property
    def constraints(self) -> list[Constraint]:
        seen: dict[str, Constraint] = {}
        for part in self.parts:
            for c in part.constraints:
                seen.setdefault(c.text.lower(), c)
        return list(seen.values())


# ------------------------------------------------------------------------------------------ answer types

# (pattern, type), first match wins; English patterns are matched on the lower-cased question.
# "which archbishop", "what retired Argentine footballer": the one asked for is a person; "what party was the man
# who ..." asks for a party (a verb ends the words naming the kind).
_PERSON_NOUNS = (
    r"actor|actress|singer|songwriter|rapper|musician|guitarist|drummer|composer|conductor|author|writer|novelist|"
    r"poet|playwright|journalist|director|filmmaker|producer|screenwriter|painter|artist|architect|sculptor|"
    r"photographer|scientist|physicist|chemist|mathematician|philosopher|economist|inventor|engineer|"
    r"politician|president|senator|governor|mayor|minister|king|queen|emperor|prince|princess|archbishop|bishop|"
    r"pope|general|admiral|footballer|player|coach|manager|athlete|boxer|wrestler|comedian|host|presenter|"
    r"businessman|businesswoman|entrepreneur|founder|man|woman"
)
# "How long is the main span": a measure, answered by a number with its unit; "how long does it take": a duration.
ASKS_MEASURE = re.compile(
    r"\bhow (long|tall|high|wide|deep|far) (is|are|was|were) (the|a|an|its|his|her|their)\b", re.I
)
_EN_TYPES: list[tuple[re.Pattern[str], AnswerType]] = [
    (ASKS_MEASURE, AnswerType.NUMBER),
    (re.compile(r"\b(deadline|no later than|by when|how soon|within how)\b"), AnswerType.DURATION),
    # "What is the P1 response time": a time taken, given as a duration ("30 minutes"), not a thing named.
    (
        re.compile(
            r"\bwhat (is|are|was|were) (the )?([\w-]+ ){0,3}?(response|resolution|turnaround|processing|waiting|wait|"
            r"recovery|delivery|lead) times?\b|\bwhat (is|was) (the )?([\w-]+ ){0,3}?(timeout|retention period)\b"
        ),
        AnswerType.DURATION,
    ),
    (re.compile(r"\b(what|which) (severity|priority|level|tier|grade)\b|\bhow severe\b"), AnswerType.LEVEL),
    (
        re.compile(
            r"^\s*why\b|\bwhat (is|was) the reason\b|\bwhat causes?\b|\bwhat led to\b|"
            r"\bwhat (is|was|were|are) the (root |main |primary |underlying )?causes?\b"
        ),
        AnswerType.REASON,
    ),
    (
        re.compile(r"\bhow (long|often)\b|\bfor how long\b|\bhow many (days|weeks|months|years|hours|minutes)\b"),
        AnswerType.DURATION,
    ),
    (
        re.compile(r"\bhow (many|much|old|big|large|tall|high|far|fast)\b|\bwhat (percentage|share|number)\b"),
        AnswerType.NUMBER,
    ),
    # "Compare A and B", "How do A and B differ?": the differences listed, not a thing named or steps to take.
    (
        re.compile(r"^\s*compare\b|\bhow (do|does|did|is|are|was|were) .{1,80} (differ|compare)\b"),
        AnswerType.LIST,
    ),
    (
        re.compile(r"^\s*how (do|does|did|can|could|should|would|to)\b|\bwhat (are the )?steps\b|\bhow to\b"),
        AnswerType.PROCEDURE,
    ),
    (
        re.compile(r"^\s*when\b|\bwhat (year|date|day|time|month)\b|\b(in |on )?which (year|date|day|month)\b"),
        AnswerType.DATE,
    ),
    (
        re.compile(
            r"^\s*(who|whom|whose)\b|\bwhich (person|people|team|group|company|organization)\b|"
            rf"\b(which|what) ((?!(?:is|was|are|were|did|does|do|has|had|have) )[\w'-]+ ){{0,3}}?({_PERSON_NOUNS})\b"
        ),
        AnswerType.PERSON,
    ),
    (
        re.compile(r"^\s*where\b|\b(what|which) (country|city|state|county|province|town|place|region|continent)\b"),
        AnswerType.PLACE,
    ),
    (
        re.compile(
            r"\bwhat does .{1,60} (mean|stand for)\b|\bwhat is the meaning of\b|^\s*define\b|\bwhat is meant by\b"
        ),
        AnswerType.DEFINITION,
    ),
    (
        re.compile(
            r"^\s*(list|name)\b|\bwhat (are|were) (the|all)\b|\bwhich .{1,40} (are|were)\b|\bwhat changed\b|"
            r"\bdifferences?\b"
        ),
        AnswerType.LIST,
    ),
]
_EN_YES_NO = re.compile(r"^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall|may)\b")
# Nouns that name a quantity: "what is the default rate limit" asks for a number, "what is Kestrel" for a definition.
_QUANTITY_WORDS = (
    r"limit|limits|rate|price|cost|fee|quota|size|number|count|amount|percentage|credit|budget|salary|"
    r"population|length|height|capacity|score|total|revenue|sla|uptime|cap|maximum|minimum|threshold|"
    r"allowance|rent|wage|tax|discount|speed|distance|weight|area|volume|temperature|age"
)
_QUANTITY_NOUNS = re.compile(rf"\b({_QUANTITY_WORDS})\b")
_WHAT_QUANTITY = re.compile(rf"^\s*(what|which)\s+(\w+\s+){{0,2}}?({_QUANTITY_WORDS})\b")
_ZH_TYPES: list[tuple[re.Pattern[str], AnswerType]] = [
    # A deadline ("最晚什么时候提交") is answered by a time limit: "费用发生后 30 天内".
    (re.compile(r"最晚|最迟|截止|期限|时限"), AnswerType.DURATION),
    (re.compile(r"几级|哪一?级|什么级别|哪个级别|等级是"), AnswerType.LEVEL),
    (re.compile(r"(?<![称作成叫])为什么|为何|什么原因|原因是|根因|起因|诱因|成因"), AnswerType.REASON),
    (
        re.compile(r"多长时间|多久|多少(天|周|个月|年|小时|分钟|秒)|几(天|周|个月|年|小时|分钟)|时限"),
        AnswerType.DURATION,
    ),
    # "几月几号" and "几号到" ask for a day; "几号球衣" for a number.
    (
        re.compile(
            r"什么时候|何时|哪一?年|哪一?天|几月|几号(?![\u4e00-\u9fff])|几号(?=到|出发|开始|结束)|什么日期|哪个月"
        ),
        AnswerType.DATE,
    ),
    (re.compile(r"多少|几[\u4e00-\u9fff]|多大|多高|多远|百分之几|比例"), AnswerType.NUMBER),  # 几座, 几个, 几倍
    (
        re.compile(r"如何|怎么(做|办|处理|解决|配置|设置|申请)?|怎样|步骤|流程|先查什么|应该(先)?做什么"),
        AnswerType.PROCEDURE,
    ),
    (re.compile(r"谁|哪位|哪个(人|团队|组(?!合)|部门|公司)|哪(两|几)?个公司|负责人是"), AnswerType.PERSON),
    (re.compile(r"哪里|在哪|何地|哪个(国家|城市|省|地方)|什么地方"), AnswerType.PLACE),
    (re.compile(r"哪些|有什么区别|区别|不同|差异|变化|列举"), AnswerType.LIST),
    # "锣鼓经是什么": a definition; "邹游的职业是什么": the value of an attribute (falls through to a name).
    (
        re.compile(r"是什么意思|什么意思|指什么|表示什么|代表什么|含义|^[^的]{1,12}是什么[？?]?$|什么是"),
        AnswerType.DEFINITION,
    ),
]
_ZH_YES_NO = re.compile(r"是否|是不是|能不能|可不可以|有没有|吗[？?]?$")


def _answer_type(text: str, zh: bool, options: list[str]) -> AnswerType:
    if len(options) >= 2:
        return AnswerType.CHOICE
    if zh:
        if "还是" in text:
            return AnswerType.CHOICE
        for pattern, kind in _ZH_TYPES:
            if pattern.search(text):
                return kind
        return AnswerType.YES_NO if _ZH_YES_NO.search(text) else AnswerType.ENTITY
    lower = text.lower()
    # "... a civil war that ended when?", "... was the former CEO of which company": the question word comes late.
    late = _asking_word(lower)
    if (
        late is not None
        and late > 0
        and not _EN_YES_NO.match(lower)
        and not re.match(r"^\s*(in|on|at|for|from|by|of|to)\b", lower)
    ):
        lower = lower[late:]
    for pattern, kind in _EN_TYPES:
        if pattern.search(lower):
            return kind
    if _EN_YES_NO.match(lower):
        return AnswerType.YES_NO
    if re.match(r"^\s*what (is|are|was|were)\b", lower):
        return AnswerType.NUMBER if _QUANTITY_NOUNS.search(lower) else _definition_or_entity(lower)
    if _WHAT_QUANTITY.match(lower):
        return AnswerType.NUMBER  # "what service credit ...", "which fee ..."
    return AnswerType.ENTITY


_WH_WORD = re.compile(r"\b(when|where|who|whom|whose|which|what|how)\b")
_BEFORE_ASKING = frozenset("in on at for from by of to under with about into through as than is was are were".split())
_AFTER_RELATIVE = frozenset("is was are were has had have also first later then once".split())


def _asking_word(lower: str) -> int | None:
    """Where the question word is: the first one, unless it opens a relative clause and another follows ("a
    British singer | whose debut album won | what prize", "the House of Representatives | which meets | where")."""
    found = list(_WH_WORD.finditer(lower))
    if len(found) < 2 or (lower[: found[0].start()].split() or ["in"])[-1] in _BEFORE_ASKING:
        return found[0].start() if found else None  # "by whom", "of which company": asking
    nxt = (lower[found[0].end() :].split() or [""])[0]
    relative = found[0].group(1) in ("who", "whom", "whose") or nxt in _AFTER_RELATIVE  # "the actress who is of"
    relative |= lower[: found[0].start()].rstrip().endswith(",") or (nxt.endswith("s") and not nxt.endswith("ss"))
    return found[-1].start() if relative else found[0].start()  # "contained which wrestler": asking


def _definition_or_entity(lower: str) -> AnswerType:
    """ "What is E1042?" / "What is Kestrel?" ask for a definition; "what is the capital of X" for a name."""
    rest = re.sub(r"^\s*what (is|are|was|were)\s+", "", lower).rstrip(" ?")
    return AnswerType.DEFINITION if len(rest.split()) <= 3 and not rest.startswith("the ") else AnswerType.ENTITY


# ------------------------------------------------------------------------------------------ constraints

_CODE = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{0,9}-?\d+[A-Z0-9-]*)(?![\w-])")
_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+(?:\.\d+)?)(?![\w.])")
_DATE = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}|\d{4}\s?年(?:\s?\d{1,2}\s?月(?:\s?\d{1,2}\s?日)?)?|(?<!\d)(?:1[5-9]|20)\d\d(?!\d)"
)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]|《([^》]{1,40})》|「([^」]{1,40})」")
# Constraints that qualify one value of an attribute among others ("64 in version 2.3, 128 in version 3.0"), and how
# their kind is written: `typed._qualified`.
QUALIFIERS: dict[ConstraintKind, re.Pattern[str]] = {"version": _VERSION, "date": _DATE}
# A name may end with a small number: "State Route 582", "Starflyer 59", "Apollo 11" (not a year).
_EN_NAME = re.compile(
    r"(?<![\w'])([A-Z][\w'’&.-]*(?:\s+(?:of|the|de|la|von|van|for|&)?\s*[A-Z][\w'’&.-]*)*(?:\s\d{1,3}(?![\d,.]))?)"
)
_LATIN_IN_ZH = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*(?:\s+[A-Z][A-Za-z0-9_.+-]*)*")
_SENTENCE_START_WORDS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could has have had will would "
    "should the a an in on at of for to and or list name define by with from as this that these those both either "
    "each every all some any often also after before during since while although despite among between".split()
)
_ZH_GENERIC_LATIN = frozenset({"sla", "api", "key", "http", "oa", "id", "url", "sso"})


def _constraints(text: str, zh: bool) -> list[Constraint]:
    found: list[Constraint] = []

    def add(kind: ConstraintKind, value: str) -> None:
        value = value.strip(" ,.;:'’")
        if value and not any(value.lower() in c.text.lower() for c in found):
            found.append(Constraint(kind=kind, text=value))

    for m in _QUOTED.finditer(text):
        add("quoted", next(g for g in m.groups() if g))
    text = _QUOTED.sub(" ", text)  # a quoted title is one constraint, not also a source of names and codes
    for m in _CODE.finditer(text):
        add("code", m.group(1))
    for m in _DATE.finditer(text):
        add("date", m.group(0))
    for m in _VERSION.finditer(text):
        add("version", m.group(1))
    if zh:
        for m in _LATIN_IN_ZH.finditer(text):
            if m.group(0).lower() not in _ZH_GENERIC_LATIN:
                add("name", m.group(0))
        return found
    for m in _EN_NAME.finditer(text):
        words = m.group(1).split()
        while words and words[0].lower() in _SENTENCE_START_WORDS:
            words = words[1:]
        name = re.sub(r"['’]s$", "", " ".join(words))
        if name and not _VERSION.fullmatch(words[0]) and name.lower() not in ("i", "we", "you"):  # "How do I ..."
            add("name", name)
    return found


# ------------------------------------------------------------------------------------------ targets

_EN_SCAFFOLD = re.compile(
    r"(?<![\w-])(what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|would|will|"
    r"has|have|had|the|a|an|of|in|on|at|for|to|by|with|from|and|or|that|this|these|those|it|its|their|there|i|we|you|"
    r"many|much|long|often|mean|means|meaning|stand|define|list|name|get|got|entitled|between|according)(?![\w-])",
    re.I,
)
# Words of a Chinese question that say nothing of what it asks about, as "has" and "have" say nothing in English
# ("年假有多少天": 有), dropped as words, not as characters (有效期, 所有).
_ZH_SCAFFOLD_WORDS = frozenset({"有"})
# Chinese measure words, defined once: classifiers count things ("几个", "哪所", "两座"), units measure an amount
# ("多少天", "几岁"). After a question word either is the answer's type, checked as such, not what the question is
# about ("年假有多少天" is about 年假; "天" was half of what made "15 天内复核" look on target).
ZH_CLASSIFIERS = "个位家所座条种部支间名只项类本首门次届期场层"
ZH_UNITS = "天年岁元块米倍周月人"
_ZH_SCAFFOLD = re.compile(
    rf"请问|是什么意思|什么意思|是什么|是多少|多长时间|多少[{ZH_CLASSIFIERS}{ZH_UNITS}]?|多久|什么时候|何时|为什么|"
    rf"如何|怎么|怎样|哪些|哪个|哪里|有什么|什么|哪|谁|几级|几[{ZH_CLASSIFIERS}{ZH_UNITS}]?|吗|呢|应该|应当|最晚|"
    r"[？?，,。！!、：:《》「」“”\"]"
)


def _target(text: str, zh: bool, constraints: list[Constraint]) -> str:
    rest = text
    for c in sorted(constraints, key=lambda c: -len(c.text)):
        rest = re.sub(rf"{re.escape(c.text)}(['’]s)?", " ", rest)
    if zh:
        return " ".join(_ZH_SCAFFOLD.sub(" ", rest).split())
    rest = re.sub(r"[^\w\s'-]", " ", rest)
    return " ".join(_EN_SCAFFOLD.sub(" ", rest).split())


# ------------------------------------------------------------------------------------------ parts


def split_parts(question: str) -> list[str]:
    """Separate questions asked in one message: text after a question mark that is itself a question."""
    pieces = [p.strip() for p in re.split(r"(?<=[？?])\s*", question) if p.strip()]
    return pieces if len(pieces) > 1 and all(len(p) >= 4 for p in pieces) else [question.strip()]


_RELATIONS = (
    "author|director|composer|performer|performers|singer|founder|creator|owner|producer|publisher|writer|president|"
    "capital|mother|father|wife|husband|son|daughter|birthplace|country|city|state|county|company|team|university|"
    "school|band|leader|head|member|spouse|successor|predecessor"
)
# What a name's possessive leads to: "Gisvi's city of birth", "Deane Waldo Malott's alma mater".
POSSESSED_RELATIONS = f"{_RELATIONS}|birth|team|club|label|album|novel|film|alma mater|hometown|employer"
# "the service that caused INC-2291", "the team of the person who ...": the subject is reached through a hop.
_NESTED_EN = re.compile(
    r"\b(the|a|an|this|that)\s+(?:[\w'-]+,?\s+){0,4}?(that|who|whom|whose|which|where|when)\b"
    r"|\b(of|by|for|in|from) the .{3,60}? (of|by|for|that|who|which)\b"
    r"|\b(affected|caused|owned|run|led|founded|written|directed|produced|published) by\b"
    # "the author of Brand", "the country Signmark is from": the subject is named through another one.
    rf"|\bthe (?:\w+ ){{0,2}}?({_RELATIONS}) (of|where|in which)\b"
    r"|\bthe (country|city|state|county|place|company) [A-Z][\w'-]+(?: [A-Z][\w'-]+)* (is|was) "
    r"(from|in|based|located)\b"
    # "Akinoshu Kenji's birthplace", "Gisvi's city of birth": what the question asks is said of what the name has.
    rf"|\b[A-Z][\w-]*['’]s (?:\w+ ){{0,2}}?(?:{POSSESSED_RELATIONS})\b",
    re.I,
)
_NESTED_ZH = re.compile(r"(导致|引起|造成|负责|开发|发布|创办|创建|属于|所在|受|影响)[^，。？?]{0,12}?的")


def analyze(question: str) -> QuestionAnalysis:
    zh = has_cjk(question)
    parts: list[QuestionPart] = []
    for text in split_parts(question):
        options = named_options(text, zh)
        constraints = _constraints(text, zh)
        parts.append(
            QuestionPart(
                text=text,
                answer_type=_answer_type(text, zh, options),
                target=_target(text, zh, constraints),
                constraints=constraints,
                options=options,
                nested=bool((_NESTED_ZH if zh else _NESTED_EN).search(text)),
            )
        )
    return QuestionAnalysis(question=question, language="zh" if zh else "en", parts=parts)
