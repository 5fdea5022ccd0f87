"""JSONL corpora are streamed: a corpus over `ingest.max_file_mb` is ingested; a bad line still stores nothing."""

import json
from pathlib import Path
from typing import Any

import pytest

from agentrag.embed.base import Embedder
from agentrag.errors import LoadError
from agentrag.ingest.loaders import stream_jsonl
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings

TOPICS = ["rivers", "glaciers", "compilers", "violins"]


def corpus(path: Path, n: int, bad_line: str | None = None) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.write("\ufeff")  # a byte-order mark some editors write
        for i in range(n):
            text = f"Record {i} is about {TOPICS[i % len(TOPICS)]} and nothing else. " * 6
            out.write(json.dumps({"_id": f"r{i}", "title": f"Record {i}", "text": text}, ensure_ascii=False) + "\n")
        if bad_line is not None:
            out.write(bad_line + "\n")
    return path


def test_a_corpus_over_the_file_size_limit_is_streamed_in(tmp_path: Path, embedder: Embedder) -> None:
    path = corpus(tmp_path / "big.jsonl", 120)
    settings = load_settings(tmp_path / "home", ingest={"max_file_mb": 0.01})
    assert path.stat().st_size > 0.01 * 1024 * 1024 * 3  # well over the per-file limit
    with KnowledgeBase.open("big", settings=settings, embedder=embedder) as kb:
        report = kb.ingest([path])
        assert (report.added, report.failed) == (120, 0)
        assert kb.search("Record 117 glaciers", k=1)[0].chunk.doc_id == "r117"


def test_a_bad_line_late_in_a_streamed_corpus_stores_nothing_of_it(tmp_path: Path, embedder: Embedder) -> None:
    path = corpus(tmp_path / "big.jsonl", 60, bad_line='{"_id": "r3", "title": "again", "text": "dup"}')
    settings = load_settings(tmp_path / "home", ingest={"max_file_mb": 0.01})
    with KnowledgeBase.open("big", settings=settings, embedder=embedder) as kb:
        report = kb.ingest([path])
        assert (report.added, report.failed) == (0, 1)
        failed = [item for item in report.items if item.status == "failed"]
        assert failed[0].error == "line 61: duplicate _id 'r3' (first on line 4)"
        assert kb.documents() == []


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"_id": "a", "title": "A", "text": "alpha"}\n{"_id": "b", "text": "caf\xe9"}\n')
    records = stream_jsonl(path)
    with pytest.raises(LoadError, match=r": line 2: not UTF-8 text") as caught:
        next(records)
    assert str(caught.value).startswith(str(path))


def test_a_large_corpus_is_parsed_twice_and_a_small_one_once_with_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `KEEP_BYTES` the checking pass keeps nothing (memory does not grow with the file); under it, the
    records it parsed are the ones handed on. Either way the records and the late bad line's failure agree."""
    from agentrag.ingest.loaders import jsonl

    path = corpus(tmp_path / "c.jsonl", 40)
    parsed: list[int] = []
    real = jsonl._records

    def counting(*args: Any, **kwargs: Any) -> Any:
        parsed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jsonl, "_records", counting)
    small = [r.model_dump() for r in stream_jsonl(path)]
    assert len(parsed) == 1
    assert len(small) == 40
    monkeypatch.setattr(jsonl, "KEEP_BYTES", 0)
    large = [r.model_dump() for r in stream_jsonl(path)]
    assert len(parsed) == 3
    assert large == small
    bad = corpus(tmp_path / "bad.jsonl", 30, bad_line='{"_id": "r3", "title": "again", "text": "dup"}')
    for keep in (0, 1 << 30):
        monkeypatch.setattr(jsonl, "KEEP_BYTES", keep)
        with pytest.raises(LoadError, match=r"line 31: duplicate _id 'r3'"):
            next(stream_jsonl(bad))
