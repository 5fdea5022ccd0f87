"""The chat facade's text as a person reads it: sources numbered once, each title once and no raw tabs; a
not-found answer labelled plainly with the closest passages quoted, never dressed up as an answer."""

from __future__ import annotations

import re
from typing import Any

from tests.helpers import HOTEL, KESTREL_SLA
from tests.server.conftest import Running
from tests.server.test_answer_fields import kb_with, sse_events

TABBED = "# Tape\tdrive\n\n## Options\tand\tflags\n\nThe --tape-length N option sets the tape length in metres.\n"


def chat(question: str, **extra: Any) -> dict[str, Any]:
    return {"model": "kb", "messages": [{"role": "user", "content": question}], **extra}


def test_the_sources_name_each_title_once_without_tabs(running: Running) -> None:
    client = kb_with(running, {**HOTEL.files, "tape.md": TABBED})
    content = client.post("/v1/chat/completions", json=chat(HOTEL.question)).json()["choices"][0]["message"]["content"]
    sources = content.split("\n\nSources:\n")[1].splitlines()
    cited = [line for line in sources if line.startswith("[")]
    assert cited
    for line in cited:
        assert re.fullmatch(r"\[\d+\] 差旅费管理办法（20\d\d 版）( — (住宿|伙食补助))?", line), line
        assert line.count("差旅费管理办法") == 1, line
    tape = client.post("/v1/chat/completions", json=chat("What does --tape-length set?")).json()
    line = next(s for s in tape["choices"][0]["message"]["content"].splitlines() if s.startswith("[1] "))
    assert line == "[1] Tape drive — Options and flags"


def test_a_not_found_answer_is_labelled_and_quotes_the_closest_passages(running: Running) -> None:
    client = kb_with(running, KESTREL_SLA.files)
    completion = client.post("/v1/chat/completions", json=chat(KESTREL_SLA.question)).json()
    assert completion["agentrag"]["stop_reason"] == "no_evidence"
    body = completion["choices"][0]["message"]["content"].split("\n\nSources:\n")[0].splitlines()
    assert body[0] == "知识库中没有明确陈述答案的内容。最接近的段落（并未回答这个问题）："
    quoted = body[1:]
    assert quoted
    assert len(quoted) == len(completion["citations"])
    for line, citation in zip(quoted, completion["citations"], strict=True):
        assert line == f"> {citation['quote']} [{citation['n']}]"

    english = client.post("/v1/chat/completions", json=chat("What is the availability SLA of Kestrel?")).json()
    if english["agentrag"]["stop_reason"] == "no_evidence":
        first = english["choices"][0]["message"]["content"].splitlines()[0]
        assert first == "Nothing in the knowledge base states the answer. Closest passages (they do not answer it):"

    chunks = [data for _, data in sse_events(client, "/v1/chat/completions", chat(KESTREL_SLA.question, stream=True))]
    streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert "\n\nSources:\n[1] Aurora 服务等级协议 — 可用性" in streamed
