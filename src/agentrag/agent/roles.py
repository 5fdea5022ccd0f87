"""The one way a role chooses between its LLM and its model-free implementation.

Every role (router, planner, grader, rewriter, synthesizer) has both. The LLM is tried when one is configured
and the budget allows a call; a failed call (`LLMError`: unreachable, timed out, invalid output after the
repair turn) or an empty result falls back to the rules, and the caller learns which one decided, for the
trace. Nothing else in the agent catches `LLMError` around a single role call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from pydantic import BaseModel

from agentrag.errors import LLMError
from agentrag.llm.tokens import TokenMeter
from agentrag.vocab import LLMRole

if TYPE_CHECKING:
    from agentrag.llm.client import LLMClient

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class LLMCall:
    """What one role call needs: the client, the time it may take, and the question's token meter."""

    client: LLMClient
    timeout_s: float
    meter: TokenMeter

    def structured(self, role: LLMRole, system: str, user: str, schema: type[M]) -> M:
        """A system prompt and one user turn, answered as `schema` (validated, with one repair turn)."""
        return self.client.structured(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            schema,
            role=role,
            timeout_s=self.timeout_s,
            meter=self.meter,
        )


@dataclass(frozen=True, slots=True)
class Decided(Generic[T]):
    """A role's result and who produced it; `failure` says why the LLM's result was not used, if it was tried."""

    value: T
    by: Literal["llm", "rules"]
    failure: str = ""

    @property
    def llm_failed(self) -> bool:
        return bool(self.failure)


def llm_or_rules(call: LLMCall | None, with_llm: Callable[[LLMCall], T | None], rules: Callable[[], T]) -> Decided[T]:
    """`with_llm(call)` when an LLM call is allowed and it gives a non-empty result; `rules()` otherwise."""
    if call is None:
        return Decided(rules(), "rules")
    try:
        value = with_llm(call)
    except LLMError as exc:
        return Decided(rules(), "rules", failure=str(exc))
    if not value:
        return Decided(rules(), "rules", failure="the model returned nothing usable")
    return Decided(value, "llm")
