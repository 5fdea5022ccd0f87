"""Structured output: a model reply parsed and validated against a pydantic schema, with one repair turn.

The schema is always stated in the prompt (in the last user turn, which every server and chat template
accepts) and, by `llm.json_mode`, also requested through `response_format`. Replies are read tolerantly:
```json fences, <think> blocks and prose around the value are all fine. An invalid reply gets one repair turn
naming the exact error; a second invalid reply raises `LLMOutputError`, and the caller uses its model-free role.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from agentrag.errors import LLMOutputError
from agentrag.llm.types import ChatMessage, ChatResponse, UserMessage
from agentrag.vocab import JsonMode

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_JSON_STARTS = re.compile(r"[\[{]")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
# Bounds the tolerant JSON search on long prose replies.
_MAX_JSON_STARTS = 50


class BadOutput(Exception):
    """A structured reply that is not valid JSON for the schema; the message is sent back in the repair turn."""


def with_schema_instructions(
    messages: Sequence[ChatMessage], json_schema: dict[str, Any], examples: str | None
) -> list[ChatMessage]:
    """The conversation with the schema stated in the last user turn (every server and chat template accepts that)."""
    instruction = (
        "Reply with only a JSON value, no explanation and no code fences, that matches this JSON schema:\n"
        + json.dumps(json_schema, ensure_ascii=False)
    )
    if examples:
        instruction += "\nExample:\n" + examples
    out = [m.copy() for m in messages]  # the caller's messages stay as they were
    # `.get`, not narrowing on `["role"]`: an untyped caller's odd message must not raise here.
    last = cast("UserMessage", out[-1]) if out and out[-1].get("role") == "user" else None
    content = last.get("content") if last is not None else None
    if last is not None and isinstance(content, str):
        last["content"] = f"{content}\n\n{instruction}"
    elif last is not None and isinstance(content, list):
        last["content"] = [*content, {"type": "text", "text": instruction}]
    else:
        out.append({"role": "user", "content": instruction})
    return out


def response_format(json_mode: JsonMode, schema: type[BaseModel], json_schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` parameter that asks for `schema` the way the endpoint accepts, if any."""
    if json_mode == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "output"
        return {"type": "json_schema", "json_schema": {"name": name, "schema": json_schema, "strict": False}}
    if json_mode == "json_object":
        return {"type": "json_object"}
    return None


def validated_reply(
    ask: Callable[[list[ChatMessage]], ChatResponse],
    conversation: list[ChatMessage],
    schema: type[T],
    *,
    model: str,
    endpoint: str,
) -> T:
    """`ask`'s reply to `conversation` parsed into `schema`, after one repair turn if the first reply is invalid."""
    first = ask(conversation)
    try:
        return parse_structured(first.content, schema)
    except BadOutput as bad:
        reason = str(bad)
    logger.info("model '%s' gave invalid %s output (%s); asking once for a repair", model, schema.__name__, reason)
    repair: list[ChatMessage] = [
        *conversation,
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": f"That reply is not valid: {reason}. Reply with only the corrected JSON, "
            "no explanation and no code fences.",
        },
    ]
    second = ask(repair)
    try:
        return parse_structured(second.content, schema)
    except BadOutput as bad:
        raise LLMOutputError(
            f"model '{model}' at {endpoint} gave invalid {schema.__name__} output twice: {bad}",
            model=model,
            endpoint=endpoint,
        ) from None


def extract_json(text: str) -> Any:
    """The JSON value in a model reply: tolerant of ```json fences, <think> blocks and prose around the value.

    Raises ValueError naming the problem (the first JSON syntax error, or that there is no JSON at all)."""
    text = _THINK.sub("", text).strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    first_error: json.JSONDecodeError | None = None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text[:1] in "[{":
            first_error = exc
    decoder = json.JSONDecoder()
    for n, match in enumerate(_JSON_STARTS.finditer(text)):
        if n >= _MAX_JSON_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
            continue
        return value
    if first_error is not None:
        raise ValueError(f"not valid JSON ({first_error})")
    raise ValueError("no JSON object in the reply")


def parse_structured(text: str, schema: type[T]) -> T:
    """`text` as an instance of `schema`; `BadOutput` says what is wrong, in words the model can act on."""
    try:
        value = extract_json(text)
    except ValueError as exc:
        raise BadOutput(str(exc)) from None
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:10]
        ]
        raise BadOutput("the JSON does not match the schema: " + "; ".join(problems)) from None
