"""The model-free roles: router, planner, grader cut, rewriter, citations, synthesizer context."""

import datetime as dt

import pytest

from agentrag.agent.assess import Assessment, assess
from agentrag.agent.budget import BudgetTracker, load_preset
from agentrag.agent.citations import CitationChecker, attach_markers
from agentrag.agent.context import Context
from agentrag.agent.planner import bridge_entities, bridge_queries, comparison_entities, rule_plan
from agentrag.agent.question import analyze
from agentrag.agent.rewriter import rule_standalone, strip_filler
from agentrag.agent.router import route, rule_route
from agentrag.agent.synthesizer import ELLIPSIS, ExtractiveSynthesizer, build_context, compress
from agentrag.errors import ConfigError
from agentrag.types import Chunk, Evidence, Hit, SubQuery


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("你好", "none"),
        ("thanks!", "none"),
        ("你能做什么？", "none"),
        ("What is the default rate limit of the Aurora API?", "simple"),
        ("出差住宿标准是多少？", "simple"),
        ("广茂铁路全长多少公里？", "simple"),
        ("标准版和企业版有什么区别？", "complex"),
        ("Compare Aurora 2.3 and 3.0", "complex"),
        ('Which came to market first, "Hey Pa! There\'s a Goat on the Roof" or "Poleconomy"?', "complex"),
        ("为什么 Kestrel 会积压？", "complex"),
        ("Who owns the service that caused INC-2291?", "complex"),
        ("What is the record label of the person who sang Hello Love?", "complex"),
        # English nests an entity in more ways than "the X that": each needs the bridge-following loop.
        ("Which retired Brazilian goalkeeper who played for Santos won the 1970 World Cup?", "complex"),
        ("What studio co-founded by Ann Lee and Bo Chen made The Lantern?", "complex"),
        ("In which year did this league, where Hull City finished second in 2004, take its current name?", "complex"),
        ('In what year was the bassist from the album "Night Ferry" born?', "complex"),
        # Reduced relative clauses, participles and owned relations name an entity through another one too.
        ("What year did the airline Nordic Sky Express is part of go bankrupt?", "complex"),
        ("When did the country containing Kandy leave the British Empire?", "complex"),
        ("What river flows through the city Ana Ruiz played for before Madrid?", "complex"),
        ("Who did Tom Berry's team play in the final last year?", "complex"),
        ("Who is the spouse of Night Ferry's main director?", "complex"),
        ("What is the Aurora API's rate limit?", "simple"),
        ("When was the Aurora API released?", "simple"),
        # What two things have in common, or share, is read off each one's page: a comparison.
        ("What professions did S. Sylvan Simon and Danny Cannon have in common?", "complex"),
        ("What profession did Willi Forst and Elmer Clifton share?", "complex"),
    ],
)
def test_router_rules(question: str, kind: str) -> None:
    assert rule_route(question).kind == kind


def test_without_a_model_an_unsure_question_takes_the_loop() -> None:
    """A long question with no cue is unsure: with no model to decide, the loop (which then costs only searches)
    rather than one search."""
    question = "Harold Brent Wallis as producer and Humphrey Bogart as actor collaborated to make what 1942 film?"
    assert not rule_route(question).sure
    decided = route(question, None)
    assert decided.kind == "complex"
    assert decided.cue == "bridge"


@pytest.mark.parametrize(
    "question", ["What county is Ron Teachworth from?", "The 22nd AVN Awards took place in what Nevada county?"]
)
def test_which_county_a_thing_is_in_may_need_a_hop_so_the_rules_are_unsure(question: str) -> None:
    """A page names the town, the town's page its county: one search or two, so the LLM decides where there is
    one and the loop answers without; a short question with no such kind stays one search."""
    assert not rule_route(question).sure
    assert route(question, None).kind == "complex"
    assert rule_route("What year was Ron Teachworth born?").sure


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        # "the first president" is an ordinal, not "which came first": a bridge to follow, not options to compare.
        ("Who was the first president of the society which publishes Ocean Letters?", "bridge"),
        ("Who was born first, Ann Lee or Bo Chen?", "comparison"),
        ("Who was born first of Ann Lee and Bo Chen", "comparison"),
        # An ordinal inside a relative clause compares nothing: the question names no two things.
        ("Progress MS-09 was used to resupply the satellite that first launched into orbit in what year?", "bridge"),
        ("Sadok Sassi played for a national team that made its first World Cup in what year?", "bridge"),
    ],
)
def test_router_tells_an_ordinal_from_a_comparison(question: str, cue: str) -> None:
    assert rule_route(question).cue == cue


def test_planner_splits_comparisons_into_one_search_per_entity() -> None:
    assert comparison_entities("Which is older, Lyon or Turin?") == ["Lyon", "Turin"]
    assert comparison_entities("标准版和企业版有什么区别？") == ["标准版", "企业版"]
    assert comparison_entities('Are "Skeptics" and "Cosmopolitan" both magazines?') == ["Skeptics", "Cosmopolitan"]
    plan = rule_plan("Which is older, Lyon or Turin?")
    assert [s.query for s in plan] == ["Lyon older", "Turin older"]
    assert rule_plan("What is the rate limit?") == [
        SubQuery(query="What is the rate limit?", intent="answer the question")
    ]


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        # The nationality and faith after the second name are asked of both, not part of the name.
        ("Are both Deerhunter and Nine Lashes American Christian rock bands?", ["Deerhunter", "Nine Lashes"]),
        ("Are both Tim Henman and Wayne Black British?", ["Tim Henman", "Wayne Black"]),
        # A surname that ends like a nationality stays: Sarafian is no demonym.
        ("Are Ana Kasparian and Katherine Sarafian Armenian?", ["Ana Kasparian", "Katherine Sarafian"]),
        ("Are Ana Kasparian and Katherine Sarafian both Armenian?", ["Ana Kasparian", "Katherine Sarafian"]),
    ],
)
def test_a_nationality_after_the_second_name_is_asked_of_both(question: str, sides: list[str]) -> None:
    assert comparison_entities(question) == sides


def evidence(text: str, title: str = "", doc: str = "d", rank: int = 1, grade: str = "ambiguous") -> Evidence:
    chunk = Chunk(chunk_id=f"{doc}#0", doc_id=doc, position=0, text=text, title=title, source=f"/docs/{doc}.md")
    return Evidence(hit=Hit(chunk=chunk, score=1.0, rank=rank), grade=grade)  # type: ignore[arg-type]


def test_bridge_entities_come_from_the_best_passages_not_the_question() -> None:
    found = [
        evidence("Billy McFarland is an American con man. He founded the Fyre Festival in 2017.", "Billy McFarland"),
        evidence("Ja Rule is a rapper who co-founded the Fyre Festival with McFarland.", "Ja Rule", doc="e", rank=2),
    ]
    question = "Where was the music festival Billy McFarland was charged for supposed to take place?"
    entities = bridge_entities(question, found)
    assert entities[0] == "Fyre Festival"
    assert all("McFarland" not in e for e in entities)


def test_words_that_only_open_a_line_or_sentence_are_not_bridges() -> None:
    # A postmortem's timeline: capitalised words that open its lines ("Root", "Queue") are ordinary words; the
    # service named inside a sentence (and with a possessive) is the next hop, and no name runs across lines.
    timeline = (
        "14:45  Root cause confirmed: the pool setting is empty in the rendered worker configuration.\n"
        "15:02  Queue starts draining after Kestrel's workers restart.\n"
        "Requests rejected during the incident were retried."
    )
    found = [
        evidence(timeline, "INC-2291 Postmortem"),
        evidence("The incident was caused by Kestrel, our indexing pipeline.", "INC-2291 Summary", doc="e", rank=2),
    ]
    entities = bridge_entities("Who owns the service that caused INC-2291?", found)
    assert entities[0] == "Kestrel"
    assert not {"Root", "Queue", "Requests"} & set(entities)
    assert all("\n" not in e and "'s" not in e for e in entities)


def test_a_header_block_field_does_not_lend_the_anchor_to_the_other_fields() -> None:
    header = (
        "INC-2291 Postmortem\n\nIncident:   INC-2291\nDate:       2025-02-26\nSeverity:   SEV-2\n"
        "Status:     Resolved\nCommander:  Liu Yang"
    )
    found = [
        evidence(header, "INC-2291 Postmortem"),
        evidence("The incident was caused by Kestrel, our indexing pipeline.", "Summary", doc="e", rank=2),
    ]
    assert bridge_entities("What is the indexing quota of the service that caused INC-2291?", found)[0] == "Kestrel"


def test_a_header_blocks_fields_that_the_question_does_not_ask_about_are_no_bridges() -> None:
    """The best passage is the record's header; its severity, status and commander say nothing of what caused the
    incident, so the service two passages down is followed, not "SEV-2" or "Resolved"."""
    header = (
        "INC-2291 Postmortem\n\nIncident:   INC-2291\nDate:       2025-02-26\nSeverity:   SEV-2\n"
        "Status:     Resolved\nCommander:  Liu Yang"
    )
    found = [
        evidence(header, "INC-2291 Postmortem"),
        evidence("Alerts reached the on-call engineer within a minute.", "Timeline", doc="t", rank=2),
        evidence("The incident was caused by Kestrel, our indexing pipeline.", "Summary", doc="e", rank=3),
    ]
    entities = bridge_entities("Who owns the service that caused INC-2291?", found)
    assert entities[0] == "Kestrel"
    assert not {"SEV-2", "Resolved", "Liu Yang"} & set(entities)


def test_a_sentence_opening_word_with_a_number_after_it_is_no_bridge() -> None:
    found = [
        evidence(
            "Release 2025.02.26-1 replaced Kestrel's worker settings.\nThe Kestrel release then rolled out.",
            "INC-2291 Postmortem",
        )
    ]
    entities = bridge_entities("Who owns the service that caused INC-2291?", found)
    assert entities == ["Kestrel"]


def test_a_follow_up_leaves_the_anchors_document_when_every_passage_is_from_it() -> None:
    """Five passages, all of the postmortem: the bridge is also searched with only what is asked of it, since the
    anchor's words would pull the search back to the postmortem."""
    found = [
        evidence(f"Step {n}: the Kestrel queue grew and was drained.", "INC-2291 Postmortem", rank=n) for n in range(5)
    ]
    found[0] = evidence("The incident was caused by Kestrel, our indexing pipeline.", "INC-2291 Postmortem")
    queries = [q.query for q in bridge_queries("Who owns the service that caused INC-2291?", found)]
    assert queries[:2] == ["Kestrel Who owns the service that caused INC-2291?", "Kestrel Who owns the service"]
    other = [*found[:4], evidence("Kestrel is run by the data team.", "Team list", doc="team", rank=5)]
    queries = [q.query for q in bridge_queries("Who owns the service that caused INC-2291?", other)]
    assert "Kestrel Who owns the service" not in queries, "the first round already reached another document"


def test_filler_is_stripped_and_follow_ups_carry_the_previous_question() -> None:
    assert strip_filler("请问出差住宿标准是多少？") == "出差住宿标准是多少？"
    assert strip_filler("Can you tell me what E1042 means?") == "what E1042 means?"
    assert rule_standalone("那企业版呢？", ["标准版的价格是多少？"]) == "标准版的价格是多少，那企业版呢？"
    assert "Aurora" in rule_standalone("and its rate limit?", ["What is Aurora?"])
    assert rule_standalone("What does E1042 mean?", ["What is Aurora?"]) == "What does E1042 mean?"


def chunk(n: int, text: str, doc: str | None = None, date: dt.date | None = None) -> Chunk:
    doc = doc or f"d{n}"
    return Chunk(
        chunk_id=f"{doc}#0", doc_id=doc, position=0, text=text, title=f"Doc {n}", source=f"/d/{doc}.md", date=date
    )


def test_citation_check_keeps_supported_and_flags_the_rest() -> None:
    passages = [
        chunk(1, "The default rate limit is 600 requests per minute per API key."),
        chunk(2, "Enterprise keys get 3,000 requests per minute."),
    ]
    checked = CitationChecker().check(
        "The default rate limit is 600 requests per minute [1]. Enterprise keys get 3,000 [2]. "
        "Keys never expire [2]. Aurora was founded in 1999 [5]. The documents do not say how keys are rotated.",
        passages,
    )
    assert [c.n for c in checked.citations] == [1, 2]
    assert checked.citations[0].quote.startswith("The default rate limit is 600")
    assert checked.unsupported == ["Keys never expire.", "Aurora was founded in 1999."]
    assert "Keys never expire[unverified]" not in checked.text
    assert "Keys never expire. [unverified]" in checked.text
    assert "[5]" not in checked.text
    assert "how keys are rotated" in checked.text


def test_a_sentence_attributed_to_its_sources_document_is_checked_on_the_rest_of_it() -> None:
    """ "According to <title>, <date>: …" names the cited passage's document and date (its metadata, not its
    text): the words after it are checked against the text, with no embedding, which every such sentence of a
    "sources disagree" answer needed before. An attribution to another document is no support."""
    passages = [
        chunk(1, "| 城市类别 | 员工 |\n| --- | --- |\n| 一线城市 | 500 元/晚 |", date=dt.date(2024, 12, 20)),
        chunk(2, "The hotel cap is 450 a night in tier-one cities.", date=dt.date(2024, 2, 20)),
    ]
    answer = (
        "各来源说法不一，以较新的为准：\n据《Doc 1》（2024-12-20）：一线城市，员工: 500 元/晚。[1]\n"
        "According to Doc 2, 2024-02-20: the hotel cap is 450 a night in tier-one cities.[2]\n"
        "According to Doc 1, 2024-12-20: the hotel cap is 450 a night in tier-one cities.[2]"
    )
    checked = CitationChecker().check(answer, passages)
    assert [c.n for c in checked.citations] == [1, 2]
    assert checked.citations[1].quote == "The hotel cap is 450 a night in tier-one cities."
    assert checked.unsupported == ["According to Doc 1, 2024-12-20: the hotel cap is 450 a night in tier-one cities."]


def test_citation_markers_after_the_full_stop_stay_with_their_sentence() -> None:
    passages = [chunk(1, "员工出差住宿标准为每晚五百元。"), chunk(2, "报销单需在三十天内提交。")]
    checked = CitationChecker().check("住宿标准为每晚五百元。[1]报销单需在三十天内提交。[2]", passages)
    assert checked.unsupported == []
    assert checked.text == "住宿标准为每晚五百元[1]。报销单需在三十天内提交[2]。"
    assert attach_markers("Done.", [1, 2]) == "Done[1][2]."


def test_a_title_with_an_exclamation_mark_is_cited_once_at_its_end() -> None:
    """The short answer "Hey Pa! There's a Goat on the Roof" stays whole: no marker lands inside the title."""
    passages = [chunk(1, "Hey Pa! There's a Goat on the Roof was a children's board game issued in 1966.")]
    checked = CitationChecker().check("Hey Pa! There's a Goat on the Roof[1].", passages)
    assert checked.text == "Hey Pa! There's a Goat on the Roof[1]."
    assert [c.n for c in checked.citations] == [1]


def test_english_sentences_keep_their_space_in_an_answer_that_quotes_chinese() -> None:
    passages = [chunk(1, "According to 《北风实验室差旅费管理办法》: the hotel cap is 450 a night.")]
    checked = CitationChecker().check(
        "Sources disagree; none is known to be newer:\nAccording to 《北风实验室差旅费管理办法》: the hotel cap is 450 "
        "a night [1].",
        passages,
    )
    assert checked.text.startswith("Sources disagree; none is known to be newer:"), checked.text


def test_context_is_compressed_at_sentence_boundaries_under_the_budget() -> None:
    long_text = " ".join(f"Sentence {i} talks about topic {i}." for i in range(60)) + " The rate limit is 600."
    assert compress(long_text, "rate limit", 30).endswith("The rate limit is 600.")
    assert ELLIPSIS in compress(long_text, "rate limit", 30)
    items = [evidence(long_text, "A", "a"), evidence("Short passage about the rate limit.", "B", "b", 2)]
    context = build_context(items, "rate limit", max_tokens=200, max_passages=8)
    assert context.blocks[0].compressed
    assert ELLIPSIS in context.blocks[0].text
    assert all(not b.text.endswith(("Sentence", "topic")) for b in context.blocks)


def test_extractive_answer_cites_each_sentence_and_shows_conflicts_side_by_side() -> None:
    old = evidence("The hotel cap in tier-1 cities is 450 yuan per night.", "Travel policy 2024", "old")
    new = evidence("The hotel cap in tier-1 cities is 500 yuan per night.", "Expense policy 2025", "new", 2)
    old.hit.chunk.date, new.hit.chunk.date = dt.date(2024, 3, 1), dt.date(2025, 1, 1)
    context = build_context([old, new], "hotel cap", 2000, 8)
    text = ExtractiveSynthesizer().answer("What is the hotel cap in tier-1 cities?", [], context, [])
    assert "450 yuan per night[1]." in text
    assert "500 yuan per night[2]." in text
    assert "According to Travel policy 2024, 2024-03-01:" in text
    assert "According to Expense policy 2025, 2025-01-01:" in text
    assert text.index("According to Expense policy 2025") < text.index("According to Travel policy 2024"), (
        "newest first"
    )
    assert "the newer one is in force" in text
    missing = ExtractiveSynthesizer().answer("What about Kestrel's SLA?", [], context, ["Kestrel SLA"])
    assert "Nothing in the knowledge base says: Kestrel SLA." in missing


HOTEL_CAP = "What is the hotel cap in tier-1 cities?"


def hotel_caps(*sources: tuple[str, str, dt.date | None]) -> tuple[Assessment, str]:
    """Passages stating a hotel cap (value, title, date), ranked in the order given: the assessment and the
    extractive answer."""
    items = []
    for i, (value, title, date) in enumerate(sources):
        item = evidence(f"The hotel cap in tier-1 cities is {value} yuan per night.", title, f"d{i}", i + 1)
        item.hit.chunk.date = date
        items.append(item)
    context = build_context(items, "hotel cap", 2000, 8)
    return assess(analyze(HOTEL_CAP), context, []), ExtractiveSynthesizer().answer(HOTEL_CAP, [], context, [])


def test_three_sources_in_any_ranking_are_shown_newest_first_with_the_newest_in_force() -> None:
    assessment, text = hotel_caps(
        ("450", "Travel policy", dt.date(2024, 3, 1)),
        ("400", "Old travel policy", dt.date(2023, 1, 1)),
        ("500", "Expense policy", dt.date(2025, 1, 1)),  # the newest ranks last
    )
    [conflict] = assessment.conflicts
    assert [(v.value, v.n) for v in conflict.values] == [("500", 3), ("450", 1), ("400", 2)]
    assert conflict.current == "500"
    assert assessment.short_answer == "500"
    assert text.startswith("500[3].")
    lines = [line for line in text.splitlines() if line.startswith("According to")]
    assert [line.split(",")[0] for line in lines] == [
        "According to Expense policy",
        "According to Travel policy",
        "According to Old travel policy",
    ]


def test_the_same_value_in_two_sources_is_no_conflict() -> None:
    assessment, text = hotel_caps(
        ("500", "Travel policy", dt.date(2024, 3, 1)), ("500", "Expense policy", dt.date(2025, 1, 1))
    )
    assert assessment.conflicts == []
    assert assessment.short_answer == "500"
    assert "Sources disagree" not in text


@pytest.mark.parametrize(
    "dates",
    [(None, None), (dt.date(2025, 1, 1), dt.date(2025, 1, 1))],
    ids=["undated", "same-date"],
)
def test_sources_that_disagree_with_no_newer_one_are_shown_without_claiming_one_in_force(
    dates: tuple[dt.date | None, dt.date | None],
) -> None:
    assessment, text = hotel_caps(("450", "Travel policy", dates[0]), ("500", "Expense policy", dates[1]))
    [conflict] = assessment.conflicts
    assert {v.value for v in conflict.values} == {"450", "500"}
    assert conflict.current is None
    assert "Sources disagree" in text
    assert "in force" not in text, "nothing says which one is newer"
    assert "450 yuan per night[1]" in text
    assert "500 yuan per night[2]" in text


def test_budget_presets_and_overrides() -> None:
    balanced = load_preset("balanced")
    assert (balanced.max_llm_calls, balanced.max_retrieval_calls, balanced.max_seconds) == (6, 8, 60.0)
    assert balanced.llm_timeout_s < balanced.max_seconds
    assert load_preset("fast", {"max_seconds": 5}).max_seconds == 5
    with pytest.raises(ConfigError, match="unknown preset"):
        load_preset("turbo")
    with pytest.raises(ConfigError, match="max_llm_calls"):
        load_preset("balanced", {"max_llm_calls": -1})
    tracker = BudgetTracker(load_preset("fast", {"max_retrieval_calls": 2}))
    tracker.spend_retrieval(2)
    assert not tracker.can_retrieve()
    assert tracker.exhausted() == "retrieval calls (2)"


def test_a_nested_budget_override_changes_only_the_inner_field_given() -> None:
    from agentrag.agent.budget_overrides import check_overrides, nest_dotted

    preset = load_preset("fast")
    overrides = check_overrides(nest_dotted({"context_split.history": "0.3", "max_rounds": "1"}))
    assert overrides == {"context_split": {"history": 0.3}, "max_rounds": 1}
    budget = load_preset("fast", overrides)
    assert budget.context_split.history == 0.3
    assert budget.context_split.evidence == preset.context_split.evidence
    assert budget.max_rounds == 1
    with pytest.raises(ConfigError, match="histroy"):
        check_overrides({"context_split": {"histroy": 0.3}})


VELDONIA = "Who is the current opposition leader in Veldonia?"


def veldonia() -> Context:
    """A passage sharing most of the question's words, another country's leader, and the answer, ranked last."""
    items = [
        evidence(
            "Who the current opposition leader in Veldonia is matters: the current opposition leader in Veldonia "
            "leads the opposition.",
            "Opposition in Veldonia",
            "b",
        ),
        evidence("Ivo Lind is the current opposition leader in Castrane.", "Castrane", "c", 2),
        evidence(
            "Hon. Mara Velt of the Green Forum is the current Leader of Opposition in Veldonia.", "Leader (V)", "a", 3
        ),
    ]
    return build_context(items, VELDONIA, 2000, 8)


def test_the_best_scored_sentence_is_shown_when_the_answer_was_picked_elsewhere() -> None:
    """When the short answer came from another unit (a bridge followed, a chain), the unit the selector scored best
    for the question is still among the supporting sentences, before those picked for their shared words."""
    question, context = VELDONIA, veldonia()
    assessment = assess(analyze(question), context, [])
    [part] = assessment.parts
    assert part.ranked[0].unit.text.startswith("Hon. Mara Velt")
    part.best, part.short = next(s for s in part.ranked if s.unit.block == 2), "Ivo Lind"  # picked elsewhere
    text = ExtractiveSynthesizer(max_sentences=2).answer(question, [], context, [], assessment=assessment)
    assert text.endswith("Hon. Mara Velt of the Green Forum is the current Leader of Opposition in Veldonia[3].")


def test_the_closest_passage_of_an_unanswered_question_is_the_best_scored_one() -> None:
    """Nothing verified the answer: the closest passages shown begin with the unit the selector scored best, not
    with the one that merely repeats the question's words."""
    context = veldonia()
    assessment = assess(analyze(VELDONIA), context, [])
    [part] = assessment.parts
    part.verdict = "not_found"
    text = ExtractiveSynthesizer(max_sentences=1).answer(VELDONIA, [], context, [], assessment=assessment)
    assert (
        text.splitlines()[1] == "Hon. Mara Velt of the Green Forum is the current Leader of Opposition in Veldonia[3]."
    )


def test_an_unanswered_question_lists_each_closest_sentence_once() -> None:
    """The two sides of a comparison are two parts, and both may rank the same sentence first: "What are the
    differences between Standard and Enterprise?" listed "The only billing difference is …[1]" twice."""
    context = veldonia()
    assessment = assess(analyze(VELDONIA), context, [])
    [part] = assessment.parts
    part.verdict = "not_found"
    assessment.parts.append(part)  # a second part whose best sentence is the first one's
    text = ExtractiveSynthesizer(max_sentences=3).answer(VELDONIA, [], context, [], assessment=assessment)
    closest = text.splitlines()[1]
    best = "Hon. Mara Velt of the Green Forum is the current Leader of Opposition in Veldonia[3]."
    assert closest.startswith(best)
    assert closest.count(best) == 1
