"""Answer modes. Each member of `agentrag.vocab.Mode` is a module here that exports
`answer(run, steps) -> Draft`; adding a mode is that module and its enum member.

A mode decides which steps to take (search, grade, plan, rewrite, follow up) and records what happened in
`run.outcome`; it never sets a stop reason or checks citations (finish.py does both, once).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.vocab import Mode

ModeAnswer = Callable[[Run, Steps], Draft]


def mode_answer(mode: Mode) -> ModeAnswer:
    """The `answer` function of a mode's module."""
    module = importlib.import_module(f"{__name__}.{mode.value}")
    return cast(ModeAnswer, module.answer)


def answer(mode: Mode, run: Run, steps: Steps) -> Draft:
    """Answer in `mode` (AUTO routes first, then answers in the mode it chose)."""
    if mode is not Mode.AUTO:
        run.routing.mode = mode
    return mode_answer(mode)(run, steps)
