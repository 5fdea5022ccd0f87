"""`eval --task answer --export ragas|deepeval OUT`: every question's input, answer, retrieved contexts and
reference in the field names Ragas or DeepEval read, so a team scores the answers with them, and agentrag
depends on neither.

Ragas (0.2 and later): one `SingleTurnSample` per record, read by `EvaluationDataset.from_jsonl(OUT)` (or
`from_list` of the JSON array): `user_input`, `response`, `retrieved_contexts`, `reference`, and the ids its
ID-based context metrics compare, `retrieved_context_ids` (the document of each context) and
`reference_context_ids` (the relevant passages of qrels.tsv). DeepEval: one `Golden` per record, read by
`EvaluationDataset().add_goldens_from_jsonl_file(OUT)` (or `add_goldens_from_json_file` /
`add_test_cases_from_json_file` of the JSON array): `input`, `actual_output`, `retrieval_context`,
`expected_output`, `name` and `additional_metadata`.

OUT ending in `.json` is one JSON array; anything else is JSON Lines (one record a line). A question with
several accepted answers has the first as its reference; all of them are in DeepEval's metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrag.vocab import ExportFormat


@dataclass(frozen=True)
class AnswerSample:
    """One asked question, as the export formats need it."""

    qid: str
    question: str
    answer: str
    contexts: list[str]
    context_ids: list[str]  # the document each context comes from (a corpus `_id` in a benchmark dataset)
    answers: list[str] = field(default_factory=list)  # the accepted answers, when the dataset has any
    relevant: list[str] = field(default_factory=list)  # the relevant corpus ids of qrels.tsv
    confidence: str | None = None
    stop_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _ragas(sample: AnswerSample) -> dict[str, Any]:
    record: dict[str, Any] = {
        "user_input": sample.question,
        "response": sample.answer,
        "retrieved_contexts": sample.contexts,
        "reference": sample.answers[0] if sample.answers else None,
        "retrieved_context_ids": sample.context_ids,
    }
    if sample.relevant:
        record["reference_context_ids"] = sample.relevant
    return record


def _deepeval(sample: AnswerSample) -> dict[str, Any]:
    return {
        "input": sample.question,
        "actual_output": sample.answer,
        "retrieval_context": sample.contexts,
        "expected_output": sample.answers[0] if sample.answers else None,
        "name": sample.qid,
        "input_token_count": sample.prompt_tokens,
        "output_token_count": sample.completion_tokens,
        "additional_metadata": {
            "qid": sample.qid,
            "answers": sample.answers,
            "confidence": sample.confidence,
            "stop_reason": sample.stop_reason,
            "retrieved_context_ids": sample.context_ids,
        },
    }


RECORD = {ExportFormat.RAGAS: _ragas, ExportFormat.DEEPEVAL: _deepeval}


def export_records(samples: list[AnswerSample], fmt: ExportFormat) -> list[dict[str, Any]]:
    return [RECORD[fmt](sample) for sample in samples]


def write_export(samples: list[AnswerSample], fmt: ExportFormat, out: Path) -> int:
    """Write the samples to `out` (a JSON array for `.json`, else JSON Lines); returns how many were written."""
    records = export_records(samples, fmt)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".json":
        text = json.dumps(records, ensure_ascii=False, indent=2) + "\n"
    else:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    temp = out.with_name(out.name + ".partial")  # a failed write leaves any earlier export whole
    temp.write_text(text, encoding="utf-8")
    temp.replace(out)
    return len(records)
