"""The planner: turn a question into 1-5 focused sub-queries, each with the intent it serves.

Model-free, rules split comparisons ("A or B", "A 和 B 的区别") and lists into one search per entity, and
`bridge_queries` builds a second round for multi-hop questions from the entities that the first round's
best passages name but the question does not. With an LLM, the planner writes the sub-queries itself
(JSON, validated; on failure the rules take over).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agentrag.errors import LLMError
from agentrag.llm import LLMClient, TokenMeter
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import CJK_RANGES, has_cjk
from agentrag.types import Evidence, SubQuery

# ------------------------------------------------------------------------------------- comparisons

_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]|《([^》]{1,40})》")
_CAP_WORD = r"[A-Z0-9][\w'’.&-]*"
_CAP_PHRASE = re.compile(rf"{_CAP_WORD}(?:\s+(?:of|the|de|la|le|von|van|der|for|on|in|at|y|&)?\s*{_CAP_WORD})*")
_EN_CONJ = re.compile(r"\s+(?:or|and|vs\.?|versus)\s+", re.I)
_ZH_PAIR = re.compile(
    rf"([{CJK_RANGES}\w·\-]{{1,20}}?)\s*(?:和|与|跟|同|及|还是|对比|vs)\s*([{CJK_RANGES}\w·\-]{{1,20}}?)\s*"
    r"(?:的|有|之间|相比|哪|谁|分别|各|比较|区别|不同|差别|异同|在|是|？|\?|$)"
)
_ZH_QUESTION_LEAD = re.compile(r"^(请问|请|一下|比较|对比|说说|介绍)+")
_COMPARISON_WORDS = re.compile(
    r"\b(which|what|who|is|are|was|were|did|does|do|both|either|neither|compare|comparison|between|"
    r"difference|different|versus|vs|or|and|the|a|an|than)\b|对比|比较|区别|差别|差异|不同|异同|相比|还是|哪个|哪一个|谁|分别|有什么|什么|的|和|与|跟|吗|呢|[?？,，。]",
    re.I,
)
_SENTENCE_START = frozenset(
    [
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "of",
        "for",
        "to",
        "and",
        "but",
        "or",
        "he",
        "she",
        "it",
        "they",
        "we",
        "his",
        "her",
        "its",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "when",
        "while",
        "after",
        "before",
        "during",
        "since",
        "although",
        "however",
        "also",
        "later",
        "then",
        "first",
        "one",
        "two",
        "some",
        "many",
        "most",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)


def _predicate(question: str, entities: list[str]) -> str:
    rest = question
    for e in entities:
        rest = rest.replace(e, " ")
    rest = _COMPARISON_WORDS.sub(" ", rest)
    return " ".join(dict.fromkeys(rest.split()))


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
    first, second = left[-1].strip(), right[0].strip()
    if first.lower() in _SENTENCE_START or second.lower() in _SENTENCE_START:
        return []
    return [first, second]


def comparison_entities(question: str) -> list[str]:
    """The things a comparison or list question is about, if it names two or more."""
    quoted = [next(g for g in m.groups() if g).strip() for m in _QUOTED.finditer(question)]
    if len(quoted) >= 2:
        return quoted[:5]
    if has_cjk(question):
        for m in _ZH_PAIR.finditer(question):
            a = _ZH_QUESTION_LEAD.sub("", m.group(1)).strip()
            b = m.group(2).strip()
            if a and b and a != b:
                return [a, b]
        listed = [p.strip() for p in re.split(r"[、]", question) if p.strip()]
        if len(listed) >= 3:
            return []  # a list inside a sentence is ambiguous without a model; keep the question whole
        return []
    return _en_pair(question)


def rule_plan(question: str, max_subqueries: int = 5) -> list[SubQuery]:
    entities = comparison_entities(question)
    if len(entities) >= 2:
        predicate = _predicate(question, entities)
        return [
            SubQuery(query=f"{e} {predicate}".strip(), intent=f"what the question asks about {e}")
            for e in entities[:max_subqueries]
        ]
    return [SubQuery(query=question, intent="answer the question")]


# ------------------------------------------------------------------------------------- bridges

_PROPER_EN = re.compile(rf"{_CAP_WORD}(?:\s+(?:of|the|de|la|von|van|der|for|&)?\s*{_CAP_WORD})*")


def _candidate_entities(text: str) -> list[str]:
    found: list[str] = []
    for m in _QUOTED.finditer(text):
        found.append(next(g for g in m.groups() if g).strip())
    if has_cjk(text):
        import jieba.posseg as pseg

        found.extend(w.word for w in pseg.cut(text) if w.flag in ("nr", "ns", "nt", "nz") and len(w.word) >= 2)
    for m in _PROPER_EN.finditer(text):
        phrase = m.group(0).strip(" .'’-")
        words = phrase.split()
        while words and words[0].lower() in _SENTENCE_START:
            words = words[1:]
        phrase = " ".join(words)
        if len(phrase) >= 3 and not phrase.isdigit():
            found.append(phrase)
    return found


def bridge_entities(question: str, evidence: list[Evidence], top_passages: int = 3, limit: int = 3) -> list[str]:
    """Entities the best passages name but the question does not: the likely next hop.

    Each candidate is scored by how many of the top passages mention it, weighted by the passage's rank,
    plus its passage title when that title is not in the question (a page about the bridge entity).
    """
    asked = normalize_for_match(question)
    scores: dict[str, float] = {}
    for rank, item in enumerate(evidence[:top_passages], start=1):
        weight = 1.0 / rank
        title = item.chunk.title.strip()
        seen_here: set[str] = set()
        for entity in _candidate_entities(item.chunk.text):
            key = normalize_for_match(entity)
            if not key or key in asked or asked in key or key in seen_here:
                continue
            if title and normalize_for_match(title) == key:
                continue  # the passage's own subject: already retrieved
            seen_here.add(key)
            scores[entity] = scores.get(entity, 0.0) + weight
    ranked = sorted(scores, key=lambda e: -scores[e])
    out: list[str] = []
    for entity in ranked:
        key = normalize_for_match(entity)
        if any(key in normalize_for_match(o) or normalize_for_match(o) in key for o in out):
            continue
        out.append(entity)
        if len(out) >= limit:
            break
    return out


def bridge_queries(question: str, evidence: list[Evidence], limit: int = 3) -> list[SubQuery]:
    return [
        SubQuery(query=f"{entity} {question}", intent=f"follow the bridge entity {entity!r}")
        for entity in bridge_entities(question, evidence, limit=limit)
    ]


# ------------------------------------------------------------------------------------- with an LLM


class Plan(BaseModel):
    subqueries: list[SubQuery] = Field(min_length=1, max_length=5)


_EXAMPLES = [
    (
        "What is the default rate limit of the Aurora API?",
        [("Aurora API default rate limit", "the rate limit value")],
    ),
    (
        "标准版和企业版有什么区别？",
        [("标准版 价格 配额 速率 支持", "标准版的规格"), ("企业版 价格 配额 速率 支持", "企业版的规格")],
    ),
    (
        "Who leads the team that owns the service that caused incident INC-2291?",
        [
            ("INC-2291 root cause service", "which service caused INC-2291"),
            ("owner team of the service that caused INC-2291", "which team owns that service and who leads it"),
        ],
    ),
]

PLANNER_PROMPT = """You plan document searches for a question-answering assistant.
Write 1 to 5 short, self-contained search queries that together find everything needed to answer.
- A single-fact question needs one query (usually the question itself, without filler).
- A comparison needs one query per thing compared.
- A multi-hop question needs a query for the first fact; later hops are searched after it is found, so
  write the later hop with the unknown left as a description.
Each query gets an "intent": what it must establish. Reply with JSON only.

Examples:
""" + "\n".join(
    f"Q: {q}\n" + Plan(subqueries=[SubQuery(query=a, intent=b) for a, b in subs]).model_dump_json()
    for q, subs in _EXAMPLES
)


def llm_plan(
    question: str, llm: LLMClient, max_subqueries: int, timeout_s: float, meter: TokenMeter | None = None
) -> list[SubQuery] | None:
    """The LLM's plan, or None when it failed (the caller falls back to `rule_plan`)."""
    try:
        plan = llm.structured(
            [{"role": "system", "content": PLANNER_PROMPT}, {"role": "user", "content": f"Q: {question}"}],
            Plan,
            role="planner",
            timeout_s=timeout_s,
            meter=meter,
        )
    except LLMError:
        return None
    seen: set[str] = set()
    out: list[SubQuery] = []
    for sub in plan.subqueries:
        key = normalize_for_match(sub.query)
        if key and key not in seen:
            seen.add(key)
            out.append(sub)
    return out[:max_subqueries] or None
