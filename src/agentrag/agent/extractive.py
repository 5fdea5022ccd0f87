"""The model-free synthesizer: an answer a user can act on, written from the passages' own words.

    600 requests per minute[1].                                   the short answer, when the type has one
    Sources disagree; the newer one is in force:                  conflicting sources, newest first (or: none
                                                                  is known to be newer, when dates do not tell)
    According to <title>, <date>: <its sentence>[n]
    <the chain that led to the answer, then the answering sentence, then the best other sentences>[n]
    Nothing in the knowledge base says: <a part that found no answer>.

Every sentence is a unit of one passage (units.py) and carries its `[n]`. Supporting sentences beyond the
answering ones are picked for the question and each sub-query with maximal marginal relevance (MMR).
When nothing answers the question it says so first, and the closest passages follow, labelled as such.
"""

from __future__ import annotations

import re

from agentrag.agent.assess import Assessment, PartAnswer, assess
from agentrag.agent.attribution import attribution
from agentrag.agent.citations import attach_markers
from agentrag.agent.context import Context
from agentrag.agent.question import Constraint, analyze
from agentrag.agent.selection import W_SUBJECT, Selector, relevance
from agentrag.agent.units import Unit
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk, tokenize_query
from agentrag.types import SubQuery
from agentrag.vocab import AnswerType, Confidence

_NAMED = frozenset({AnswerType.PERSON, AnswerType.PLACE, AnswerType.ENTITY})  # answers that name a thing
RUNNERS = 2  # the best-scored units of a part looked at for the first supporting sentence
LIST_UNITS = 2  # sentences a list question (or one side of a comparison) is answered with
_ENDS = re.compile(r"[。！？；.!?;:：…][\"'”’」』）)】》]*$")
_SEMICOLON_END = re.compile(r"\s*[;；]$")
_TAIL = 30  # characters: the end of a sentence, its markers included, that tells its script
_LATIN_WORDS = re.compile(r"[A-Za-z]+[\s,:]+[A-Za-z]+")  # English words, not "FishBase" or "1、70、71"


def nothing_found(zh: bool) -> str:
    return "知识库中没有找到能回答这个问题的内容。" if zh else "Nothing in the knowledge base answers this question."


def _not_answering(zh: bool) -> str:
    return (
        "知识库中没有找到明确回答这个问题的内容。以下是最接近的内容（并未回答这个问题）："
        if zh
        else "Nothing in the knowledge base clearly answers this question. "
        "The closest passages, which do not answer it:"
    )


def _denied(zh: bool) -> str:
    if zh:
        return "检索到的段落与问题的前提不符："
    return "The passages contradict what the question takes for granted:"


def _unverified(zh: bool) -> str:
    return (
        "知识库中没有明确陈述答案的内容。以下是与问题最相关的段落："
        if zh
        else "Nothing in the knowledge base states the answer plainly. The passages most relevant to the question:"
    )


def _says_nothing(item: str, zh: bool) -> str:
    return f"知识库中没有找到关于“{item}”的内容。" if zh else f"Nothing in the knowledge base says: {item}."


def _ended(text: str, zh: bool) -> str:
    """A unit as a sentence: a table row or a heading-like line gets the full stop it lacks, the answer's, but an
    English sentence or row quoted in a Chinese answer ends in "."; so does a clause that ended at a semicolon in its
    passage ("…附近有多个住宅小区；", "…count as failures;"), which, quoted alone, read as cut off."""
    text = _SEMICOLON_END.sub("", text)
    if _ENDS.search(text):
        return text
    return text + ("。" if zh and (has_cjk(text) or not _LATIN_WORDS.search(text)) else ".")


def _one_after_another(sentences: list[str], zh: bool) -> str:
    """Sentences as a paragraph: in English a space between them; in Chinese none, except after a sentence that ends
    in Latin script, so English sentences quoted in a Chinese answer are not run together ("…only E5003.AI-3
    Shorten…"), while one ending "又译-{zh:皇堡;" still runs on."""
    if not zh:
        return " ".join(sentences)
    out = ""
    for sentence in sentences:
        out += f" {sentence}" if out and not has_cjk(out[-_TAIL:]) else sentence
    return out


def _states_any(selector: Selector, constraints: list[Constraint], unit: Unit) -> bool:
    return any(selector.states(c, unit) >= 1.0 for c in constraints)


def _distinct(units: list[Unit]) -> list[Unit]:
    """The units in order, each sentence once: two copies of a passage give the same sentence twice."""
    seen: set[str] = set()
    out: list[Unit] = []
    for unit in units:
        key = normalize_for_match(unit.text)
        if key not in seen:
            seen.add(key)
            out.append(unit)
    return out


def _similar(a: Unit, b: Unit) -> float:
    if not a.tokens or not b.tokens:
        return 0.0
    return len(a.tokens & b.tokens) / len(a.tokens | b.tokens)


class ExtractiveSynthesizer:
    def __init__(self, sentences_per_query: int = 2, max_sentences: int = 5, mmr_lambda: float = 0.7) -> None:
        self.per_query = sentences_per_query
        self.max_sentences = max_sentences
        self.mmr_lambda = mmr_lambda

    def answer(
        self,
        question: str,
        subqueries: list[SubQuery],
        context: Context,
        missing: list[str],
        weak: bool = False,
        assessment: Assessment | None = None,
    ) -> str:
        """`weak`: nothing passed the grader, so say that first and offer the closest passages as such."""
        assessment = assessment or assess(analyze(question), context, subqueries)
        zh = assessment.analysis.language == "zh"
        if not assessment.units:
            return nothing_found(zh)
        selector = Selector(context, assessment.units)
        if weak or not assessment.answered:
            denials = assessment.denials
            limit = self.max_sentences - len(denials)
            # Each part's best, once: two parts (the two sides of a comparison) may rank the same sentence first.
            best = _distinct([s.unit for p in assessment.parts for s in p.ranked[:1] if s.unit not in denials])
            best = best[: max(limit, 0)]
            closest = best + self._mmr_fill(selector, question, subqueries, [*denials, *best], limit - len(best))
            weak_lines = [_denied(zh), self._join(denials, zh)] if denials else []
            weak_lines += [_not_answering(zh), self._join(closest, zh)]
            if missing:
                weak_lines.append(("" if zh else " ").join(_says_nothing(item, zh) for item in missing))
            return "\n".join(weak_lines)
        lines: list[str] = []
        shown: list[Unit] = []
        lead = self._short_line(assessment, zh)
        if lead:
            lines.append(lead)
        elif assessment.confidence == Confidence.LOW:  # the passages below are on the question, not checked answers
            lines.append(_unverified(zh))
        for part in assessment.parts:
            lines.extend(self._conflict_lines(part, context, shown, zh))
        answering = [u for p in assessment.parts if p.answered for u in self._answering_units(p)]
        if assessment.same is not None:  # the sentences each side's value was read from
            answering = [unit for _, _, unit in assessment.same.values] + answering
        answering = [u for u in dict.fromkeys(answering) if u not in shown]
        shown.extend(answering)
        # A table row about another key (E1001's row for a question about E1042) is about something else.
        constraints = [c for p in assessment.parts for c in p.part.constraints]
        off = frozenset(
            u for u in assessment.units if u.kind == "row" and constraints and not _states_any(selector, constraints, u)
        )
        # The chain is how the answer was reached, shown on top of the sentences that support it, not instead.
        chained = {u for p in assessment.parts for u in p.chain}
        budget = self.max_sentences - len([u for u in answering if u not in chained])
        # The units the selector scored best for a part hold its answer when the pick went wrong: one, first.
        taken = {*shown, *off}
        runner = [s.unit for p in assessment.parts if p.answered for s in p.ranked[:RUNNERS] if s.unit not in taken]
        runner = runner[: min(1, max(budget, 0))]
        shown.extend(runner)
        about = self._about_answer(assessment, selector, [*shown, *off])[: max(budget - len(runner), 0)]
        runner += about
        shown.extend(about)
        more = runner + self._mmr_fill(selector, question, subqueries, shown, budget - len(runner), off)
        support = _distinct(answering + more)
        lines.append(self._join(support, zh))
        gaps = [*(p.part.text for p in assessment.parts if not p.answered and len(assessment.parts) > 1), *missing]
        if gaps:
            lines.append(("" if zh else " ").join(_says_nothing(item, zh) for item in gaps))
        return "\n".join(line for line in lines if line)

    # ------------------------------------------------------------------------------------------ pieces

    @staticmethod
    def _about_answer(assessment: Assessment, selector: Selector, taken: list[Unit]) -> list[Unit]:
        """The opening sentence of the passage about what the answer names, when none of it is shown yet: what the
        answer is ("Robbie Rogers" → "Robbie Rogers is an American soccer player")."""
        out: list[Unit] = []
        shown = {u.block for u in taken}
        for part in assessment.parts:
            lead = part.lead
            if lead is None or part.part.answer_type not in _NAMED or has_cjk(lead[0]):
                continue
            key = normalize_for_match(lead[0])
            for unit in selector.units:
                title = selector.title(unit.block)
                if unit.block not in shown and unit not in out and key and title.startswith(key):
                    out.append(unit)  # the block's units come in order: the first is its opening
                    break
        return out

    @staticmethod
    def _answering_units(part: PartAnswer) -> list[Unit]:
        if part.best is None:
            return []
        if part.part.answer_type == AnswerType.LIST:  # a list is more than one sentence: the next best that meet it
            more = [s.unit for s in part.ranked if s.met and s.unit != part.best.unit][: LIST_UNITS - 1]
            return [*part.chain, part.best.unit, *more]
        return [*part.chain, part.best.unit]

    @staticmethod
    def _short_line(assessment: Assessment, zh: bool) -> str:
        sides = [p for p in assessment.parts if p.part.side and p.part.answer_type == AnswerType.YES_NO]
        if assessment.same is not None:  # "No — Tiger Please: Welsh; Black Rebel Motorcycle Club: American."
            each = [attach_markers(f"{side}: {value}", [unit.block]) for side, value, unit in assessment.same.values]
            verdict = assessment.same.answer.capitalize()
            return f"{verdict} — {'；'.join(each)}。" if zh else f"{verdict} — {'; '.join(each)}."
        if assessment.shared is not None:
            pieces = [attach_markers(assessment.shared.value, [u.block for u in assessment.shared.units])]
        elif sides and len(sides) == len(assessment.parts) and all(p.lead for p in sides):
            # "Were both X and Y actors?": one answer, then each side's ("No — X: no; Y: yes"), not "no; yes".
            each = [attach_markers(f"{p.part.side}: {lead[0]}", [lead[1]]) for p in sides if (lead := p.lead)]
            verdict = (assessment.short_answer or "").capitalize()
            return f"{verdict} — {'；'.join(each)}。" if zh else f"{verdict} — {'; '.join(each)}."
        else:
            pieces = [attach_markers(lead[0], [lead[1]]) for p in assessment.parts if (lead := p.lead) is not None]
        if not pieces:
            return ""
        return ("；".join(dict.fromkeys(pieces)) + "。") if zh else ("; ".join(dict.fromkeys(pieces)) + ".")

    @staticmethod
    def _conflict_lines(part: PartAnswer, context: Context, shown: list[Unit], zh: bool) -> list[str]:
        if part.conflict is None:
            return []
        if part.conflict.conflict.current is not None:
            lead = "各来源说法不一，以较新的为准：" if zh else "Sources disagree; the newer one is in force:"
        else:  # undated, or dated alike: nothing says which one is in force, so the answer does not claim one
            lead = "各来源说法不一，无法判断以哪个为准：" if zh else "Sources disagree; none is known to be newer:"
        lines = [lead]
        for entry in part.conflict.conflict.values:
            unit = part.conflict.units[entry.n]
            shown.append(unit)
            prefix = attribution(context.blocks[entry.n - 1].evidence.chunk.title, entry.date, zh)
            lines.append(attach_markers(_ended(f"{prefix}{unit.text}", zh), [entry.n]))
        return lines

    def _mmr_fill(
        self,
        selector: Selector,
        question: str,
        subqueries: list[SubQuery],
        shown: list[Unit],
        limit: int,
        off: frozenset[Unit] = frozenset(),
    ) -> list[Unit]:
        """The best further sentences for the question and each sub-query, diverse (MMR), none of `off`."""
        chosen: list[Unit] = []
        queries = [question] + [s.query for s in subqueries if s.query != question]
        asked = set(tokenize_query(question))
        for query in queries:
            wanted = set(tokenize_query(query)) | (asked if query != question else set())
            for _ in range((limit if len(queries) == 1 else self.per_query) if query == question else 1):
                if len(chosen) >= limit:
                    return chosen
                pick = self._mmr(selector, [*shown, *chosen], wanted, question, off)
                if pick is None:
                    break
                chosen.append(pick)
        return chosen

    def _mmr(
        self,
        selector: Selector,
        taken: list[Unit],
        wanted: set[str],
        question: str = "",
        off: frozenset[Unit] = frozenset(),
    ) -> Unit | None:
        best, best_score = None, -1.0
        said = {normalize_for_match(x.text) for x in taken}  # the same sentence from another copy of a passage
        for unit in selector.units:
            if unit in taken or unit in off or normalize_for_match(unit.text) in said:
                continue
            redundancy = max((_similar(unit, x) for x in taken), default=0.0)
            fit = 0.75 * relevance(unit.tokens, wanted, selector.idf) + 0.25 * selector.prior(unit)
            if question and selector.names_page(question, unit.block):
                fit += W_SUBJECT  # Chinese: a sentence of the page the question names
            score = self.mmr_lambda * fit - (1 - self.mmr_lambda) * redundancy
            if score > best_score:
                best, best_score = unit, score
        return best

    @staticmethod
    def _join(units: list[Unit], zh: bool) -> str:
        return _one_after_another([attach_markers(_ended(u.text, zh), [u.block]) for u in units], zh)
