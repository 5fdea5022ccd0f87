"""The benchmark format (../shared/data/README.md): corpus.jsonl, queries.jsonl, qrels.tsv."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from agentrag.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Query:
    qid: str
    text: str
    answers: list[str] = field(default_factory=list)
    type: str | None = None


@dataclass
class Dataset:
    name: str
    path: Path
    queries: list[Query]
    qrels: dict[str, dict[str, float]]

    @property
    def corpus_path(self) -> Path:
        return self.path / "corpus.jsonl"

    @property
    def qrels_path(self) -> Path:
        return self.path / "qrels.tsv"

    def require_qrels(self, task: str) -> None:
        """Retrieval is measured against relevance judgements: without any, say which file is needed."""
        if not self.qrels:
            problem = "has no relevant passages" if self.qrels_path.is_file() else "is missing"
            raise ConfigError(
                f"eval --task {task} needs relevance judgements, but {self.qrels_path} {problem} "
                f"(query-id<TAB>corpus-id<TAB>score); use --task answer to measure answers without them"
            )

    def corpus_hash(self) -> str:
        digest = hashlib.sha256()
        with self.corpus_path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def corpus_size(self) -> int:
        with self.corpus_path.open("rb") as f:
            return sum(1 for line in f if line.strip())


def load_dataset(path: Path | str, limit: int | None = None) -> Dataset:
    """Queries with at least one relevant passage (every query when there are no judgements), in file order;
    `limit` keeps the first N of them."""
    root = Path(path)
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise ConfigError(f"{root}: not a benchmark dataset (missing {name}; see the data format in the README)")
    qrels: dict[str, dict[str, float]] = {}
    qrels_path = root / "qrels.tsv"
    if qrels_path.is_file():
        with qrels_path.open(encoding="utf-8") as f:
            header = f.readline()
            if not header.startswith("query-id"):
                raise ConfigError(f"{qrels_path} line 1: expected the header 'query-id<TAB>corpus-id<TAB>score'")
            for lineno, line in enumerate(f, start=2):
                parts = line.rstrip("\n").split("\t")
                if len(parts) < 3:
                    if line.strip():
                        raise ConfigError(f"{qrels_path} line {lineno}: expected 3 tab-separated fields")
                    continue
                try:
                    score = float(parts[2])
                except ValueError as exc:
                    raise ConfigError(f"{qrels_path} line {lineno}: score {parts[2]!r} is not a number") from exc
                if score > 0:
                    qrels.setdefault(parts[0], {})[parts[1]] = score
    queries: list[Query] = []
    queries_path = root / "queries.jsonl"
    with queries_path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                query = Query(
                    qid=str(record["_id"]),
                    text=str(record["text"]),
                    answers=[str(a) for a in record.get("answers") or []],
                    type=record.get("type"),
                )
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ConfigError(f"{queries_path} line {lineno}: invalid query record ({exc})") from exc
            if query.qid in qrels or not qrels:
                queries.append(query)
    if limit is not None:
        queries = queries[:limit]
    return Dataset(name=root.resolve().name, path=root, queries=queries, qrels=qrels)
