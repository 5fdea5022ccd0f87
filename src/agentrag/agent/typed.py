"""Typed answers, model-free: whether a unit holds a value of the kind a question part asks for, and the answer in
a few words from it: the value of the expected type nearest to the target words, the span that fills the
question's gap ("由 ___ 合作开发"), a table row's cell, a definition.
"""

from __future__ import annotations

import re

from agentrag.agent import en_spans
from agentrag.agent.definition import defined
from agentrag.agent.gap import answer_clause, slot_span
from agentrag.agent.kind import CONTAINERS, asked_head
from agentrag.agent.question import ASKS_MEASURE, QUALIFIERS, QuestionPart
from agentrag.agent.units import Unit, unit_tokens
from agentrag.agent.value_choice import bounded, numbers, written_example
from agentrag.agent.values import POSSESSIVE, YEAR, Value, looks_like_person, measures, values
from agentrag.agent.zh_values import asked_unit, counted, whole_slot
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk, tokenize_query
from agentrag.vocab import AnswerType

# Types whose answer is a value a unit can hold; the others (list, steps, reason) are answered by sentences.
VALUE_TYPES = frozenset(
    {
        AnswerType.NUMBER,
        AnswerType.DURATION,
        AnswerType.LEVEL,
        AnswerType.DATE,
        AnswerType.PERSON,
        AnswerType.PLACE,
        AnswerType.ENTITY,
    }
)
_CHANGE = re.compile(
    r"由\s*[^，。；]{1,20}?\s*(?:缩短|延长|上调|下调|提高|降低|增加|减少|调整|改|变更|放宽|收紧)(?:为|至|到)\s*(?P<new>\S)|"
    r"\bfrom\s+\S[^,;.]{0,30}?\s+to\s+(?P<new_en>\S)",
    re.I,
)
ASKS_YEAR = re.compile(r"\b(what|which) year\b|哪一?年", re.I)
_YEAR = re.compile(rf"{YEAR.pattern}(?:\s?年)?")  # with 年 where the text has it: "1994年"
# A short answer is at most this long. Past it, it is cut where a clause ends, or there is none; never mid-word: "…
# Kestrel wit…" was a fragment, and the full stop after its ellipsis came back as a sentence of its own, unverified.
_SHORT_MAX = 80
_CLAUSE_BREAK = re.compile(r"\s*(?:[:;,]\s|\s[—–]\s|[：；，、])")
_CLAUSE_MIN = 12  # a head shorter than this says too little ("Note: …")
_BRACKET_PAIRS = tuple(zip("(（[【《「『“", ")）]】》」』”", strict=True))


# ------------------------------------------------------------------------------------------ typed answers


def holds_answer(part: QuestionPart, unit: Unit) -> bool:
    kind = part.answer_type
    if kind == AnswerType.DEFINITION:
        return defined(part, unit) is not None
    if kind == AnswerType.ENTITY and has_cjk(part.text):
        # "X 的 Y 是什么" asks for a phrase more often than a name: a unit answers when it fills the gap.
        return slot_span(part.text, unit.text) is not None
    if kind in VALUE_TYPES:
        return bool(_candidates(part, unit))
    return False


def asked(part: QuestionPart, value: str) -> bool:
    """A value the question itself states ("2025-03-14 的周会…"), or the thing a side of it is about, is not its
    answer."""
    key = normalize_for_match(POSSESSIVE.sub("", value))
    stated = [part.text, *(c.text for c in part.constraints if c.kind in ("name", "quoted"))]
    if key.isdigit():  # a number is stated as a number: "30 seconds" is not in "Aurora 3.0", nor "20" in "2020"
        written = numbers(value)
        return any(written <= numbers(text) for text in stated)
    if bool(key) and any(key in normalize_for_match(text) for text in stated):
        return True
    # The words of what is asked, in another order: "the Leader of Opposition" for "the current opposition leader"
    # (but "Oklahoma City" answers "which city in Oklahoma": a constraint's word is no restatement).
    words = set(tokenize_query(value)) if not has_cjk(value) else set()
    return bool(words) and words <= set(part.target_tokens)


_HONORIFIC = re.compile(r"\b(?:Hon|Mr|Mrs|Ms|Dr|Prof|Rev|Sen|Rep|Gov|Gen|Capt|Lt|Col|Sgt|Sir|Dame)\.?\s+$")


def _candidates(part: QuestionPart, unit: Unit) -> list[Value]:
    kind = part.answer_type if part.answer_type in VALUE_TYPES else AnswerType.ENTITY
    if written_example(unit.text):  # an example request's `"page_size": 50` is an example, not what the API allows
        return []
    found = [_without_asked_head(part, v) for v in values(unit.text, kind, counts=_asks_how_many(part))]
    found = [v for v in found if not asked(part, v.text)]
    if not has_cjk(part.text):  # "named after Ewing’s nickname, “Judy”": the owner is not what is asked
        found = [v for v in found if not POSSESSIVE.search(v.text)] or found
    if kind == AnswerType.PERSON:  # "Desmond Tutu" over "Africa's" and "American" in the same sentence
        found = [v for v in found if looks_like_person(v.text)] or found
        # "is Hon. Winnie Kiiza": a title before a name says it is someone's, unlike "the Shadow Cabinet".
        found = [v for v in found if _HONORIFIC.search(unit.text, 0, v.start)] or found
    elif kind == AnswerType.ENTITY and not has_cjk(part.text):
        # "held at what sports complex": a name (the StubHub Center), not the date in the same sentence.
        named = [v for v in values(unit.text, AnswerType.PLACE) if len(v.text) >= 3 and not asked(part, v.text)]
        keep = {(v.start, v.end) for v in named}
        found = [v for v in found if (v.start, v.end) in keep] or found
    if kind in (AnswerType.ENTITY, AnswerType.PLACE) and (head := asked_head(part.text)) and not has_cjk(part.text):
        # "in what Nevada county": a name that says it is one (Clark County), over a town or an acronym beside it.
        found = _naming_head(found, unit.text, head) or found
    if kind == AnswerType.DATE and ASKS_YEAR.search(part.text):  # "in what year": 1954, not "December 17, 1954"
        found = [
            Value(m.group(0), v.start + m.start(), v.start + m.end()) for v in found if (m := _YEAR.search(v.text))
        ]
    if kind in (AnswerType.NUMBER, AnswerType.ENTITY) and any(c.kind == "version" for c in part.constraints):
        # "the largest page in Aurora 3.0": the versions a text names ("2.3.0 — filters", "Aurora 2.3 now has") are
        # what such a question is qualified by, not its answer
        found = [v for v in found if not QUALIFIERS["version"].fullmatch(v.text)]
    if kind == AnswerType.NUMBER and ASKS_MEASURE.search(part.text):  # "how long is the shift": not a bare "128"
        found = measures(found, unit.text)
    if _asks_how_many(part):
        # "how many records ... sell": a year is no count ("it was not until 1980 that his success began")
        found = [v for v in found if not YEAR.fullmatch(v.text)]
    if kind == AnswerType.NUMBER and has_cjk(part.text) and (asked_in := asked_unit(part.text)) is not None:
        # "全长多少公里": the number in kilometres, with its unit; a sentence with numbers in none is no answer
        found = [v for v in counted(unit.text, *asked_in) if not asked(part, v.text)]
    if kind in (AnswerType.NUMBER, AnswerType.DURATION):
        found = bounded(part.text, unit.text, found)
    change = _CHANGE.search(unit.text)
    if change is not None:  # "由 60 天缩短为 30 天", "raised from 450 to 500": the value now is the second
        at = change.start("new") if change.group("new") else change.start("new_en")
        found = [v for v in found if v.start >= at] or found
    if unit.kind == "row":
        cells = [v for _, v in _answer_cells(part, unit)]
        found = [v for v in found if any(v.text in cell for cell in cells)]
        if kind == AnswerType.ENTITY:
            found = found or [Value(v, 0, 0) for v in cells if v]
    return found


def _naming_head(found: list[Value], text: str, head: str) -> list[Value]:
    """The candidates that say they are of the asked kind: "Clark County", or a place followed by its kind in lower
    case, which then belongs to the answer ("Finnmark county"; not "the Nationalist Party members")."""
    ends = re.compile(rf"\b{re.escape(head)}s?$", re.I)
    after = re.compile(rf"\s+{re.escape(head)}s?\b", re.I)
    out = []
    for v in found:
        if ends.search(v.text):
            out.append(v)
        elif head.lower() in CONTAINERS and (m := after.match(text, v.end)) is not None:
            out.append(Value(text[v.start : m.end()], v.start, m.end()))
    return out


_OF_NAME = re.compile(r"^(?P<head>.+?)\s+of\s+(?P<name>[A-Z].*)$")


def _without_asked_head(part: QuestionPart, value: Value) -> Value:
    """ "the former CEO of Viglen" for "the former CEO of which company": the name after the question's own words
    ("CEO of"), not the run of capitalised words that starts with them."""
    m = _OF_NAME.match(value.text)
    if m is None or has_cjk(part.text):
        return value
    head = set(tokenize_query(m.group("head")))
    if not head <= set(tokenize_query(part.text)) or head & set(tokenize_query(asked_head(part.text) or "")):
        return value  # "City of Onkaparinga" for "what major city": the kind asked for is part of the name
    return Value(m.group("name"), value.start + m.start("name"), value.end)


def _answer_cells(part: QuestionPart, unit: Unit) -> list[tuple[str, str]]:
    """The cells of a table row that can hold the answer: those under a header naming the target, else every
    value cell when the row's own key names a constraint or the target (the SEV-2 row) or its table's caption
    names the target, else none: a row that only mentions the target in a cell ("Meaning: Indexing quota
    exceeded") does not give its value in another column ("HTTP: 429")."""
    wanted = set(part.target_tokens)
    names = [normalize_for_match(c.text) for c in part.constraints if c.kind == "name"]
    if any(
        wanted & unit_tokens(h) and any(n and n in normalize_for_match(v) for n in names) for h, v in unit.cells[1:]
    ):
        # The thing asked about stands under the header of what is asked ("Owns: Kestrel" for "who owns
        # Kestrel"): the row's key says who or what has it ("Team: Data Platform").
        return list(unit.cells[:1])
    cells = [(h, v) for h, v in unit.cells[1:] if v.strip() and not asked(part, v)]  # an empty cell holds nothing
    named = [(h, v) for h, v in cells if wanted & unit_tokens(h)]
    if named:
        return named
    key = unit_tokens(unit.first_cell)
    in_cells = frozenset().union(*(unit_tokens(h) | unit_tokens(v) for h, v in unit.cells))
    caption = unit.tokens - in_cells  # the table's caption: "住宿费按城市类别和职级设上限" above its rows
    keyed = any(set(unit_tokens(c.text)) & key for c in part.constraints) or bool(wanted & (key | caption))
    return cells if keyed else []


def _near(candidates: list[Value], text: str, anchors: list[str]) -> Value:
    """The candidate closest to where the target words occur in the text."""
    spots = [m.start() for a in anchors if a for m in re.finditer(re.escape(a), text, re.I)]
    if not spots:
        return candidates[0]
    return min(candidates, key=lambda v: min(abs(v.start - s) for s in spots))


def _labelled(part: QuestionPart, text: str, candidates: list[Value]) -> Value | None:
    """The value a label made of the question's own words introduces ("a fixed end-of-support date: 30 September
    2025" for "When does Aurora 2.3 reach end of support?"), beside another value of the kind ("Update, 21 March
    2025: …"): the label says which value is asked for."""
    if len(candidates) < 2:
        return None
    wanted = set(part.target_tokens)
    for value in candidates:
        before = text[: value.start].rstrip()
        if not before.endswith(":"):
            continue
        label = re.split(r"[:;,.!?]", before[:-1])[-1]
        if len(wanted & set(tokenize_query(label))) >= 2:
            return value
    return None


def _qualified(part: QuestionPart, text: str, candidates: list[Value]) -> Value | None:
    """The value the question's version or date qualifies, where the text gives one value per version or date: "the
    clause limit — 64 in version 2.3, 128 in version 3.0 —" gives 128 for "the clause limit in Aurora 3.0" and 64 for
    2.3. Each version the text names owns the values between it and the one before (when a value comes first, as
    there) or the one after ("in 2.3: 64; in 3.0: 128"); None unless the text also names another version."""
    for constraint in part.constraints:
        pattern = QUALIFIERS.get(constraint.kind)
        if pattern is None:
            continue
        named = [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(text)]
        if constraint.text not in {written for *_, written in named} or len({w for *_, w in named}) < 2:
            continue
        kept = [v for v in candidates if not any(start <= v.start < end for start, end, _ in named)]
        if not kept:
            continue
        bounds = [0, *(start for start, *_ in named), len(text)]
        first_value_first = kept[0].start < named[0][0]
        for i, (start, end, written) in enumerate(named):
            if written != constraint.text:
                continue
            if first_value_first:  # the values before it, back to the version before
                owned = [v for v in kept if bounds[i] <= v.start < start]
                if owned:
                    return owned[-1]
            else:  # the values after it, up to the version after
                owned = [v for v in kept if end <= v.start < bounds[i + 2]]
                if owned:
                    return owned[0]
    return None


def _asks_how_many(part: QuestionPart) -> bool:
    """A count is asked for: the only question a count written as a word answers ("merges two lists" gives no
    maximum or price)."""
    return part.answer_type == AnswerType.NUMBER and en_spans.HOW_MANY.search(part.text) is not None


def _row_value(part: QuestionPart, unit: Unit) -> str | None:
    """In a table row, the first cell that can hold the answer and holds a value of the asked type."""
    kind = part.answer_type if part.answer_type in VALUE_TYPES else AnswerType.ENTITY
    for _, value in _answer_cells(part, unit):
        if kind == AnswerType.ENTITY or values(value, kind, counts=_asks_how_many(part)):
            return value
    return None


def short_answer(part: QuestionPart, unit: Unit) -> str | None:
    """The answer in a few words, from the unit; None when the type has no short form or nothing fits."""
    found = _short(part, unit)
    return found if found is None or has_cjk(part.text) else _phrase(found)


def _short(part: QuestionPart, unit: Unit) -> str | None:
    kind = part.answer_type
    if kind == AnswerType.DEFINITION:
        found = defined(part, unit)
        return _clip(found) if found else None
    if kind not in VALUE_TYPES:
        return _clause(part, unit) if has_cjk(part.text) else None
    if unit.kind == "row":
        # A cell or nothing: words around a cell ("Meaning: Indexing") are no answer.
        cell = _row_value(part, unit)
        year = _YEAR.search(cell) if cell and kind == AnswerType.DATE and ASKS_YEAR.search(part.text) else None
        return year.group(0) if year else cell
    if kind == AnswerType.ENTITY and has_cjk(part.text):
        return _clause(part, unit)  # the words filling the gap, not a name that happens to stand in them
    if not has_cjk(part.text) and (spelled := _cloze(part, unit) or _english_span(part, unit)) is not None:
        return spelled
    candidates = _candidates(part, unit)
    if not has_cjk(part.text) and (labelled := _labelled(part, unit.text, candidates)) is not None:
        return labelled.text
    if (qualified := _qualified(part, unit.text, candidates)) is not None:
        return qualified.text
    slot = slot_span(part.text, unit.text)
    if slot is not None:
        inside = [v for v in candidates if v.text in slot]
        if inside and whole_slot(part, slot, inside):
            return slot
        if inside:
            return inside[0].text
        if not candidates and kind not in (AnswerType.PERSON, AnswerType.PLACE):
            # A person or a place is a name: words in the gap that name no one are not the answer; and a name
            # elsewhere in the sentence beats words in the gap that hold none ("held on July 21 at the StubHub Center").
            if has_cjk(part.text):  # a Chinese slot (slot_span reads a Chinese question's gap in Chinese only)
                return slot
            return slot if kind == AnswerType.ENTITY else None  # English: a count or a date holds a value
    if not candidates:
        return None
    if not has_cjk(part.text) and kind in (AnswerType.ENTITY, AnswerType.PERSON, AnswerType.PLACE):
        head = asked_head(part.asked_as)
        # "in what Nevada county" against "at the Venetian Hotel at Paradise, Nevada": no name here is a county, so
        # the place nearest what the question says of it (Nevada) leads on to it (Paradise's page names its county).
        within = head in CONTAINERS and not any(re.search(rf"\b{head}s?$", v.text, re.I) for v in candidates)
        if not within:
            return en_spans.pick(part, unit.text, candidates).text
    return _near(candidates, unit.text, [*part.target_tokens, *(c.text for c in part.constraints)]).text


# Words that neither open nor close an English phrase: "is the fourteenth episode of", "Borodino is a".
_NOT_OPENING = frozenset("is was are were has had have and or of to in by for with as that which".split())
_NOT_CLOSING = _NOT_OPENING | frozenset("a an the".split())


def _phrase(span: str) -> str | None:
    """The span without the function words it starts or ends with; None when nothing else is left."""
    words = span.split()  # lower case only: "In the Loop" and "Where the Wild Things Are" are titles
    while words and words[0] in _NOT_OPENING:
        words.pop(0)
    while words and words[-1] in _NOT_CLOSING:
        words.pop()
    return " ".join(words) or None


# A question that ends with its question word: "... a series of mysterious killings and what?".
_ENDS_ASKING = re.compile(r"(?P<lead>(?:[\w'’!-]+\s+){1,2})(?:what|whom|who)\s*\??\s*$", re.I)
CLOZE_WORDS = 6  # the most words a phrase completing a question is given


def _cloze(part: QuestionPart, unit: Unit) -> str | None:
    """What completes a question that ends with its question word, where the sentence has the question's last two
    words together: "killings and illnesses" completes "... mysterious killings and what?"."""
    m = _ENDS_ASKING.search(part.asked_as)
    if m is None or len(m.group("lead").split()) < 2:
        return None
    lead = r"\s+".join(re.escape(w) for w in m.group("lead").split())
    found = re.search(rf"(?<![\w-]){lead}\s+(?P<rest>[^,;:.()\[\]]+)", unit.text, re.I)
    if found is None:
        return None
    rest = re.split(r"\s(?:and|or|but|which|who|that|when|while|where|after|before|because)\s", found.group("rest"))[0]
    phrase = _phrase(" ".join(rest.split()[:CLOZE_WORDS]).strip("\"“”'"))
    if phrase is None or (part.answer_type == AnswerType.PERSON and not phrase[:1].isupper()):
        return None
    return phrase if not asked(part, phrase) else None


def _english_span(part: QuestionPart, unit: Unit) -> str | None:
    """What the sentence's words say directly: the count of the thing asked for, the name after the kind asked
    for, the word sorting the kind asked for (en_spans)."""
    kind = part.answer_type
    if kind == AnswerType.NUMBER:
        found = en_spans.counted(part, unit.text)
    elif kind == AnswerType.ENTITY and en_spans.ASKS_NATIONALITY.search(part.asked_as):
        found = en_spans.demonym(unit.text)
    elif kind in (AnswerType.ENTITY, AnswerType.PERSON, AnswerType.PLACE):
        found = en_spans.kind_named(part, unit.text)
        if found is None and kind == AnswerType.ENTITY:
            found = en_spans.sort_word(part, unit.text)
    else:
        found = None
    return found if found and not asked(part, found) else None


def _clause(part: QuestionPart, unit: Unit) -> str | None:
    found = answer_clause(part, unit.text)
    return _clip(found) if found else None


def in_gap(part: QuestionPart, unit: Unit) -> bool:
    """The unit holds a value of the expected type inside the span that fills the question's gap."""
    slot = slot_span(part.text, unit.text)
    if slot is None:
        return False
    if part.answer_type not in VALUE_TYPES:
        return True
    return any(v.text in slot or slot in v.text for v in _candidates(part, unit))


def _clip(text: str, limit: int = _SHORT_MAX) -> str | None:
    """The text, or past `limit` characters its longest head that ends at a clause break ("Indexing backend
    unavailable" of "Indexing backend unavailable: freshness could not be confirmed…"); with no break after
    `_CLAUSE_MIN` characters, the text whole up to twice `limit`, else None (no short form: the answer shows the
    sentence whole)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    # Not inside brackets: "「两级传播」理论（two-step flow of communication" would leave one open.
    breaks = [m.start() for m in _CLAUSE_BREAK.finditer(text, _CLAUSE_MIN, limit) if _balanced(text[: m.start()])]
    if breaks:
        return text[: breaks[-1]]
    return text if len(text) <= 2 * limit else None


def _balanced(text: str) -> bool:
    return all(text.count(a) == text.count(b) for a, b in _BRACKET_PAIRS)
