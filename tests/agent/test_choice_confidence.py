"""How sure a model-free choice is: sure when it compares the value stated on each option's own page, never
when it only picks the option whose sentences share most words with the question."""

from __future__ import annotations

from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask

BANDS = {
    "alder.md": "# Alder Row\n\nAlder Row is an English folk band formed in Leeds in 1994. The band has released "
    "seven albums.\n",
    "mills.md": "# The Quiet Mills\n\nThe Quiet Mills are a Scottish indie band formed in Dundee in 2003. They "
    "toured Europe in 2010.\n",
    "fair.md": "# Harvest Fair\n\nThe Harvest Fair is a music festival held in Leeds every September since "
    "2001. Alder Row and The Quiet Mills have both played it.\n",
}


def test_a_choice_computed_from_each_options_own_page_is_sure(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    (answer,) = _ask(settings, embedder, tmp_path, BANDS, "Which band was formed first, Alder Row or The Quiet Mills?")
    assert answer.short_answer == "Alder Row"
    assert "1994" in answer.answer, "both years the choice rests on are shown"
    assert "2003" in answer.answer
    assert answer.confidence == "high"


def test_a_choice_by_shared_words_is_not_sure(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    """No value is compared: which band "is from Scotland" rests on wording, so it is never given as sure."""
    (answer,) = _ask(settings, embedder, tmp_path, BANDS, "Which band is Scottish, Alder Row or The Quiet Mills?")
    assert answer.short_answer is not None
    assert answer.short_answer.endswith("Quiet Mills")
    assert answer.confidence != "high"
