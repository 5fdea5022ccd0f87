"""Chinese single-fact questions, model-free: which sentence of the right passage answers, and where its short
answer starts and ends. Every sentence here is made up for the test."""

from __future__ import annotations

from agentrag.agent.planner import comparison_entities, rule_plan
from agentrag.agent.question import analyze


def test_a_noun_pair_inside_the_question_is_not_a_comparison() -> None:
    """ "A和B" after the question word, or a 和 inside a word, names one thing asked about: one search, one part."""
    for question in (
        "青海湖为什么没有渔船和码头？",  # the pair is what the question asks about
        "梅山和平镇位于哪里？",  # 和平 is a word: no 和 to split at
        "老王跟随谁学习书法？",  # 跟随 is a verb
        "这座桥的长度和宽度是多少米？",  # no comparison asked, the pair does not open the question
    ):
        assert comparison_entities(question) == [], question
        assert len(rule_plan(question)) == 1, question
        assert len(analyze(question).parts) == 1, question
    # Comparisons still split: asked to compare, or a pair that opens the question ("A 和 B 的 X").
    assert comparison_entities("红茶和绿茶有什么区别？") == ["红茶", "绿茶"]
    assert comparison_entities("苹果与梨哪个更甜？") == ["苹果", "梨"]
    assert comparison_entities("甲城和乙城的人口各是多少？") == ["甲城", "乙城"]
