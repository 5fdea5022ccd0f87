"""Model-free multi-hop answers that go through a second page: a constraint is met only by the page that names
it (not by one sharing its generic word), and the bridge's page answers what is asked of the bridge."""

from __future__ import annotations

from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask


def test_a_name_is_not_met_by_another_name_sharing_its_generic_word(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "the Tarlo River" is not named by "the Kettle River": the waterfall comes through the country the Tarlo
    flows in, not from a page that merely mentions another river."""
    docs = {
        "tarlo.md": "# Tarlo River\n\nThe Tarlo River is a tributary of the Ombe River in the Sendu District of "
        "Veldonia. It rises in the northern hills and flows south.\n",
        "mira.md": "# Mira Falls\n\nMira Falls is a waterfall in eastern Veldonia on the Ombe River, near the "
        "border with Castrane.\n",
        "osk.md": "# Osk Falls\n\nOsk Falls is a waterfall on the Kettle River in the interior of British "
        "Columbia, Canada.\n",
    }
    (answer,) = _ask(
        settings,
        embedder,
        tmp_path,
        docs,
        "What is the name of the waterfall in the country where the Tarlo River is found?",
    )
    assert answer.short_answer == "Mira Falls"
