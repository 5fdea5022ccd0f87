"""Load agentrag's eval exports with Ragas's and DeepEval's own dataset classes; print what they read as JSON.

Run by tests/test_eval_export.py with the python of the separate `.venv-evaltools` (.ci/run builds it from
.ci/evaltools-requirements.txt), never by agentrag's own interpreter: it imports ragas and deepeval, and not
agentrag. Usage: evaltools_load.py RAGAS.jsonl RAGAS.json DEEPEVAL.jsonl DEEPEVAL.json
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from typing import Any


def ragas_samples(jsonl: str, array: str) -> dict[str, Any]:
    from ragas import EvaluationDataset, SingleTurnSample

    with open(array, encoding="utf-8") as f:
        listed = EvaluationDataset.from_list(json.load(f))
    loaded = {"from_jsonl": EvaluationDataset.from_jsonl(jsonl), "from_list": listed}
    read: dict[str, Any] = {}
    for how, dataset in loaded.items():
        assert all(isinstance(s, SingleTurnSample) for s in dataset.samples), how
        read[how] = [s.model_dump(exclude_none=True) for s in dataset.samples]
    return read


def deepeval_goldens(jsonl: str, array: str) -> dict[str, Any]:
    from deepeval.dataset import EvaluationDataset, Golden
    from deepeval.test_case import LLMTestCase

    read: dict[str, Any] = {}
    for how, path in (("add_goldens_from_jsonl_file", jsonl), ("add_goldens_from_json_file", array)):
        dataset = EvaluationDataset()
        getattr(dataset, how)(file_path=path)
        assert all(isinstance(g, Golden) for g in dataset.goldens), how
        read[how] = [g.model_dump(exclude_none=True) for g in dataset.goldens]
    # The test-case reader takes the key names; these are the ones the README's table gives.
    dataset = EvaluationDataset()
    dataset.add_test_cases_from_json_file(
        file_path=array,
        input_key_name="input",
        actual_output_key_name="actual_output",
        expected_output_key_name="expected_output",
        retrieval_context_key_name="retrieval_context",
    )
    assert all(isinstance(t, LLMTestCase) for t in dataset.test_cases)
    read["add_test_cases_from_json_file"] = [t.model_dump(exclude_none=True) for t in dataset.test_cases]
    return read


def main(ragas_jsonl: str, ragas_json: str, deepeval_jsonl: str, deepeval_json: str) -> None:
    report = {
        "versions": {name: version(name) for name in ("ragas", "deepeval")},
        "ragas": ragas_samples(ragas_jsonl, ragas_json),
        "deepeval": deepeval_goldens(deepeval_jsonl, deepeval_json),
    }
    print(json.dumps(report, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:])
