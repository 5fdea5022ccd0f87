"""Token accounting: a thread-safe meter per question, and a cheap estimate for budgets.

The estimate needs no tokenizer download and is the same for every model: each CJK character (Han, kana,
Hangul, CJK and full-width punctuation) counts as one token, and every other character as a quarter of one
(about four characters of English, code or digits per token). Real BPE tokenizers land within roughly 30% of
it for both languages, which is what a budget or a context cut needs; when a server reports `usage`, the
reported numbers are used instead.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentrag.text.sentences import split_sentences

if TYPE_CHECKING:
    from agentrag.llm.types import ChatMessage, ToolSpec

_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u3190-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003134f]"
)
_CHARS_PER_TOKEN = 4
# Role markers and separators a chat template adds around each message.
_MESSAGE_OVERHEAD = 4
# A sentence end this close to the cut (as a share of the kept text) is preferred over cutting mid-sentence.
_SENTENCE_WINDOW = 0.2


def estimate_tokens(text: str) -> int:
    """Tokens in `text` by the rule above: CJK characters one each, other characters four per token."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / _CHARS_PER_TOKEN)


def estimate_message_tokens(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None = None) -> int:
    """Estimated prompt tokens of a chat request: every message's text and tool calls, plus the tool schemas."""
    total = 0
    for message in messages:
        total += _MESSAGE_OVERHEAD
        content = message.get("content")
        if isinstance(content, str):
            total += estimate_tokens(content)
        elif isinstance(content, list):
            for part in content:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str):
                    total += estimate_tokens(text)
        calls = message.get("tool_calls")  # only assistant turns have them
        if isinstance(calls, list):
            for call in calls:
                total += estimate_tokens(json.dumps(call, ensure_ascii=False))
    if tools:
        total += estimate_tokens(json.dumps(tools, ensure_ascii=False))
    return total


def truncate_to_tokens(text: str, n: int) -> str:
    """The longest prefix of `text` within `n` estimated tokens, ended at a sentence boundary when one lies
    in the last 20% of that prefix (else at a word boundary there, else exactly at the budget)."""
    if n <= 0:
        return ""
    if estimate_tokens(text) <= n:
        return text
    budget = n * _CHARS_PER_TOKEN  # in quarter-tokens, so CJK costs 4 and anything else 1
    cut = 0
    for ch in text:
        cost = _CHARS_PER_TOKEN if _CJK.match(ch) else 1
        if cost > budget:
            break
        budget -= cost
        cut += 1
    floor = int(cut * (1 - _SENTENCE_WINDOW))
    best = 0
    pos = 0
    for sentence in split_sentences(text):
        start = text.find(sentence, pos)
        if start < 0:  # cannot happen (pieces come from text in order); stop looking rather than guess
            break
        pos = start + len(sentence)
        if pos > cut:
            break
        best = pos
    if best >= floor and best > 0:
        return text[:best]
    space = max(text.rfind(" ", floor, cut + 1), text.rfind("\n", floor, cut + 1))
    if space > 0:
        return text[:space].rstrip()
    return text[:cut]


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One completed model call, as a question's trace records it (`TraceStep.LLM`)."""

    role: str
    model: str  # the model asked for
    endpoint: str
    prompt_tokens: int
    completion_tokens: int
    ms: float
    response_model: str = ""  # the model the server says answered, when it says
    finish_reason: str | None = None
    stream: bool = False
    error: str = ""  # the error's type, for a call that failed (it spent no counted tokens)


@dataclass
class TokenMeter:
    """Counts completed LLM calls and their tokens for one question; safe to share between threads.
    `on_call` hears of each call described (the trace's `llm` events), outside the lock."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    on_call: Callable[[ModelCall], None] | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, prompt: int, completion: int, call: ModelCall | None = None) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion
        if call is not None and self.on_call is not None:
            self.on_call(call)

    def failed(self, call: ModelCall) -> None:
        """A call that failed: traced, not counted (`calls` and the tokens are what was spent)."""
        if self.on_call is not None:
            self.on_call(call)

    @property
    def total(self) -> int:
        with self._lock:
            return self.prompt_tokens + self.completion_tokens
