"""How an answer's confidence and conflicting sources read in plain words, wherever a person meets the answer.

The chat facade's Sources block and the CLI's text output say the same thing in the same words (the web page,
in app.js, mirrors them):

    Confidence: low (the passages may not answer this)
    Sources disagree (一线城市住宿标准):
    - 500 元/晚: travel-2025.md, 2025-01-01 [1] (in force)
    - 450 元/晚: travel-2024.md, 2024-03-01 [2]

It also writes the facade's answer text: a not-found answer is a label and the closest passages quoted (never
dressed up as an answer), and each source is one `[n] title — section` line, its whitespace collapsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from agentrag.text.tokenize import has_cjk
from agentrag.types import Answer, Citation, Conflict
from agentrag.vocab import Confidence, Mode, StopReason

NOT_FOUND_LABEL = "Nothing in the knowledge base states the answer. Closest passages (they do not answer it):"
NOT_FOUND_LABEL_ZH = "知识库中没有明确陈述答案的内容。最接近的段落（并未回答这个问题）："
HEADING_SEPARATOR = " > "  # as `Chunk.heading` joins the heading path

CONFIDENCE_NOTES: dict[Confidence, str] = {
    Confidence.HIGH: "the passages answer the question",
    Confidence.PARTIAL: "only part of the question is answered, or less precisely than asked",
    Confidence.LOW: "the passages may not answer this",
}


def shows_confidence(answer: Answer) -> bool:
    """A reply that looked nothing up (a greeting, a question about the assistant) has no evidence to rate."""
    return answer.mode != Mode.DIRECT or bool(answer.citations)


def confidence_line(confidence: Confidence) -> str:
    """`Confidence: high`, or with a plain word of what it means when the answer is not sure."""
    if confidence == Confidence.HIGH:
        return "Confidence: high"
    return f"Confidence: {confidence} ({CONFIDENCE_NOTES[confidence]})"


@dataclass(frozen=True, slots=True)
class ConflictRow:
    """One source's side of a conflict, as shown: its value, where it comes from, and whether it is in force."""

    value: str
    source: str  # the file name
    date: str  # YYYY-MM-DD, or "" when the source has no date
    n: int
    in_force: bool

    @property
    def where(self) -> str:
        return f"{self.source}, {self.date}" if self.date else self.source


def conflict_rows(conflict: Conflict) -> list[ConflictRow]:
    """The values newest first (as the conflict keeps them), the one in force marked once."""
    rows: list[ConflictRow] = []
    marked = False
    for v in conflict.values:
        in_force = not marked and conflict.current is not None and v.value == conflict.current
        marked = marked or in_force
        date = v.date.isoformat() if v.date else ""
        rows.append(ConflictRow(v.value, PurePath(v.source).name, date, v.n, in_force))
    return rows


def conflict_heading(conflict: Conflict) -> str:
    return f"Sources disagree ({conflict.attribute}):" if conflict.attribute else "Sources disagree:"


def conflict_lines(conflict: Conflict) -> list[str]:
    """The heading, then one `- value: file, date [n] (in force)` line per source."""
    lines = [conflict_heading(conflict)]
    for row in conflict_rows(conflict):
        lines.append(f"- {row.value}: {row.where} [{row.n}]" + (" (in force)" if row.in_force else ""))
    return lines


def assessment_lines(answer: Answer) -> list[str]:
    """The confidence line (when the answer looked anything up) and every conflict, as plain text lines."""
    lines = [confidence_line(answer.confidence)] if shows_confidence(answer) else []
    for conflict in answer.conflicts:
        lines.extend(conflict_lines(conflict))
    return lines


def flat(text: str) -> str:
    """Tabs, newlines and runs of spaces as single spaces (a PDF's table cells, a heading's tabs)."""
    return " ".join(text.split())


def is_not_found(answer: Answer) -> bool:
    """Nothing usable was found: whatever the passages say, they do not answer the question."""
    return answer.stop_reason == StopReason.NO_EVIDENCE


def answer_body(answer: Answer) -> str:
    """The answer's text as a person reads it. A not-found answer is the label, then the closest passages as a
    quoted list (`> passage [n]`), so they never read as the answer; any other answer is its own text."""
    if not is_not_found(answer) or not answer.citations:
        return answer.answer
    label = NOT_FOUND_LABEL_ZH if has_cjk(answer.answer) else NOT_FOUND_LABEL
    return "\n".join([label, *(f"> {flat(c.quote)} [{c.n}]" for c in answer.citations)])


def source_line(citation: Citation) -> str:
    """`[n] title — section, p.N`: numbered once, the title once (the heading path starts with it), flat."""
    title = flat(citation.title) or PurePath(citation.source).name
    path = [flat(part) for part in citation.heading.split(HEADING_SEPARATOR) if flat(part)]
    while path and path[0] == title:
        path.pop(0)
    section = HEADING_SEPARATOR.join(path)
    page = f", p.{citation.page}" if citation.page else ""
    return f"[{citation.n}] {title}" + (f" — {section}" if section else "") + page


def sources_block(answer: Answer) -> list[str]:
    """`Sources:` and one line per citation (none without citations), then the confidence and conflicts."""
    lines = [source_line(c) for c in answer.citations]
    return (["Sources:", *lines] if lines else []) + assessment_lines(answer)
