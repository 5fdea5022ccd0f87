"""Budget overrides as users give them (CLI flags, HTTP request fields), checked against the `Budget` model itself,
so every field a preset has can be overridden and nothing else, and an error names the key at fault."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agentrag.agent.budget import Budget
from agentrag.errors import ConfigError

KNOWN = tuple(Budget.model_fields)


def check_overrides(overrides: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The overrides, each value converted to its field's type; a ConfigError names an unknown key or a bad value.

    `labels` say how the user wrote a key (a CLI flag such as `--max-searches`), for the error message.
    """
    labels = labels or {}
    for key in overrides:
        if key not in Budget.model_fields:
            close = difflib.get_close_matches(key, KNOWN, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"budget: unknown key {key!r} ({hint}known: {', '.join(KNOWN)})")
    try:
        checked = Budget.model_validate(dict(overrides))
    except ValidationError as exc:
        raise ConfigError("; ".join(_describe(error, labels) for error in exc.errors())) from None
    return checked.model_dump(include=set(overrides))


def _describe(error: Any, labels: Mapping[str, str]) -> str:
    key, *inner = (str(part) for part in error["loc"])
    where = labels.get(key) or f"budget.{key}"
    return f"{'.'.join([where, *inner])}: {error['msg']} (got {error['input']!r})"
