"""The named alternatives of a choice question, model-free: "Which is older, Lyon or Turin?" → Lyon, Turin.

English options stand around "or" after the question word ("Which band was formed first, A or B?"), around
"or" after the verb of a yes/no question ("Is A or B the genus of ..."), at the end of a lowercase yes/no
question ("is dreamworks owned by time warner or universal pictures?"), after "between" ("between A and B"),
and around "and" where the question picks one of two names it lists ("Who was born first of A and B",
"Among A and B, who ...", "Which is a French documentary, A and B?"). Chinese options stand around 还是.
"""

from __future__ import annotations

import re

_CHOICE_EN = re.compile(r"\b(which|who|what|whose)\b[^?]{0,120}?,?\s(?P<a>[^?]{1,80}?)\bor\b\s+(?P<b>[^?]+)", re.I)
# A capitalised word opens with an upper-case letter, Latin-1 and Latin Extended ones too ("Živojinović", "Łódź").
_CAP = "[A-Z" + "".join(ch for ch in map(chr, range(0xC0, 0x250)) if ch.isupper()) + "]"
# "Is the Marsilea or the Brabejum the genus of ...": two names around "or" after the verb.
_NAME_AFTER = (
    rf"(?:(?i:the)\s+)?[\"“]?{_CAP}[\w'’.-]*(?:\s+(?:(?:of|the|de|la|von|van|for|v\.)\s+)*{_CAP}[\w'’.-]*)*[\"”]?"
)
_CHOICE_YES_NO = re.compile(
    rf"^\s*(?i:is|are|was|were|does|do|did|has|have)\s+(?P<a>{_NAME_AFTER})\s+or\s+(?P<b>{_NAME_AFTER})"
)
# "is dreamworks owned by time warner or universal pictures?": lowercase options closing a yes/no question after a
# preposition; the first option takes as many words as the second.
_CHOICE_TAIL = re.compile(
    r"^\s*(?i:is|are|was|were|does|do|did|has|have)\b.*\b(?:by|in|from|of|to|at|on|with|for|than|as)\s+"
    r"(?P<a>[\w'’.&-]+(?:\s+[\w'’.&-]+){0,4}?)\s+or\s+(?P<b>[\w'’.&-]+(?:\s+[\w'’.&-]+){0,3})\s*\??\s*$",
    re.I,
)
# "known by multiple names or nicknames", "or not": a yes/no question, not two named options.
_NOT_OPTIONS = frozenset("not no neither any multiple many several some other more different both".split())
# "What is the difference between A and B?": the two contrasted, not two options to pick one from.
_CONTRAST = re.compile(r"\b(?:differences?|similarit(?:y|ies)|distinctions?)\s+between\b", re.I)
_BETWEEN = re.compile(rf"(?i:\bbetween)\s+(?:two\s+\w+\s+)?(?P<a>{_NAME_AFTER})\s+and\s+(?P<b>{_NAME_AFTER})")
# Two names joined by "and" that a which/who question picks from: after "of", "among" or a comma (with the kind
# of thing they are between: "Of the retired tennis players A and B, which ..."), closing the clause.
_CHOICE_AND = re.compile(
    rf"(?:(?i:\b(?:of|among|amongst))|,|:)\s+(?:(?i:the)\s+(?:[a-z][\w-]*\s+){{0,4}}?)?"
    rf"(?P<a>{_NAME_AFTER})\s+and\s+(?P<b>{_NAME_AFTER})\s*(?=[,?]|$|\s(?i:who|which|what|is|was|are|were|has|had|did)\b)"
)
_PICKS_ONE = re.compile(r"^\s*(?:(?:of|among|amongst)\b[^?]*?[,\s])?(?:which|who)\b", re.I)
# "Who was born first", "which is older": a comparison that can only pick one of the two.
_COMPARATIVE = re.compile(
    r"\b(?:first|earlier|earliest|older|oldest|later|latest|younger|youngest|more|most|larger|higher|longer|"
    r"bigger|greater|fewer|less|smaller|lower|shorter)\b",
    re.I,
)
# A name's place after a comma ("University of California, Berkeley"): part of the name, not another option.
_PLACE_AFTER_NAME = re.compile(rf"{_CAP}[\w'’.-]*(?:\s+(?:of|the|de|la|for)\s+|\s+){_CAP}[\w'’.-]*,\s+{_CAP}[\w'’-]*$")
# What the second option's clause says of it: "Purbanchal University | was established first".
_AFTER_NAME = re.compile(r"\s+(?:is|are|was|were|has|have|had|did|does|do)\s+[a-z].*$")


def options(text: str, zh: bool) -> list[str]:
    if zh:
        m = re.search(r"(.{1,20}?)还是(.{1,20}?)[？?]?$", text)
        return [m.group(1).strip("，, "), m.group(2).strip("，, ")] if m else []
    m = _CHOICE_EN.search(text) or _CHOICE_YES_NO.search(text)
    if m:
        first = _bare(_first_option(m.group("a")))
        second = _bare(_AFTER_NAME.sub("", m.group("b").split(",")[0]))
        return [first, second] if first and second and len(first.split()) <= 8 else []
    tail = _CHOICE_TAIL.search(text)
    if tail and not _NOT_OPTIONS & set(f"{tail.group('a')} {tail.group('b')}".lower().split()):
        words_b = tail.group("b").split()
        return [" ".join(tail.group("a").split()[-len(words_b) :]), " ".join(words_b)]
    between = _BETWEEN.search(text)
    if between and not _CONTRAST.search(text):
        return [_bare(between.group("a")), _bare(between.group("b"))]
    return _listed_pair(text)


def _first_option(before_or: str) -> str:
    """The first option: the words after the question's last comma or colon ("Which battle, the Battle of Cold
    Harbor, or ..."), unless that comma is inside a name ("University of California, Berkeley")."""
    text = before_or.rstrip(" ,").rsplit(":", 1)[-1]
    if "," not in text:
        return text
    if _PLACE_AFTER_NAME.search(text.strip()):
        head, place = text.rsplit(",", 1)
        return f"{head.rsplit(',', 1)[-1].strip()},{place}"
    return text.rsplit(",", 1)[-1]


def _listed_pair(text: str) -> list[str]:
    """ "Who was born first of A and B", "Among A and B who made ...": a which/who question picking one of two
    names it joins with "and"; not "Were both A and B ..." nor "A and B are both what?"."""
    if re.search(r"\b(?:both|either|neither|each|all)\b", text, re.I) or not _PICKS_ONE.search(text):
        return []
    pair = _CHOICE_AND.search(text)
    if pair is None:
        return []
    first, second = _bare(pair.group("a")), _bare(pair.group("b"))
    if not first or not second or first.lower() == second.lower():
        return []
    before = text[: pair.start()].rstrip()
    if re.search(rf",\s*{_NAME_AFTER}$", before):
        return []  # the last two of a longer list: "in Italy, Spain, England and Germany"
    after_comma = before.endswith((",", ":")) or pair.group(0)[:1] in ",:"
    opens = re.match(r"\s*(?:of|among|amongst)\b", text, re.I) is not None
    return [first, second] if after_comma or opens or _COMPARATIVE.search(text) else []


_ASKING_START = re.compile(r"^(?:(?:are|is|was|were|do|does|did|has|have|had|which|who|what)\s+)+", re.I)
_JOINED = re.compile(rf"(?P<a>{_NAME_AFTER})\s+and\s+(?P<b>{_NAME_AFTER})")


def joined_pair(text: str) -> list[str]:
    """The first two names a question joins with "and": "Are both bands, Digital Summer and Underoath, from ..."."""
    m = _JOINED.search(text)
    if m is None:
        return []
    first = _ASKING_START.sub("", m.group("a"))
    return [_bare(first), _bare(m.group("b"))]


def _bare(option: str) -> str:
    """An option as named: without quotes, a leading article, or the words before it ("is older Carrie Akre")."""
    option = option.strip(' ,?."“”')
    names = re.findall(_NAME_AFTER, option)
    if names and not option[:1].isupper() and not option.startswith(("the ", "The ", '"', "“")):
        option = names[-1]
    quoted = re.match(r"^[\"“]([^\"”]+)[\"”]", option)
    if quoted:
        return quoted.group(1)
    return re.sub(r"^(the|a|an)\s+", "", option, flags=re.I).strip()
