"""A question that takes for granted what the passages deny is answered with the denial, not with a number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_agent_llm import by_role, cite, open_kb
from tests.agent.test_bridges import _ask
from tests.helpers import write
from tests.llm_server import Reply, ScriptedLLM, prompt_text, text

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


def test_the_llm_synthesizer_is_told_which_passage_denies_the_premise(tmp_path: Path, embedder: Embedder) -> None:
    def synthesizer(body: dict[str, Any]) -> Reply:
        return text(f"McIlroy has not won the Masters [{cite(body, 'has yet to win')}].")

    for name, body in GOLF.items():
        write(tmp_path / "docs" / name, body)
    with ScriptedLLM(by_role(synthesizer=synthesizer)) as llm:
        kb = open_kb(tmp_path, embedder, llm)
        try:
            kb.ingest([tmp_path / "docs"])
            answer = kb.ask("How many times has Rory McIlroy won the Masters Tournament?", mode="single")
        finally:
            kb.close()
    prompt = prompt_text(next(r for r in llm.requests if r["model"] == "m-synthesizer"))
    denied = f"(passage [{cite_number(prompt)}] denies what the question takes for granted"
    assert denied in prompt
    assert answer.answer.startswith("McIlroy has not won the Masters")  # the model's words, its stop reason its own


def cite_number(prompt: str) -> str:
    """The [n] of the passage stating the denial, as the prompt numbers its passages."""
    at = prompt.index("has yet to win")
    return prompt[:at].rsplit("[", 1)[1].split("]", 1)[0]
