"""Model-free multi-hop answers that go through a second page: a constraint is met only by the page that names
it (not by one sharing its generic word), and the bridge's page answers what is asked of the bridge."""

from __future__ import annotations

import re
from pathlib import Path

from agentrag.embed.base import Embedder
from agentrag.settings import Settings
from tests.agent.test_bridges import _ask

# A town, the post reached through its country, and another country's holder of the same post.
MORVIK = {
    "morvik.md": "# Morvik\n\nMorvik is a town in the Eastern Region of Veldonia. It is the main market centre of "
    "Morvik District.\n",
    "lop.md": "# Leader of Opposition (Veldonia)\n\nThe Leader of Opposition in Veldonia is the title given to the "
    "elected leader of the largest party outside the government. The current Leader of Opposition is Hon. Mara "
    "Velt of the Green Forum.\n",
    "castrane.md": "# Leader of the Opposition (Castrane)\n\nThe current holder of the post of Leader of the "
    "Opposition is Ivo Lind, after his party's loss in the general election.\n",
}
MORVIK_QUESTION = "Who is the current opposition leader in the country where Morvik is located?"


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


def test_the_person_holding_the_post_in_the_country_reached_through_the_town(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """Morvik is in Veldonia, so Veldonia's opposition leader: the one named after "Hon.", not the post's own
    name restated ("Leader of Opposition"), nor the leader of another country's opposition."""
    (answer,) = _ask(settings, embedder, tmp_path, MORVIK, MORVIK_QUESTION)
    assert answer.short_answer == "Mara Velt"


def test_a_description_of_the_answer_does_not_anchor_the_chain(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """In "the second wife of what Veldonian businessman", Lena Orsk's page is where the chain starts, though it
    says "Veldonia's" and not "Veldonian": the word describes the businessman."""
    docs = {
        "lena.md": "# Lena Orsk\n\nLena Marie Orsk (née Vale; born 10 May 1977) is a singer and model. She was the "
        "second wife of Veldonia's richest man, Piet Orsk.\n",
        "piet.md": "# Piet Orsk\n\nPiet Arne Orsk (born 8 September 1967) is a Veldonian investor and the owner of "
        "Orsk Media.\n",
    }
    (answer,) = _ask(settings, embedder, tmp_path, docs, "Lena Orsk was the second wife of what Veldonian businessman?")
    assert answer.short_answer == "Piet Orsk"


def test_the_question_asked_in_the_relative_clause_crosses_to_the_city_page(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """ "... located in a city that is the county seat of what county": the city is a bridge (a county seat is no
    county), and the asking words are those of the relative clause, not the cooperative's."""
    docs = {
        "lindell.md": "# Lindell Housing Cooperative\n\nThe Lindell Housing Cooperative in Marwick, Veldonia, is one "
        "of the oldest student housing cooperatives in the region. It has housed over 2000 students.\n",
        "marwick.md": "# Marwick\n\nMarwick is the county seat and largest city of Orsa County, Veldonia, and the "
        "home of the state university.\n",
    }
    question = "The Lindell Housing Cooperative is located in a city that is the county seat of what county?"
    (answer,) = _ask(settings, embedder, tmp_path, docs, question)
    assert answer.short_answer == "Orsa County"


def test_a_name_with_a_quoted_nickname_is_given_whole(settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    docs = {
        "needle.md": "# The Quiet Needle\n\nThe Quiet Needle is a 1970 Veldonian comedy film. It stars Ivo Samuel "
        '"Bear" Renn as a New York City tailor who loses his shop.\n',
    }
    (answer,) = _ask(settings, embedder, tmp_path, docs, "Who played a New York City tailor in The Quiet Needle?")
    assert answer.short_answer == 'Ivo Samuel "Bear" Renn'


def test_the_chain_is_shown_on_top_of_the_supporting_sentences(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """The sentence that leads to the answer (Morvik is in Veldonia) is shown before it, and does not take the
    place of one of the five sentences that support the answer."""
    more = {
        "morvik.md": "Its market opens on Mondays.",
        "lop.md": "The post was created in 1961. Its holder sits in the front row of the assembly.",
        "castrane.md": "He was born in 1970.",
    }
    docs = {name: f"{text.rstrip()} {more[name]}\n" for name, text in MORVIK.items()}
    (answer,) = _ask(settings, embedder, tmp_path, docs, MORVIK_QUESTION)
    assert answer.short_answer == "Mara Velt"
    body = answer.answer.split("\n", 1)[1]
    assert body.startswith("Morvik is a town in the Eastern Region of Veldonia")  # the chain first
    supporting = body[body.index("The current Leader of Opposition is Hon. Mara Velt") :]
    assert len(re.findall(r"\]\.", supporting)) == 5  # the answering sentence and four more, each cited
