"""`agentrag eval --task answer --export ragas|deepeval OUT`: each question's input, answer, retrieved contexts and
reference, in the field names Ragas and DeepEval read.

Neither tool is in agentrag's own venv (Ragas pulls LangChain and Hugging Face `datasets`, DeepEval gRPC,
OpenTelemetry and five pytest plugins), so the records are held to the fields of their dataset classes as
documented in their sources: Ragas 0.4 `SingleTurnSample` (read by `EvaluationDataset.from_jsonl`) and DeepEval
`Golden` (read by `EvaluationDataset.add_goldens_from_jsonl_file` / `add_goldens_from_json_file`). CI also builds
a separate venv with both tools (.ci/evaltools-requirements.txt) and the last test loads the files with their
own classes in it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.eval.data import load_dataset
from tests.helpers import write

runner = CliRunner()

# Every field of ragas.dataset_schema.SingleTurnSample; the first four are the ones the issue names.
RAGAS_FIELDS = {
    "user_input", "response", "retrieved_contexts", "reference", "retrieved_context_ids", "reference_context_ids",
    "reference_contexts", "multi_responses", "rubrics", "persona_name", "query_style", "query_length",
}  # fmt: skip
# The keys deepeval.dataset.EvaluationDataset.add_goldens_from_json(l)_file reads into a Golden by default.
DEEPEVAL_FIELDS = {
    "input", "actual_output", "expected_output", "context", "retrieval_context", "tools_called", "expected_tools",
    "token_cost", "input_token_count", "output_token_count", "comments", "name", "source_file",
    "additional_metadata", "custom_column_key_values",
}  # fmt: skip

CORPUS = [
    {"_id": "d1", "title": "Kestrel", "text": "Kestrel is the queue service. The storage team owns Kestrel."},
    {"_id": "d2", "title": "Storage team", "text": "The storage team is led by Zhang Wei."},
    {"_id": "d3", "title": "Aurora", "text": "Error E1042 means the quota is exhausted."},
    {"_id": "d4", "title": "差旅", "text": "一线城市员工出差住宿标准为每晚五百元。"},
]
QUERIES = [
    {"_id": "q1", "text": "What does error E1042 mean?", "answers": ["quota is exhausted", "the quota ran out"]},
    {"_id": "q2", "text": "一线城市出差住宿标准是多少？", "answers": ["五百元"]},
]


def dataset(root: Path, qrels: bool = True, answers: bool = True) -> Path:
    queries = [q if answers else {k: v for k, v in q.items() if k != "answers"} for q in QUERIES]
    write(root / "corpus.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CORPUS))
    write(root / "queries.jsonl", "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries))
    if qrels:
        write(root / "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td3\t1\nq2\td4\t1\n")
    return root


def export(tmp_path: Path, fmt: str, out: Path, data: Path | None = None) -> list[dict[str, Any]]:
    data = data or dataset(tmp_path / "tiny")
    args = ["eval", str(data), "--home", str(tmp_path / "home"), "--task", "answer", "--export", fmt, str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"2 questions written for {fmt} to {out}" in result.output
    text = out.read_text(encoding="utf-8")
    if out.suffix == ".json":
        records: list[dict[str, Any]] = json.loads(text)
        return records
    assert text.endswith("}\n"), "JSON Lines: one record a line"
    assert "\n\n" not in text, "no blank line (ragas's from_jsonl parses every line)"
    return [json.loads(line) for line in text.splitlines()]


def test_the_ragas_export_has_the_fields_of_a_single_turn_sample(tmp_path: Path) -> None:
    records = export(tmp_path, "ragas", tmp_path / "out" / "ragas.jsonl")
    assert len(records) == 2
    for record in records:
        assert {"user_input", "response", "retrieved_contexts", "reference"} <= set(record) <= RAGAS_FIELDS
        assert all(isinstance(c, str) and c for c in record["retrieved_contexts"])
        assert len(record["retrieved_context_ids"]) == len(record["retrieved_contexts"])
    first, second = records
    assert first["user_input"] == "What does error E1042 mean?"
    assert "quota is exhausted" in first["response"]
    assert first["reference"] == "quota is exhausted", "the first accepted answer"
    assert "Error E1042 means the quota is exhausted." in first["retrieved_contexts"]
    assert "d3" in first["retrieved_context_ids"]
    assert first["reference_context_ids"] == ["d3"]
    assert second["user_input"] == "一线城市出差住宿标准是多少？", "Chinese as written, not escaped"
    assert "五百元" in second["response"]
    assert "一线城市员工出差住宿标准为每晚五百元。" in second["retrieved_contexts"]


def test_the_deepeval_export_as_a_json_array_has_the_fields_of_a_golden(tmp_path: Path) -> None:
    records = export(tmp_path, "deepeval", tmp_path / "deepeval.json")
    assert [r["name"] for r in records] == ["q1", "q2"]
    for record in records:
        assert {"input", "actual_output", "retrieval_context", "expected_output"} <= set(record) <= DEEPEVAL_FIELDS
        assert isinstance(record["additional_metadata"], dict)
        assert record["input_token_count"] == record["output_token_count"] == 0, "model-free: no tokens spent"
    first = records[0]
    assert first["input"] == "What does error E1042 mean?"
    assert "quota is exhausted" in first["actual_output"]
    assert first["expected_output"] == "quota is exhausted"
    assert "Error E1042 means the quota is exhausted." in first["retrieval_context"]
    meta = first["additional_metadata"]
    assert meta["answers"] == ["quota is exhausted", "the quota ran out"]
    assert meta["qid"] == "q1"
    assert meta["confidence"] in ("high", "partial", "low")
    assert meta["stop_reason"] == "answered"


def test_without_answers_or_judgements_the_reference_is_null(tmp_path: Path) -> None:
    data = dataset(tmp_path / "bare", qrels=False, answers=False)
    records = export(tmp_path, "ragas", tmp_path / "ragas.jsonl", data)
    assert [r["reference"] for r in records] == [None, None]
    assert all("reference_context_ids" not in r for r in records)
    assert all(r["retrieved_contexts"] for r in records)


def test_export_needs_the_answer_task_and_says_so_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "ragas.jsonl"
    home = tmp_path / "home"
    args = ["eval", str(dataset(tmp_path / "tiny")), "--home", str(home), "--export", "ragas", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "--export needs --task answer" in result.output
    assert not out.exists()
    assert not (home / "kbs").exists(), "refused before the corpus was ingested"
    unknown = runner.invoke(app, [*args[:-2], "--task", "answer", "--export", "trulens", str(out)])
    assert unknown.exit_code == 2
    assert "ragas" in unknown.output
    assert "deepeval" in unknown.output


def test_the_readme_makes_a_dataset_of_the_sample_and_exports_it(tmp_path: Path) -> None:
    """The README's copy-paste block: its Python builds the dataset, its `eval` line exports (first questions)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Scoring answers with Ragas or DeepEval") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    script = re.search(r"python - <<'EOF'\n(.*?)\nEOF\n", block.group(1), re.S)
    assert script is not None
    subprocess.run([sys.executable, "-c", script.group(1)], cwd=tmp_path, check=True, timeout=120)
    data = load_dataset(tmp_path / "sample-eval")
    assert data.corpus_size() == 10
    assert len(data.queries) >= 14
    assert data.queries[1].text == "出差住宿标准是多少？"
    assert data.queries[1].answers[0].startswith("自 2025-01-01 起")
    assert "agentrag eval sample-eval --task answer --export ragas ragas.jsonl" in block.group(1)
    out = tmp_path / "ragas.jsonl"
    args = ["eval", str(tmp_path / "sample-eval"), "--home", str(tmp_path / "home"), "--task", "answer"]
    result = runner.invoke(app, [*args, "--limit", "2", "--export", "ragas", str(out)])
    assert result.exit_code == 0, result.output
    first, second = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
    assert "600" in first["response"]
    assert second["reference"] == data.queries[1].answers[0]
    assert "expense-policy-2025.md" in second["retrieved_context_ids"]


# The python of a venv with ragas and deepeval; .ci/run sets it. Not AGENTRAG_...: that prefix is for settings.
EVALTOOLS = "EVALTOOLS_PYTHON"


def test_the_exports_load_with_ragas_and_deepevals_own_dataset_classes(tmp_path: Path) -> None:
    python = os.environ.get(EVALTOOLS)
    if not python:
        pytest.skip(
            f"{EVALTOOLS} is unset: it names the python of a venv with ragas and deepeval, which .ci/run builds "
            "(python3 -m venv .venv-evaltools && .venv-evaltools/bin/pip install -r .ci/evaltools-requirements.txt)"
        )
    assert Path(python).is_file(), f"{EVALTOOLS}={python}: no such python (set, so this test must run, not skip)"
    data = dataset(tmp_path / "tiny")
    outs = [tmp_path / "out" / f"{fmt}.{ext}" for fmt in ("ragas", "deepeval") for ext in ("jsonl", "json")]
    records = {out.name: export(tmp_path, out.stem, out, data) for out in outs}
    # Their telemetry off, a developer's .env unread, and every HTTP client sent to a closed port: the load is offline.
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env |= {"DEEPEVAL_TELEMETRY_OPT_OUT": "YES", "RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_DISABLE_DOTENV": "1"}
    env |= {"HF_HUB_OFFLINE": "1"} | dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"), "http://127.0.0.1:9")
    script = Path(__file__).with_name("evaltools_load.py")
    done = subprocess.run(
        [python, str(script), *map(str, outs)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout.splitlines()[-1])
    assert set(read["ragas"]) == {"from_jsonl", "from_list"}, read["versions"]
    readers = {"add_goldens_from_jsonl_file", "add_goldens_from_json_file", "add_test_cases_from_json_file"}
    assert set(read["deepeval"]) == readers, read["versions"]
    for how, samples in read["ragas"].items():
        assert len(samples) == 2, how
        first = samples[0]
        assert first["user_input"] == "What does error E1042 mean?", how
        assert first["response"] == records["ragas.jsonl"][0]["response"], how
        assert "quota is exhausted" in first["response"], how
        assert "Error E1042 means the quota is exhausted." in first["retrieved_contexts"], how
        assert first["reference"] == "quota is exhausted", how
        assert first["reference_context_ids"] == ["d3"], how
        assert samples[1]["user_input"] == "一线城市出差住宿标准是多少？", how
    for how, goldens in read["deepeval"].items():
        assert len(goldens) == 2, how
        first = goldens[0]
        assert first["input"] == "What does error E1042 mean?", how
        assert first["actual_output"] == records["deepeval.json"][0]["actual_output"], how
        assert "Error E1042 means the quota is exhausted." in first["retrieval_context"], how
        assert first["expected_output"] == "quota is exhausted", how
        assert goldens[1]["input"] == "一线城市出差住宿标准是多少？", how
    for how in ("add_goldens_from_jsonl_file", "add_goldens_from_json_file"):
        assert read["deepeval"][how][0]["additional_metadata"]["answers"] == QUERIES[0]["answers"], how
