"""Budgets as data: named presets (fast, balanced, thorough) that a user can override field by field.

A `BudgetTracker` counts one question's spending. Nothing in the agent loops on its own judgement alone:
every round asks the tracker first, and every call gets a timeout no longer than the wall time left.
"""

from __future__ import annotations

import threading
import time
import tomllib
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentrag.errors import AgentragError, ConfigError
from agentrag.llm.tokens import TokenMeter
from agentrag.vocab import Preset


class ContextSplit(BaseModel):
    """How the synthesizer's context window is shared (fractions of `context_tokens`); the rest is left for
    the instructions and the question."""

    model_config = ConfigDict(extra="forbid")

    history: float = Field(0.15, ge=0, le=1, description="The conversation so far.")
    evidence: float = Field(0.65, ge=0, le=1, description="The numbered passages.")


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_llm_calls: int = Field(6, ge=0)
    max_retrieval_calls: int = Field(8, ge=1)
    max_tokens: int = Field(24000, ge=0, description="Prompt plus completion tokens over all calls.")
    max_seconds: float = Field(60.0, gt=0, description="Wall time for the whole question.")
    llm_timeout_s: float = Field(20.0, gt=0, description="Per LLM call, capped by the wall time left.")
    tool_timeout_s: float = Field(
        5.0, gt=0, description="Per tool call (a search and its query embedding), capped by the wall time left."
    )
    parallel_searches: int = Field(4, ge=1, le=16, description="Independent searches of one round run side by side.")
    max_rounds: int = Field(3, ge=1, description="Retrieve-grade-rewrite rounds in iterative and agent modes.")
    max_subqueries: int = Field(5, ge=1, le=5)
    evidence_k: int = Field(8, ge=1, description="Passages handed to the synthesizer.")
    context_tokens: int = Field(6000, ge=500, description="Token budget of the synthesizer's prompt.")
    context_split: ContextSplit = Field(default_factory=ContextSplit)
    repeat_cosine: float = Field(
        0.9, gt=0, le=1, description="A new query this close to an earlier one, with mostly the same words, is refused."
    )
    repeat_cosine_alone: float = Field(
        0.97, gt=0, le=1, description="A new query this close to an earlier one is refused whatever its words."
    )


class StepTimeout(AgentragError, TimeoutError):
    """A search (or its query embedding) did not finish within the tool timeout the budget left it."""


def _merged(preset: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The preset's fields with the overrides applied field by field, the inner fields of a nested one too."""
    out = dict(preset)
    for key, value in overrides.items():
        base = out.get(key)
        out[key] = {**base, **value} if isinstance(value, dict) and isinstance(base, dict) else value
    return out


def load_preset(name: Preset | str, overrides: dict[str, Any] | None = None) -> Budget:
    """The named preset (`agentrag/presets/<name>.toml`) with `overrides` applied field by field."""
    try:
        preset = Preset(name)
    except ValueError:
        raise ConfigError(f"unknown preset {name!r} (choose one of: {', '.join(Preset)})") from None
    data = tomllib.loads((files("agentrag") / "presets" / f"{preset.value}.toml").read_text(encoding="utf-8"))
    try:
        return Budget(**_merged(data, overrides or {}))
    except ValueError as exc:
        raise ConfigError(f"budget overrides for preset {name!r}: {exc}") from exc


class BudgetTracker:
    """One question's spending against its budget; safe to update from concurrent tool calls.

    LLM calls and tokens are read from the question's `TokenMeter`, which the LLM client fills on every
    completed call (repairs included), so nothing can spend without being counted.
    """

    def __init__(self, budget: Budget, meter: TokenMeter | None = None) -> None:
        self.budget = budget
        self.meter = meter or TokenMeter()
        self.started = time.monotonic()
        self.retrieval_calls = 0
        self._lock = threading.Lock()

    @property
    def llm_calls(self) -> int:
        return self.meter.calls

    @property
    def tokens(self) -> int:
        return self.meter.total

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def remaining_s(self) -> float:
        return max(0.0, self.budget.max_seconds - self.elapsed_s())

    def llm_timeout(self) -> float:
        return max(0.05, min(self.budget.llm_timeout_s, self.remaining_s()))

    def tool_timeout(self) -> float:
        return max(0.05, min(self.budget.tool_timeout_s, self.remaining_s()))

    def can_call_llm(self, reserve: int = 0) -> bool:
        """True if one more LLM call fits, keeping `reserve` calls back (for the final answer)."""
        b = self.budget
        return self.llm_calls + reserve < b.max_llm_calls and self.tokens < b.max_tokens and self.remaining_s() > 0.5

    def can_retrieve(self) -> bool:
        return self.retrieval_calls < self.budget.max_retrieval_calls and self.remaining_s() > 0.2

    def spend_retrieval(self, n: int = 1) -> None:
        with self._lock:
            self.retrieval_calls += n

    def exhausted(self) -> str | None:
        """Which budget ran out, in words, or None."""
        b = self.budget
        if self.remaining_s() <= 0.5:
            return f"wall time ({b.max_seconds:g} s)"
        if self.llm_calls >= b.max_llm_calls:
            return f"LLM calls ({b.max_llm_calls})"
        if self.retrieval_calls >= b.max_retrieval_calls:
            return f"retrieval calls ({b.max_retrieval_calls})"
        if self.tokens >= b.max_tokens:
            return f"tokens ({b.max_tokens})"
        return None
