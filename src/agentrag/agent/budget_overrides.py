"""Budget overrides as users give them (CLI flags, HTTP request fields), checked against the `Budget` model itself,
so every field a preset has can be overridden and nothing else, and an error names the key at fault.

A nested field is given by its dotted path on the command line (`--budget context_split.history=0.2`) or as an
object over HTTP (`{"context_split": {"history": 0.2}}`); only the inner fields given are changed."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from agentrag.agent.budget import Budget
from agentrag.errors import ConfigError

KNOWN = tuple(Budget.model_fields)


def _nested_model(key: str) -> type[BaseModel] | None:
    annotation = Budget.model_fields[key].annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def nest_dotted(flat: Mapping[str, Any]) -> dict[str, Any]:
    """`{"context_split.history": "0.2"}` → `{"context_split": {"history": "0.2"}}`; other keys unchanged."""
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        outer, dot, inner = key.partition(".")
        if not dot:
            nested[key] = value
            continue
        if not isinstance(nested.setdefault(outer, {}), dict):
            raise ConfigError(f"budget: {outer!r} is given both as a value and as {key!r}")
        nested[outer][inner] = value
    return nested


def _unknown(key: str, known: tuple[str, ...], where: str) -> ConfigError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return ConfigError(f"{where}: unknown key {key!r} ({hint}known: {', '.join(known)})")


def check_overrides(overrides: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The overrides, each value converted to its field's type; a ConfigError names an unknown key or a bad value.

    `labels` say how the user wrote a key (a CLI flag such as `--max-searches`), for the error message.
    """
    labels = labels or {}
    for key, value in overrides.items():
        if key not in Budget.model_fields:
            raise _unknown(key, KNOWN, "budget")
        inner = _nested_model(key)
        if inner is not None and isinstance(value, Mapping):
            for inner_key in value:
                if inner_key not in inner.model_fields:
                    raise _unknown(inner_key, tuple(inner.model_fields), f"budget.{key}")
    try:
        checked = Budget.model_validate(dict(overrides))
    except ValidationError as exc:
        raise ConfigError("; ".join(_describe(error, labels) for error in exc.errors())) from None
    dumped = checked.model_dump(include=set(overrides))
    # A nested field keeps only the inner fields given, so the preset's others stay as the preset has them.
    return {
        key: {k: dumped[key][k] for k in value} if isinstance(value, Mapping) else dumped[key]
        for key, value in overrides.items()
    }


def _describe(error: Any, labels: Mapping[str, str]) -> str:
    key, *inner = (str(part) for part in error["loc"])
    where = labels.get(key) or f"budget.{key}"
    return f"{'.'.join([where, *inner])}: {error['msg']} (got {error['input']!r})"
