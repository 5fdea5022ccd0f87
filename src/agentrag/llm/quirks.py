"""What an endpoint accepts, learned from the requests it rejects.

Servers differ in what they accept. A parameter a server rejects with 400/422 (`response_format`,
`stream_options`, `max_tokens` where `max_completion_tokens` is wanted, `temperature`) is dropped or replaced,
the call is repeated once, and the client remembers it for later calls (logged once). `adapt` makes the
repeated request and names the `Lesson`; `LearnedQuirks` holds what was learned, for every thread of a client.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from agentrag.vocab import JsonMode

if TYPE_CHECKING:
    from agentrag.llm.types import ChatMessage

MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]


@dataclass(frozen=True)
class EndpointQuirks:
    """How requests to one endpoint are written: the settings' choices, until the server rejects one."""

    json_mode: JsonMode  # how structured output is requested (`llm.json_mode` at first)
    stream_usage: bool = True  # ask for a final usage chunk (`stream_options.include_usage`)
    max_tokens_param: MaxTokensParam = "max_tokens"
    send_temperature: bool = True

    def params(
        self, model: str, messages: Sequence[ChatMessage], max_tokens: int, temperature: float
    ) -> dict[str, Any]:
        """The parameters every chat request carries, written the way this endpoint accepts them."""
        params: dict[str, Any] = {"model": model, "messages": messages, self.max_tokens_param: max_tokens}
        if self.send_temperature:
            params["temperature"] = temperature
        return params


class QuirksChange(TypedDict, total=False):
    """Fields of `EndpointQuirks` to set; a lesson sets one."""

    json_mode: JsonMode
    stream_usage: bool
    max_tokens_param: MaxTokensParam
    send_temperature: bool


@dataclass(frozen=True)
class Lesson:
    """What a request that worked after a rejection teaches: the change to remember, and the note to log once."""

    change: QuirksChange
    note: str

    @property
    def field(self) -> str:
        """The field it changes: of several lessons about one field in one call, the last one counts."""
        return next(iter(self.change))


def adapt(params: dict[str, Any], server_message: str) -> tuple[dict[str, Any], Lesson] | None:
    """The request without the parameter a 400 most likely objected to, and what to remember if that works;
    None when no optional parameter is to blame (the rejection is then the caller's error to raise)."""
    text = server_message.lower()
    adapted = dict(params)
    if "max_tokens" in params and "max_completion_tokens" in text:
        adapted["max_completion_tokens"] = adapted.pop("max_tokens")
        return adapted, Lesson(
            {"max_tokens_param": "max_completion_tokens"}, "sending max_completion_tokens from now on"
        )
    if "temperature" in params and "temperature" in text:
        del adapted["temperature"]
        return adapted, Lesson({"send_temperature": False}, "it rejects temperature; leaving it out from now on")
    if "stream_options" in params:
        del adapted["stream_options"]
        return adapted, Lesson(
            {"stream_usage": False}, "it rejects stream_options; estimating streamed usage from now on"
        )
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping):
        if fmt.get("type") == "json_schema":
            adapted["response_format"] = {"type": "json_object"}
            return adapted, Lesson(
                {"json_mode": "json_object"}, "it rejects json_schema output; using json_object from now on"
            )
        del adapted["response_format"]
        return adapted, Lesson(
            {"json_mode": "none"}, "it rejects response_format; asking for JSON in the prompt only from now on"
        )
    return None


class LearnedQuirks:
    """The endpoint's quirks as learned so far; shared by every thread that calls through one client."""

    def __init__(self, initial: EndpointQuirks) -> None:
        self._current = initial
        self._lock = threading.Lock()

    @property
    def current(self) -> EndpointQuirks:
        return self._current  # a frozen snapshot: reading it needs no lock

    def learn(self, lesson: Lesson) -> bool:
        """Remembers `lesson`; False when it was known already (another call learned it first), so its note is
        logged once."""
        with self._lock:
            learned = replace(self._current, **lesson.change)
            if learned == self._current:
                return False
            self._current = learned
        return True
