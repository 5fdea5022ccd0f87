"""Typed values in text: numbers and amounts with their units, durations, dates and times, names.

The extractive synthesizer looks for a value of the type a question asks for in the passages it selects
(question.py says which type), and gives it as the short answer. Each finder returns spans of the text it
was given, in order, so the nearest value to the words the question asked about can be chosen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from agentrag.text.tokenize import CJK_RANGES, has_cjk, segment
from agentrag.vocab import AnswerType

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_ZH_NUM = r"[零一二两三四五六七八九十百千万亿]+"
_EN_NUM_WORDS = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    r"sixty|hundred|a hundred|a thousand|dozen)"
)
_TIME_UNITS_EN = r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|business days?|working days?)"
# No bare 月/日 (3 月 is March, not three months) and no year after four digits (2025 年 is a date).
_TIME_UNITS_ZH = r"(?:秒钟?|分钟|小时|个?工作日|天|周|个?星期|个月|年)"
_YEAR_OF = re.compile(r"^\d{4}\s?年")  # "2025 年" is a date, not a duration
YEAR = re.compile(r"(?<!\d)(1[0-9]\d\d|20\d\d)(?!\d)")  # a year in a text: 1000-2099
POSSESSIVE = re.compile(r"['’]s$")  # "Kestrel's", "Ewing’s": names their owner
_UNITS_EN = (
    r"(?:%|percent|per cent|km|kilometres?|kilometers?|miles?|m|metres?|meters?|kg|GB|TB|MB|KB|ms|"
    r"requests?|documents?|people|persons|employees|members|seats|copies|episodes|games|goals|points|votes|"
    r"stores|students|times|clauses|results|indexes|million|billion|thousand)"
)
_UNITS_ZH = (
    r"(?:%|元|美元|万元|亿元|万|亿|千|个|次|条|人|名|位|家|座|所|部|集|场|届|倍|种|类|项|件|只|头|艘|架|辆|层|号|"
    r"平方公里|公里|千米|公尺|英尺|英里|海里|米|厘米|毫米|吨|公斤|千克|克|GB|TB|MB)"
)
_CURRENCY = r"(?:[¥$€£]|RMB\s?|US\$)"
# Digits inside an identifier are not an amount: E1029, AI-6, INC-2291, v2 (but RMB3000 keeps its currency).
_NOT_IN_CODE = r"(?<![0-9A-Za-z_.,])(?<![A-Za-z]-)"

_DURATION = re.compile(
    rf"(?:{_NUM}|{_EN_NUM_WORDS})(?:\s?(?:to|-|–)\s?(?:{_NUM}|{_EN_NUM_WORDS}))?\s?{_TIME_UNITS_EN}\b|"
    rf"(?:{_NUM}|{_ZH_NUM})\s?{_TIME_UNITS_ZH}(?:内|以内|之内|后)?",
    re.I,
)
_AMOUNT = re.compile(
    rf"(?:{_CURRENCY}|{_NOT_IN_CODE}){_NUM}(?:\s?(?:至|到|~|～|-|–)\s?{_NUM})?\s?(?:{_UNITS_ZH}(?:/[{CJK_RANGES}]{{1,2}})?|{_UNITS_EN}\b(?:\s(?:per|a|an)\s\w+)?)?|"
    rf"{_ZH_NUM}(?:万|亿|元|万元|亿元|公里|千米|米|倍|岁)|(?!一[种个次类项位名座家届条部集场])"
    rf"{_ZH_NUM}(?:种|个|次|类|项|位|名|座|家|届|条|部|集|场)",
    re.I,
)
_LEVEL = re.compile(r"(?<![\w-])(?:SEV|Sev|P|L|Level|Tier|S)[- ]?\d\b|[一二三四五六七八九十\d]+\s?级")
_MONTHS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
)
_WEEKDAYS = (
    r"(?:Mondays?|Tuesdays?|Wednesdays?|Thursdays?|Fridays?|Saturdays?|Sundays?|"
    r"周[一二三四五六日天]|星期[一二三四五六日天])"
)
_CLOCK = r"\d{1,2}:\d{2}"
_CLOCK_TIME = re.compile(rf"(?<![\d:]){_CLOCK}(?::\d{{2}})?(?![\d:])")
# A count written as a word, on its own ("need two"), not the start of a name or a phrase ("One Direction", "one of"),
# nor things already named ("merges the two lists"); a value only where `values` is asked for counts ("how many").
_COUNT_WORD = re.compile(
    r"(?<![\w-])(?<!the )(?<!these )(?<!those )(?<!its )(?<!their )"
    r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    r"hundred|thousand|dozen)(?![\w-])(?!\s+of\b)"
)
_DATE = re.compile(
    rf"\d{{4}}-\d{{1,2}}-\d{{1,2}}|"
    rf"\d{{4}}\s?年\s?\d{{1,2}}\s?月(?:\s?\d{{1,2}}\s?日)?|\d{{1,2}}\s?月\s?\d{{1,2}}\s?日|\d{{4}}\s?年|"
    rf"(?:\d{{1,2}}\s)?{_MONTHS}(?:\s\d{{1,2}})?,?\s\d{{4}}|{_MONTHS}\s\d{{1,2}}(?:st|nd|rd|th)?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s(?:of\s)?{_MONTHS}(?![\w-])|"  # "21 June", "the 3rd of May" (no year)
    # a time of day: "at noon", "at 9 a.m."
    r"(?<=\bat\s)(?:noon|midnight|dawn|dusk|sunrise|sunset|\d{1,2}(?::\d{2})?\s?(?:[ap]m|[ap]\.m\.))(?!\w)|"
    rf"{_WEEKDAYS}(?:\s?(?:between|from|at)?\s?{_CLOCK}(?:\s?(?:and|to|-|–|—|至|到)\s?{_CLOCK})?)?|"
    rf"{_CLOCK}\s?(?:-|–|—|至|到|to)\s?{_CLOCK}|"
    rf"(?<!\d)(?:1[5-9]|20)\d\d(?!\d)",
    re.I,
)
_NAME_WORD = r"(?:(?:[A-Z]\.)+|[A-Z][\w'’&-]*)"  # "U.S." is one word, not two names
_CALENDAR_WORD = re.compile(rf"{_MONTHS}|{_WEEKDAYS}")
# A quoted nickname inside a name stays in it: Samuel Joel "Zero" Mostel.
_EN_NAME = re.compile(
    rf"{_NAME_WORD}(?:\s+(?:of|the|de|la|von|van|der|du|da|y|&)?\s*{_NAME_WORD}|\s+[\"“]{_NAME_WORD}[\"”](?=\s+[A-Z]))*"
)
_TEAM_EN = re.compile(r"(?:the\s)?(?:[A-Z][\w&-]*\s){1,3}(?:team|group|department|division|committee)\b")
_TEAM_ZH = re.compile(rf"[{CJK_RANGES}A-Za-z]{{2,8}}(?:组|团队|部门|部|委员会|小组)")
_NOT_IN_NAME = "的是在于和与及等将即曾也为被所从对创任说由"  # particles and verbs that end or precede a name
_ZH_DOTTED = re.compile(rf"[{CJK_RANGES}]{{1,6}}(?:[·・•][{CJK_RANGES}]{{1,8}})+")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]|《([^》]{1,40})》|「([^」]{1,40})」")
# A one-word people or language name ("Bahamian", "American", "Japanese") standing before a lowercase noun.
_DEMONYM = re.compile(r"[A-Z][a-z]+(?:ian|ean|ican|ese|ish|ic)")
_LOWER_NEXT = re.compile(r"\s+[a-z]")
_PRONOUNS = frozenset("i you we he she it they me us him her them".split())
_STARTS = frozenset(
    "the a an in on at of for to and but or it this that these he she they his her its with from by after before "
    "during as since while when although though however upon under over into among between".split()
)


@dataclass(frozen=True, slots=True)
class Value:
    text: str
    start: int
    end: int


def _spans(pattern: re.Pattern[str], text: str) -> list[Value]:
    return [Value(m.group(0).strip(), m.start(), m.end()) for m in pattern.finditer(text) if m.group(0).strip()]


@lru_cache(maxsize=4096)
def _zh_names(text: str, flags: frozenset[str]) -> tuple[Value, ...]:
    """Chinese names by part of speech (jieba): nr person, ns place, nt organisation, nz other proper noun."""
    from agentrag.agent.pos import posseg  # numpy and the tag files: not at import

    out: list[Value] = []
    pos = 0
    for word in posseg().cut(text, HMM=False):  # the HMM guesses unknown words at many times the cost
        start = text.find(word.word, pos)
        if start < 0:
            continue
        pos = start + len(word.word)
        if word.flag in flags and len(word.word) >= 2:
            out.append(Value(word.word, start, pos))
    return tuple(out)


def _dotted_names(text: str) -> list[Value]:
    """Transliterated names joined by a middle dot; the part before the first dot starts at its last word, so
    "比利时人欧内斯特·索尔维" gives "欧内斯特·索尔维"."""
    out: list[Value] = []
    for m in _ZH_DOTTED.finditer(text):
        parts = re.split(r"[·・•]", m.group(0))
        first = segment(parts[0], hmm=False)[-1].lstrip(_NOT_IN_NAME)
        last = re.split(f"[{_NOT_IN_NAME}]", parts[-1], maxsplit=1)[0]
        start = m.start() + len(parts[0]) - len(first)
        end = m.end() - len(parts[-1]) + len(last)
        if first and last:
            out.append(Value(text[start:end], start, end))
    return out


# Adverbs that open sentences: "Originally editor of Mayfair ..." (a list: Italy, Kelly and Beverly end in -ly too).
_OPENING_ADVERB = re.compile(
    r"(?:Originally|Currently|Eventually|Recently|Previously|Subsequently|Initially|Finally|Additionally|Formerly|"
    r"Historically|Traditionally|Officially|Generally|Usually|Typically|Notably|Primarily|Mostly|Largely|Shortly|"
    r"Ultimately|Consequently|Similarly|Likewise|Meanwhile|Nevertheless|Furthermore|Moreover),?"
)


def names(text: str, kind: AnswerType = AnswerType.ENTITY) -> list[Value]:
    """Capitalised names (English), jieba proper nouns (Chinese), team names and quoted titles."""
    found = [Value(next(g for g in m.groups() if g), m.start(), m.end()) for m in _QUOTED.finditer(text)]
    if kind == AnswerType.PERSON:
        found += _spans(_TEAM_EN, text) + _spans(_TEAM_ZH, text)
    if has_cjk(text):
        flags = {AnswerType.PERSON: {"nr", "nt"}, AnswerType.PLACE: {"ns"}}.get(kind, {"nr", "ns", "nt", "nz"})
        chinese = list(_zh_names(text, frozenset(flags)))
        if kind != AnswerType.PLACE:  # "欧内斯特·索尔维": a transliterated name, which jieba cuts at the dot
            dotted = _dotted_names(text)
            spans = [(v.start, v.end) for v in dotted]
            chinese = dotted + [v for v in chinese if not any(a <= v.start < b for a, b in spans)]
        if chinese and kind in (AnswerType.PERSON, AnswerType.PLACE):
            return sorted(found + chinese, key=lambda v: (v.start, -len(v.text)))  # Latin names: a fallback
        found += chinese
    for m in _EN_NAME.finditer(text):
        pieces = [(w.group(0), m.start() + w.start(), m.start() + w.end()) for w in re.finditer(r"\S+", m.group(0))]
        while pieces and (pieces[0][0].lower() in _STARTS or _OPENING_ADVERB.fullmatch(pieces[0][0])):
            pieces = pieces[1:]  # "Originally editor of Mayfair": an adverb opening the sentence names nothing
        while pieces and pieces[-1][0].lower() in _STARTS:  # "... of Parliament The current leader": a lost full stop
            pieces = pieces[:-1]
        words = [w for w, _, _ in pieces]
        if kind == AnswerType.PERSON and any(ch.isdigit() for w in words for ch in w):
            continue  # "AI-6 Issue", "Release 2025.02": an item or a version, not someone
        if words and not words[0][0].isdigit():
            phrase = " ".join(words)
            if _CALENDAR_WORD.fullmatch(phrase) or phrase.lower() in _PRONOUNS:
                continue  # "July", "Monday": a date, not a name; "You" opening a sentence names no one
            if _DEMONYM.fullmatch(phrase) and _LOWER_NEXT.match(text, pieces[-1][2]):
                continue  # "the Bahamian island of Great Exuma": an adjective, not the place
            found.append(Value(phrase, pieces[0][1], pieces[-1][2]))
    return sorted(found, key=lambda v: (v.start, -len(v.text)))


def looks_like_person(text: str) -> bool:
    """A name that can be someone's: Chinese, a team ("the platform team"), or at least two capitalised words
    that are not a possessive ("Africa's", "Continental" and "American" name no one)."""
    if has_cjk(text) or _TEAM_EN.fullmatch(text.strip()):
        return True
    words = text.split()
    if words and words[-1].lower().strip(".,") in _INSTITUTION:
        return False  # "SIU Edwardsville Athletics Hall of Fame", "Truman State University": a body, not a person
    return len(words) >= 2 and not POSSESSIVE.search(text) and all(w[:1].isupper() or w.islower() for w in words)


# Last words of names of bodies, places and events that are no one's surname.
_INSTITUTION = frozenset(
    "fame university college school academy institute award awards prize party company corporation inc ltd club "
    "association league museum festival records stadium theatre theater foundation society council committee "
    "championship championships cup games series airport station orchestra".split()
)


# A duration that says when: "within 30 days", "after six weeks", "30 天内", "满 6 周后".
_DEADLINE = re.compile(r"\b(within|after|in|by|until|before)\s+\S|满|[内后]|以内|之内|之后", re.I)


# A unit of length or time right after a number ("1,200 feet", "6 weeks"): what makes the number a measure.
_MEASURE_UNIT = re.compile(
    rf"\s?-?\s?(?:ft|feet|foot|inch(?:es)?|yards?|miles?|mi|km|kilomet(?:re|er)s?|m|met(?:re|er)s?|cm|mm|"
    rf"nautical miles?|storeys?|stories|floors?|{_TIME_UNITS_EN})\b",
    re.I,
)


def measures(found: list[Value], text: str) -> list[Value]:
    """The values that are measures: a unit in the value ("340 metres") or right after it in the text. A bare number
    ("the clause limit to 128") answers no "how long is the …"."""
    return [v for v in found if any(c.isalpha() for c in v.text) or _MEASURE_UNIT.match(text, v.end)]


def values(text: str, kind: AnswerType, counts: bool = False) -> list[Value]:
    """Values of the given type in the text, in order (empty for types without a value: list, steps, reason).
    `counts`: a number may be a count written as a word ("need two"), which answers "how many" and nothing else."""
    if kind == AnswerType.DURATION:
        return [v for v in _spans(_DURATION, text) if not _YEAR_OF.match(v.text)]
    if kind == AnswerType.LEVEL:
        return _spans(_LEVEL, text)
    if kind == AnswerType.NUMBER:
        found = [v for v in _spans(_AMOUNT, text) if any(ch.isdigit() for ch in v.text) or has_cjk(v.text)]
        # The day and the year of "February 23, 1973" count nothing (a bare year may: it is left to the caller), nor
        # do the hour and the minutes of "Monday 10:00".
        dates = [d for d in _spans(_DATE, text) if not d.text.isdigit()]
        clocks = _spans(_CLOCK_TIME, text)
        found = [
            v
            for v in found
            if not any(d.start <= v.start and v.end <= d.end for d in dates)
            and not any(c.start <= v.start < c.end for c in clocks)
        ]
        if counts and not has_cjk(text):  # "Changes to Osprey need two": a count in words
            found = sorted(found + _spans(_COUNT_WORD, text), key=lambda v: v.start)
        return found
    if kind == AnswerType.DATE:  # "by when": a deadline is often a duration ("within 30 days", "满 6 周后")
        dates, durations = _spans(_DATE, text), values(text, AnswerType.DURATION)
        if dates:  # "announced 72 hours in advance, held on Sundays": the duration is not the when
            durations = [v for v in durations if _DEADLINE.search(text[max(0, v.start - 8) : v.end + 3])]
        return sorted(dates + durations, key=lambda v: v.start)
    if kind in (AnswerType.PERSON, AnswerType.PLACE):
        return names(text, kind)
    if kind == AnswerType.ENTITY:  # "what is the X": a name, or else an amount or a date
        found = names(text, kind) + _spans(_AMOUNT, text) + _spans(_DATE, text)
        return sorted((v for v in found if any(ch.isalnum() for ch in v.text)), key=lambda v: v.start)
    return []
