"""A question that takes for granted what the passages deny is answered with the denial, not with a number."""

from __future__ import annotations

from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask

GOLF = {
    "mcilroy.md": "# Rory McIlroy\n\nRory McIlroy is a professional golfer from Northern Ireland. He has won four "
    "major championships: the U.S. Open, the Open Championship and two PGA Championships.\n\nMcIlroy has yet to win "
    "the Masters Tournament; his best finish there was second place in 2022.\n",
    "masters.md": "# Masters Tournament\n\nThe Masters Tournament is one of the four major championships in "
    "professional golf. It is played each April at Augusta National Golf Club in Georgia.\n",
}


def test_a_false_premise_is_answered_with_the_passage_that_denies_it(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    (answer,) = _ask(settings, embedder, tmp_path, GOLF, "How many times has Rory McIlroy won the Masters Tournament?")
    assert answer.answer.startswith("The passages contradict what the question takes for granted:"), answer.answer
    assert "McIlroy has yet to win the Masters Tournament" in answer.answer
    assert answer.short_answer is None, "no count is given for what did not happen"
    assert answer.stop_reason == "no_evidence"


def test_a_question_whose_premise_holds_is_answered(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    (answer,) = _ask(settings, embedder, tmp_path, GOLF, "How many major championships has Rory McIlroy won?")
    assert "takes for granted" not in answer.answer
    assert answer.short_answer is not None
    assert "four" in answer.short_answer
