"""The kind of thing an English "which X / what X" question asks for: "which retired Argentine footballer" asks for
a footballer, "what is the name of the waterfall" for a waterfall. Used to tell a page about such a thing (its
opening says it is one) and a name that says it is one ("Clark County" for "what county")."""

from __future__ import annotations

import itertools
import re

# "which coach", "what retired Argentine footballer": the words naming the kind of thing asked for.
_ASKED_KIND = re.compile(
    r"\b(?:which|what)\s+((?:(?!(?:is|are|was|were|did|does|do|has|have|had|that|who|which|by|of|in|for|to|from|"
    r"with|on|at|and)\b)[\w'-]+\s*){1,4})",
    re.I,
)


# A nationality or faith as a word ("British", "American", "Christian", "Japanese", "French"): said of a thing,
# never its name's last word in a question ("Are both X and Nine Lashes American Christian rock bands?").
# A list, not a suffix: Sarafian, Kasparian and Morgan end like nationalities and are surnames.
DEMONYMS = frozenset(
    "American British English Scottish Welsh Irish French German Italian Spanish Portuguese Dutch Belgian Swiss "
    "Austrian Swedish Norwegian Danish Finnish Icelandic Polish Czech Slovak Hungarian Romanian Bulgarian Greek "
    "Turkish Russian Ukrainian Serbian Croatian Bosnian Slovenian Albanian Armenian Georgian Lithuanian Latvian "
    "Estonian Canadian Mexican Cuban Brazilian Argentine Argentinian Chilean Colombian Peruvian Venezuelan "
    "Australian Zealander Japanese Chinese Korean Taiwanese Vietnamese Thai Filipino Indonesian Malaysian Indian "
    "Pakistani Bangladeshi Iranian Iraqi Israeli Palestinian Lebanese Syrian Egyptian Moroccan Algerian Tunisian "
    "Nigerian Ghanaian Kenyan Ethiopian Zimbabwean African European Asian Arab Christian Catholic Protestant "
    "Anglican Jewish Muslim Islamic Hindu Buddhist".split()
)
DEMONYM_WORD = "(?:" + "|".join(sorted(DEMONYMS, key=len, reverse=True)) + ")"


# Kinds of place that hold other places: "Finnmark county, Norway" names the county and then what holds it.
CONTAINERS = frozenset("county state country province city town region district parish borough village".split())


# "what is the name of the waterfall ...": the kind is the waterfall, not the name.
_NAME_OF_KIND = re.compile(
    r"\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+(?:name|title)s?\s+of\s+(?:the|a|an)\s+", re.I
)


def asked_kind(text: str) -> list[str] | None:
    """The words (of four letters or more) naming the kind of thing a "which X / what X" question asks for, or
    None when it names none ("who", "where", "what is")."""
    text = _NAME_OF_KIND.sub("what ", text, count=1)
    kind = _ASKED_KIND.search(text)
    return None if kind is None else [w for w in kind.group(1).lower().split() if len(w) >= 4]


def asked_head(text: str) -> str | None:
    """The noun of the kind asked for: "which retired Argentine footballer" → footballer, "what Nevada county" →
    county; the last word that is no participle ("what production company co-owned" → company)."""
    words = asked_kind(text)
    if not words:
        return None
    words = [w for w in words if not w.isdigit()] or words  # "what 2003 romantic comedy": no year is a kind

    def describes(i: int, w: str) -> bool:  # a participle after the kind; "Christmas-themed comedy": before it
        participle = w.endswith(("ed", "ing")) or w in _PARTICIPLES
        return participle and ("-" not in w or i == len(words) - 1)

    before = [w for _, w in itertools.takewhile(lambda iw: not describes(*iw), enumerate(words))]
    return (before or words)[-1]


# "what English-American actor known for ...": the kind ends before the participle that describes it.
_PARTICIPLES = frozenset("known born made called named built written drawn held sung played run won seen".split())
