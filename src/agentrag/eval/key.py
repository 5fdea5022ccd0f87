"""Answer keys: for each question, the facts a correct answer must state, and a verdict on an answer.

The sample corpus's key (`agentrag/sample/ANSWER_KEY.json`) is one. A key question lists `facts` (every group
must be stated; a group lists alternative spellings), `some` (at least `at_least` of its groups), `conflict`
(lead with the value in force, show the superseded one with its year) or `not_found` (say it was not found,
stop reason no_evidence). Matching ignores case, width and whitespace.
"""

from __future__ import annotations

import json
import unicodedata
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentrag.types import Answer
from agentrag.vocab import StopReason

NOT_FOUND_PHRASES = ("nothing in the knowledge base", "知识库中没有", "没有找到")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SomeFacts(_Strict):
    at_least: int = Field(ge=1)
    facts: list[list[str]]


class ConflictKey(_Strict):
    current: str
    superseded: str
    superseded_year: str


class KeyQuestion(_Strict):
    id: int
    question: str
    facts: list[list[str]] = Field(default_factory=list)
    some: SomeFacts | None = None
    conflict: ConflictKey | None = None
    not_found: bool = False


class AnswerKey(_Strict):
    about: str = ""
    questions: list[KeyQuestion]


class Verdict(BaseModel):
    correct: bool
    problems: list[str] = Field(default_factory=list)


def load_key(path: Path | None = None) -> AnswerKey:
    """A key file, or the sample corpus's own key."""
    text = (
        path.read_text(encoding="utf-8")
        if path
        else (files("agentrag") / "sample" / "ANSWER_KEY.json").read_text(encoding="utf-8")
    )
    return AnswerKey.model_validate(json.loads(text))


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def _stated(group: list[str], text: str) -> bool:
    return any(_norm(alternative) in text for alternative in group)


def judge(question: KeyQuestion, answer: Answer) -> Verdict:
    text = _norm(answer.answer)
    problems: list[str] = []
    if question.not_found:
        said = any(_norm(p) in text for p in NOT_FOUND_PHRASES)
        if not said:
            problems.append("does not say it was not found")
        if answer.stop_reason != StopReason.NO_EVIDENCE:
            problems.append(f"stop reason {answer.stop_reason}, not no_evidence")
        return Verdict(correct=not problems, problems=problems)
    problems += [f"missing {group[0]!r}" for group in question.facts if not _stated(group, text)]
    if question.some is not None:
        stated = sum(_stated(group, text) for group in question.some.facts)
        if stated < question.some.at_least:
            problems.append(
                f"states {stated} of the facts {[g[0] for g in question.some.facts]}, not {question.some.at_least}"
            )
    if question.conflict is not None:
        problems += _conflict_problems(question.conflict, text)
    return Verdict(correct=not problems, problems=problems)


def _conflict_problems(key: ConflictKey, text: str) -> list[str]:
    current, superseded = text.find(_norm(key.current)), text.find(_norm(key.superseded))
    problems = []
    if current < 0:
        problems.append(f"does not state the value in force {key.current!r}")
    if superseded < 0:
        problems.append(f"does not show the superseded value {key.superseded!r}")
    elif current > superseded:
        problems.append(f"leads with the superseded {key.superseded!r}, not {key.current!r}")
    if _norm(key.superseded_year) not in text:
        problems.append(f"does not date the superseded value ({key.superseded_year})")
    return problems
