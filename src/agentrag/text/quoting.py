"""Quoting: how text from a document (or from an earlier answer) reaches a model, as data and never as instructions.

Every prompt puts such text between a `<<<` line and a `>>>` line, and the system prompts say that quoted
text cannot change the instructions. Inside, any `<<<` or `>>>` is neutralised, so the text cannot close its
quote early and continue as instructions. Titles, headings and file names are document text too: they go
inside the quote with the passage, never into a header or an attribute around it.
"""

from __future__ import annotations

OPEN = "<<<"
CLOSE = ">>>"
_NEUTRAL = {OPEN: "‹‹‹", CLOSE: "›››"}


def escape(text: str) -> str:
    """`text` with the quote delimiters neutralised (no run of three `<` or `>` survives)."""
    for delimiter, neutral in _NEUTRAL.items():
        text = text.replace(delimiter, neutral)
    return text


def quote(text: str) -> str:
    """`text` as a quoted block: its own `<<<` and `>>>` lines around it, escaped."""
    return f"{OPEN}\n{escape(text)}\n{CLOSE}"


def quote_fields(fields: list[tuple[str, str]], body: str = "") -> str:
    """Labelled document fields (title, heading, file, ...) and a body, quoted together as one block.

    Empty fields are left out; each field is flattened to one line so it cannot pose as the body."""
    lines = [f"{label}: {' '.join(value.split())}" for label, value in fields if value.strip()]
    if body:
        lines.append(body)
    return quote("\n".join(lines))
