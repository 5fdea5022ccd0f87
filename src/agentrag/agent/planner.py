"""The planner: turn a question into 1-5 focused sub-queries, each with the intent it serves.

Model-free, rules split comparisons ("A or B", "A 和 B 的区别"; the entities come from `compared`) into one
search per entity, and `bridge_queries` builds a second round for multi-hop questions from the entities that
the first round's best passages name but the question does not. With an LLM, the planner writes the
sub-queries itself (JSON, validated; on failure the rules take over).
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, Field

from agentrag.agent.chain import head_clause
from agentrag.agent.compared import QUOTED, SENTENCE_START, comparison_entities
from agentrag.agent.compared import predicate as compared_predicate
from agentrag.agent.question import QuestionAnalysis, analyze, split_parts
from agentrag.agent.roles import Decided, LLMCall, llm_or_rules
from agentrag.agent.units import FIELD_LINE
from agentrag.agent.values import POSSESSIVE
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.sentences import split_sentences
from agentrag.text.tokenize import has_cjk, tokenize_query
from agentrag.types import Evidence, SubQuery
from agentrag.vocab import LLMRole


def rule_plan(question: str, max_subqueries: int = 5) -> list[SubQuery]:
    parts = split_parts(question)
    if len(parts) > 1:  # several questions in one message: one search each, in their own words
        return [SubQuery(query=p, intent="answer this part of the question") for p in parts[:max_subqueries]]
    entities = comparison_entities(question)
    if len(entities) >= 2:
        predicate = compared_predicate(question, entities)
        return [
            SubQuery(query=f"{e} {predicate}".strip(), intent=f"what the question asks about {e}", about=e)
            for e in entities[:max_subqueries]
        ]
    return [SubQuery(query=question, intent="answer the question")]


# ------------------------------------------------------------------------------------- bridges

# A capitalised name: words or single-letter initials ("J. R. R. Tolkien"), joined by lower-case particles.
# A full stop ends a name unless it follows an initial, so "Lehmann. Bruce Willis" stays two names.
_NAME_WORD = r"(?:[A-Z]\.|[A-Z0-9][\w'’&-]*)"
# Spaces, not line breaks: a name never runs from one line of a timeline or header block into the next.
_PROPER_EN = re.compile(rf"{_NAME_WORD}(?:[ \t]+(?:of|the|de|la|von|van|der|for|&)?[ \t]*{_NAME_WORD})*")
_LETTER = re.compile(r"[^\W\d_]")
_CAPITALISED = re.compile(r"(?:(?<=[^\W\d_] )|(?<=[^\W\d_][,;)] ))[A-Z][\w'’&-]*")  # after a word
# Capitalised words that are rarely the next hop: demonyms, languages, weekdays, generic roles.
_NOT_BRIDGES = frozenset(
    "american british english french german italian spanish chinese japanese korean russian canadian "
    "australian indian irish scottish welsh dutch swedish norwegian danish finnish polish greek turkish "
    "mexican brazilian european african asian christian catholic jewish muslim roman latin western "
    "eastern northern southern monday tuesday wednesday thursday friday saturday sunday president king "
    "queen prince princess lord sir here".split()
)


_ADJECTIVE_ENDINGS = ("ian", "ean", "ese", "ish", "ic", "ical")
RELATION_WEIGHT = 2.0
ANCHOR_ONLY = 5  # best passages that, all from one document, say the first round never left the anchor's
# Time zones and clock words look like names and are never the next hop.
_NOT_NAMES = frozenset({"utc", "cst", "gmt", "pst", "est", "cet", "bst", "am", "pm"})


def _line_initial(sentence: str, at: int) -> bool:
    """No letter before `at` on its line: the word opens a sentence or a line ("14:45  Queue starts draining")."""
    return not _LETTER.search(sentence[:at].rsplit("\n", 1)[-1])


def capitalised_inside(texts: list[str]) -> frozenset[str]:
    """Words written capitalised somewhere other than at the start of a sentence or line: names, not words that
    are capitalised only because they open one ("Root cause confirmed", "Requests rejected because...")."""
    return frozenset(m.group(0).lower() for text in texts for m in _CAPITALISED.finditer(text))


def _name_candidates(sentence: str, names_inside: frozenset[str] | None = None) -> list[str]:
    found = [next(g for g in m.groups() if g).strip() for m in QUOTED.finditer(sentence)]
    if has_cjk(sentence):
        from agentrag.agent.pos import posseg  # numpy and the tag files: not at import

        found.extend(w.word for w in posseg().cut(sentence) if w.flag in ("nr", "ns", "nt", "nz") and len(w.word) >= 2)
    for m in _PROPER_EN.finditer(sentence):
        if sentence[m.end() : m.end() + 3].lstrip().startswith((":", "：")):
            continue  # a field label ("Severity: SEV-2"), not a name
        # "Kestrel's settings" names Kestrel.
        words = POSSESSIVE.sub("", m.group(0)).strip(" '’-").split()
        while words and words[0].lower() in SENTENCE_START | _NOT_BRIDGES:
            words = words[1:]
        while words and words[-1].lower() in _NOT_BRIDGES:
            words = words[:-1]
        phrase = " ".join(words)
        if (
            names_inside is not None
            and words
            and all(w[0].isdigit() for w in words[1:])
            and _line_initial(sentence, m.start())
            and words[0].lower() not in names_inside
        ):
            continue  # a word that only ever opens a sentence is an ordinary word, and so with a number after it
            # ("Release 2025.02.26-1 replaced ...")
        if len(phrase) < 3 or phrase[0].isdigit() or phrase.lower() in _NOT_NAMES:
            continue  # dates, years, numbers: not a page to look up
        if len(words) == 1 and phrase.lower().endswith(_ADJECTIVE_ENDINGS):
            continue  # "Bulgarian", "Portuguese": describes, does not name
        found.append(phrase)
    return found


def _statements(text: str) -> list[str]:
    """Sentences, with each "Field: value" line of a header block apart: a record's fields are separate
    statements, so the one field naming the anchor ("Incident: INC-2291") does not lend its words to the names
    in every other field ("Severity: SEV-2", "Status: Resolved")."""
    out: list[str] = []
    for sentence in split_sentences(text) or [text]:
        lines = sentence.split("\n")
        if not any(FIELD_LINE.match(line) for line in lines):
            out.append(sentence)
            continue
        prose: list[str] = []
        for line in lines:
            if FIELD_LINE.match(line):
                out.extend(["\n".join(prose), line] if prose else [line])
                prose = []
            else:
                prose.append(line)
        if prose:
            out.append("\n".join(prose))
    return out


def _content(text: str) -> set[str]:
    return set(tokenize_query(text))


def bridge_entities(
    question: str,
    evidence: list[Evidence],
    top_passages: int = 3,
    limit: int = 3,
    analysis: QuestionAnalysis | None = None,
) -> list[str]:
    """Entities the best passages name but the question does not: the likely next hop.

    A name scores more when its passage ranks higher and when the sentence it sits in shares more of the
    question's words ("Tkachuk was the former CEO of Viglen" for "the former CEO of which company").
    Names of a passage's own subject (its title) and names the question already holds are skipped; `analysis`
    is the question's, when the caller has it.
    """
    asked = normalize_for_match(question)
    wanted = _content(question)
    # The words that relate (caused, owns, leads) count more than the names the question is anchored on: the
    # next hop sits in the sentence that says how the anchor relates to it, not in any sentence naming it.
    anchor = {t for c in (analysis or analyze(question)).constraints for t in _content(c.text)} & wanted
    weight = {t: 1.0 if t in anchor else RELATION_WEIGHT for t in wanted}
    total = math.fsum(weight.values()) or 1.0
    scores: dict[str, float] = {}
    names_inside = capitalised_inside([item.chunk.text for item in evidence])
    for rank, item in enumerate(evidence[:top_passages], start=1):
        title_words = {w for w in _content(item.chunk.title) if len(w) > 3}
        seen_here: set[str] = set()
        for sentence in _statements(item.chunk.text):
            overlap = math.fsum(weight[t] for t in wanted & _content(sentence)) / total  # any hash seed: same bits
            if overlap == 0.0 and FIELD_LINE.match(sentence):
                continue  # a record's field the question does not ask about ("Severity: SEV-2", "Status: Resolved")
            for entity in _name_candidates(sentence, names_inside):
                key = normalize_for_match(entity)
                if not key or key in asked or key in seen_here or (asked and asked in key):
                    continue
                if title_words & _content(entity):
                    continue  # the passage's own subject, under another name ("Casey Austin Keenum")
                seen_here.add(key)
                scores[entity] = scores.get(entity, 0.0) + (0.25 + overlap) / rank
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
    """One search per bridge entity: the entity, plus what the question asks of it."""
    first_hop = evidence[0].chunk.title if evidence else ""
    predicate = re.sub(rf"{re.escape(first_hop)}(?:['’]s?)?", " ", question) if first_hop else question  # and 's
    predicate = " ".join(predicate.split())
    analysis = analyze(question)
    entities = bridge_entities(question, evidence, limit=limit, analysis=analysis)
    queries = [
        SubQuery(query=f"{entity} {predicate}", intent=f"follow the bridge entity {entity!r}", bridge=entity)
        for entity in entities
    ]
    parts = analysis.parts
    if entities and len(parts) == 1 and parts[0].nested and len({e.chunk.doc_id for e in evidence[:ANCHOR_ONLY]}) == 1:
        # All from the anchor's document: its words ("that caused INC-2291") would pull the next hop's search back
        # there, so the best entity is also searched with only what is asked of it ("Kestrel Who owns the service").
        head = head_clause(parts[0])
        if head != question:
            queries.insert(
                1, SubQuery(query=f"{entities[0]} {head}", intent="leave the anchor's document", bridge=entities[0])
            )
    return queries


# ------------------------------------------------------------------------------------- with an LLM


class PlannedQuery(BaseModel):
    query: str
    intent: str = ""


class PlanReply(BaseModel):
    subqueries: list[PlannedQuery] = Field(min_length=1, max_length=5)


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
    f"Q: {q}\n" + PlanReply(subqueries=[PlannedQuery(query=a, intent=b) for a, b in subs]).model_dump_json()
    for q, subs in _EXAMPLES
)


def plan(question: str, call: LLMCall | None, max_subqueries: int) -> Decided[list[SubQuery]]:
    """The LLM's plan when one may be called and it gives one; the rules' plan otherwise."""
    return llm_or_rules(
        call, lambda c: _llm_plan(question, c, max_subqueries), lambda: rule_plan(question, max_subqueries)
    )


def _llm_plan(question: str, call: LLMCall, max_subqueries: int) -> list[SubQuery]:
    plan = call.structured(LLMRole.PLANNER, PLANNER_PROMPT, f"Q: {question}", PlanReply)
    seen: set[str] = set()
    out: list[SubQuery] = []
    for sub in plan.subqueries:
        key = normalize_for_match(sub.query)
        if key and key not in seen:
            seen.add(key)
            out.append(SubQuery(query=sub.query, intent=sub.intent))
    return out[:max_subqueries]
