"""The `agentrag` command as a user types it: text for people, one JSON object with --json."""

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrag.cli import app
from tests.helpers import ASK_KEYS, CITATION_KEYS, write

runner = CliRunner()


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def docs(root: Path) -> Path:
    write(root / "policy.md", "# 报销制度\n\n## 差旅标准\n\n员工出差住宿标准为每晚五百元。\n")
    write(root / "aurora.md", "# Aurora\n\n## Errors\n\nError E1042 means the quota is exhausted.\n")
    return root


def test_ingest_search_docs_roundtrip_with_json(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    code, output = run("ingest", str(docs(tmp_path / "d")), "--home", home, "--tag", "team=ops", "--json")
    assert code == 0
    report = json.loads(output)
    assert (report["added"], report["failed"]) == (2, 0)

    code, output = run("search", "住宿标准", "--home", home, "-k", "1", "--json")
    assert code == 0
    hit = json.loads(output)["hits"][0]
    assert hit["title"] == "报销制度"
    assert "五百元" in hit["text"]
    assert {"bm25", "dense"} <= set(hit["channels"])

    code, output = run("docs", "list", "--home", home, "--json")
    listing = json.loads(output)
    assert listing["total"] == 2
    assert all(d["tags"] == {"team": "ops"} for d in listing["documents"])

    doc_id = hit["doc_id"]
    code, output = run("docs", "show", doc_id, "--home", home, "--json")
    assert json.loads(output)["chunks"][0]["heading_path"] == ["报销制度", "差旅标准"]

    code, output = run("docs", "delete", doc_id, "--home", home, "--json")
    assert code == 0
    assert json.loads(output) == {"deleted": doc_id, "kb": "default"}
    code, output = run("search", "住宿标准", "--home", home, "--channel", "bm25", "--json")
    assert json.loads(output)["hits"] == []


def test_search_filters_and_channels(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    run("ingest", str(docs(tmp_path / "d")), "--home", home)
    code, output = run("search", "quota", "--home", home, "--filter", "source=aurora", "--json")
    assert {Path(h["source"]).name for h in json.loads(output)["hits"]} == {"aurora.md"}
    code, output = run("search", "quota", "--home", home, "--channel", "dense", "--json")
    assert all(set(h["channels"]) == {"dense"} for h in json.loads(output)["hits"])
    code, output = run("search", "quota", "--home", home, "--filter", "after=someday")
    assert code == 2
    assert "someday" in output


def test_failed_files_are_named_and_the_exit_code_says_so(tmp_path: Path) -> None:
    d = docs(tmp_path / "d")
    write(d / "empty.txt", "")
    code, output = run("ingest", str(d), "--home", str(tmp_path / "home"))
    assert code == 0  # the batch finished: `ingest && ask` goes on; the failure is named and counted
    assert "empty.txt: empty file" in output
    assert "added 2" in output
    assert "failed 1" in output
    code, output = run("ingest", str(d), "--home", str(tmp_path / "home"), "--strict")
    assert code == 3  # --strict: any failure is an exit code of its own
    assert "empty.txt: empty file" in output
    assert "unchanged 2" in output


def test_unknown_knowledge_base_is_a_readable_error(tmp_path: Path) -> None:
    code, output = run("search", "x", "--home", str(tmp_path / "home"), "--kb", "nope")
    assert code == 2
    assert "no knowledge base 'nope'" in output
    code, output = run("search", "x", "--home", str(tmp_path / "home"), "--kb", "../evil", "--json")
    assert code == 2
    assert "invalid knowledge base name" in json.loads(output)["error"]


def test_eval_on_a_tiny_benchmark_dataset_writes_the_contract_json(tmp_path: Path) -> None:
    data = tmp_path / "tiny"
    corpus = [
        {"_id": "d1", "title": "Kestrel", "text": "Kestrel is the queue service owned by the storage team."},
        {"_id": "d2", "title": "Aurora", "text": "Aurora is the search API; error E1042 means quota exhausted."},
        {"_id": "d3", "title": "报销制度", "text": "员工出差住宿标准为每晚五百元。"},
        {"_id": "d4", "title": "Storage team", "text": "The storage team is led by Zhang Wei."},
    ]
    queries = [
        {"_id": "q1", "text": "What does E1042 mean?", "answers": ["quota exhausted"], "type": "single"},
        {"_id": "q2", "text": "住宿标准是多少？", "answers": ["五百元"], "type": "single"},
        {"_id": "q3", "text": "Who leads the team that owns Kestrel?", "answers": ["Zhang Wei"], "type": "bridge"},
    ]
    write(data / "corpus.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in corpus) + "\n")
    write(data / "queries.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in queries) + "\n")
    write(data / "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td3\t1\nq3\td1\t1\nq3\td4\t1\n")
    home, out, report = tmp_path / "home", tmp_path / "out.json", tmp_path / "report.md"
    code, output = run("eval", str(data), "--home", str(home), "--json", str(out), "--report", str(report))
    assert code == 0, output
    result = json.loads(out.read_text())
    assert set(result) >= {"dataset", "queries", "retrieval", "answer", "process", "ingest"}
    assert set(result["retrieval"]) == {"recall@5", "recall@10", "recall@20", "all_recall@10", "ndcg@10", "mrr@10"}
    assert set(result["answer"]) == {"contains", "em", "f1", "abstain_rate", "calibration"}
    assert set(result["process"]) == {
        "llm_calls_mean",
        "retrieval_calls_mean",
        "tokens_mean",
        "latency_ms_p50",
        "latency_ms_p95",
    }
    assert set(result["ingest"]) == {"passages", "seconds", "passages_per_s"}
    assert result["queries"] == 3
    assert result["ingest"]["passages"] == 4
    assert result["retrieval"]["recall@5"] == 1.0
    assert result["answer"]["contains"] is None
    assert result["details"]["ingest_reused"] is False
    assert "| hybrid |" in report.read_text()
    assert report.with_suffix(".png").exists()

    code, output = run("eval", str(data), "--home", str(home), "--json", "-", "--limit", "2")
    again = json.loads(output)
    assert again["queries"] == 2
    assert again["details"]["ingest_reused"] is True
    assert again["details"]["knowledge_base"] == result["details"]["knowledge_base"]


def test_ask_json_is_the_contract_and_stream_shows_progress(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    run("ingest", str(docs(tmp_path / "d")), "--home", home)
    code, output = run("ask", "What does E1042 mean?", "--home", home, "--json")
    assert code == 0
    answer = json.loads(output)
    assert set(answer) == ASK_KEYS
    assert set(answer["usage"]) == {"llm_calls", "retrieval_calls", "prompt_tokens", "completion_tokens", "ms"}
    assert answer["stop_reason"] == "answered"
    assert "quota is exhausted" in answer["answer"]
    assert set(answer["citations"][0]) == CITATION_KEYS
    assert (tmp_path / "home" / "traces" / "default" / f"{answer['trace_id']}.jsonl").exists()

    code, output = run("ask", "住宿标准是多少？", "--home", home, "--stream")
    assert code == 0
    assert "… searching, round 1: 住宿标准是多少？" in output
    assert "五百元" in output
    assert "Sources" in output


def test_chat_resolves_follow_ups_and_failures_lists_what_went_wrong(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    write(
        tmp_path / "d" / "plans.md",
        "# Plans\n\n## Enterprise\n\nThe Enterprise plan costs 25,000 yuan a month. "
        "It allows 3,000 requests per minute.\n",
    )
    run("ingest", str(tmp_path / "d"), "--home", home)
    result = runner.invoke(
        app,
        ["chat", "--home", home, "--json", "--mode", "single", "--conversation", "c1"],
        input="How much does the Enterprise plan cost?\nand how many requests per minute does it allow?\n",
    )
    assert result.exit_code == 0, result.output
    turns = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert len(turns) == 2
    assert "Enterprise" in turns[1]["search_query"]
    assert "3,000 requests per minute" in turns[1]["answer"]
    assert (tmp_path / "home" / "conversations" / "c1.json").exists()

    run("ingest", str(tmp_path / "d"), "--home", home, "--kb", "other")
    code, output = run("ask", "Who wrote the Iliad?", "--home", home, "--kb", "empty-kb", "--json")
    assert code == 2
    assert "no knowledge base" in json.loads(output)["error"]
    code, output = run("failures", "--home", home, "--json")
    assert json.loads(output) == {"failures": []}


def test_eval_answer_task_fills_the_answer_and_process_blocks(tmp_path: Path) -> None:
    data = tmp_path / "tiny"
    corpus = [
        {"_id": "d1", "title": "Kestrel", "text": "Kestrel is the queue service. The storage team owns Kestrel."},
        {"_id": "d2", "title": "Storage team", "text": "The storage team is led by Zhang Wei."},
        {"_id": "d3", "title": "Aurora", "text": "Error E1042 means the quota is exhausted."},
    ]
    queries = [
        {"_id": "q1", "text": "What does error E1042 mean?", "answers": ["quota is exhausted"]},
        {"_id": "q2", "text": "Who leads the team that owns Kestrel?", "answers": ["Zhang Wei"], "type": "bridge"},
    ]
    write(data / "corpus.jsonl", "\n".join(json.dumps(r) for r in corpus) + "\n")
    write(data / "queries.jsonl", "\n".join(json.dumps(r) for r in queries) + "\n")
    write(data / "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td3\t1\nq2\td1\t1\nq2\td2\t1\n")
    code, output = run("eval", str(data), "--home", str(tmp_path / "home"), "--task", "answer", "--json", "-")
    assert code == 0, output
    result = json.loads(output)
    assert result["answer"]["contains"] == 1.0
    assert result["answer"]["abstain_rate"] == 0.0
    assert result["process"]["llm_calls_mean"] == 0.0
    assert result["process"]["retrieval_calls_mean"] >= 1.0
    assert result["retrieval"]["all_recall@10"] == 1.0
    assert result["details"]["modes_used"] == {"single": 1, "agent": 1}
    (curve,) = result["details"]["recall_curves"].values()
    assert curve[9] == result["retrieval"]["recall@10"], "the chart plots the same evidence ranking"


def test_the_bundled_sample_corpus_loads_in_every_format() -> None:
    from agentrag.ingest.loaders import load_path
    from agentrag.ingest.pipeline import discover

    _code, output = run("sample")
    folder = Path(output.strip())
    files = discover([folder])
    assert {f.suffix for f in files} == {".md", ".txt", ".html", ".pdf", ".docx"}
    assert len(files) == 10
    for f in files:
        (document,) = load_path(f, 64 * 1024 * 1024)
        assert document.title, f.name
        assert len(document.text) > 500, f.name


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    from agentrag.server.keys import KeyStore

    home = str(tmp_path / "home")
    code, output = run("keys", "create", "--kb", "support", "--kb", "sales", "--label", "bot", "--home", home, "--json")
    assert code == 0
    created = json.loads(output)
    assert created["key"].startswith("ar_")
    assert created["kbs"] == ["sales", "support"]
    store = KeyStore(tmp_path / "home")
    assert store.authenticate(created["key"]) is not None
    assert created["key"] not in (tmp_path / "home" / "keys.sqlite").read_bytes().decode("latin-1"), "stored hashed"

    code, output = run("keys", "list", "--home", home, "--json")
    assert [(k["key_id"], k["label"], k["admin"]) for k in json.loads(output)["keys"]] == [
        (created["key_id"], "bot", False)
    ]
    assert created["key"] not in output

    code, output = run("keys", "revoke", created["key_id"], "--home", home)
    assert code == 0
    assert store.authenticate(created["key"]) is None
    code, output = run("keys", "revoke", created["key_id"], "--home", home, "--json")
    assert code == 2
    assert "no API key" in json.loads(output)["error"]
    store.close()
    code, output = run("keys", "create", "--kb", "../escape", "--home", home)
    assert code == 2
    assert "escape" in output


def test_help_shows_the_defaults_in_brackets() -> None:
    # Rich reads "[default: ...]" as markup unless escaped; a user must see the defaults.
    for command in ("serve", "ingest", "failures"):
        code, output = run(command, "--help")
        assert code == 0
        assert "[default:" in output, command


def _dataset_without_qrels(data: Path) -> Path:
    corpus = [
        {"_id": "d1", "title": "Aurora", "text": "Error E1042 means the quota is exhausted."},
        {"_id": "d2", "title": "报销制度", "text": "员工出差住宿标准为每晚五百元。"},
    ]
    queries = [
        {"_id": "q1", "text": "What does error E1042 mean?", "answers": ["quota is exhausted"]},
        {"_id": "q2", "text": "住宿标准是多少？", "answers": ["五百元"]},
    ]
    write(data / "corpus.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in corpus) + "\n")
    write(data / "queries.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in queries) + "\n")
    return data


def test_eval_answers_a_dataset_without_qrels_and_leaves_the_retrieval_block_null(tmp_path: Path) -> None:
    data = _dataset_without_qrels(tmp_path / "no-qrels")
    out, report = tmp_path / "out.json", tmp_path / "report.md"
    args = ("eval", str(data), "--home", str(tmp_path / "home"), "--task", "answer")
    code, output = run(*args, "--json", str(out), "--report", str(report))
    assert code == 0, output
    assert "contains 1.000" in output, "the summary line shows the answer numbers"
    result = json.loads(out.read_text())
    assert result["queries"] == 2, "without judgements every query is asked"
    assert result["retrieval"] is None
    assert result["answer"]["contains"] == 1.0
    assert "## Answers" in report.read_text()


def test_eval_retrieval_without_qrels_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    data = _dataset_without_qrels(tmp_path / "no-qrels")
    result = runner.invoke(app, ["eval", str(data), "--home", str(tmp_path / "home")])
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), "an error message, not a traceback"
    (line,) = result.output.strip().splitlines()
    assert str(data / "qrels.tsv") in line
    assert "--task answer" in line


COMPARISON = "What is the difference between Aurora and Kestrel?"  # the agent searches once per side and more


def _comparison_home(tmp_path: Path) -> str:
    home = str(tmp_path / "home")
    write(tmp_path / "d" / "aurora.md", "# Aurora\n\nAurora is the search API. Error E1042 means quota exhausted.\n")
    write(tmp_path / "d" / "kestrel.md", "# Kestrel\n\nKestrel is the queue service owned by the storage team.\n")
    assert run("ingest", str(tmp_path / "d"), "--home", home)[0] == 0
    return home


def test_ask_and_chat_take_budget_overrides(tmp_path: Path) -> None:
    home = _comparison_home(tmp_path)
    ask = ("ask", COMPARISON, "--mode", "agent", "--home", home, "--json")
    code, output = run(*ask)
    assert code == 0, output
    assert json.loads(output)["usage"]["retrieval_calls"] > 1
    for flags in (
        ("--max-searches", "1"),
        ("--budget", "max_retrieval_calls=1"),
        ("--budget", "max_retrieval_calls=1", "--budget", "context_split.history=0.3"),
    ):
        code, output = run(*ask, *flags)
        assert code == 0, output
        assert json.loads(output)["usage"]["retrieval_calls"] == 1, flags
    result = runner.invoke(
        app, ["chat", "--mode", "agent", "--max-searches", "1", "--home", home, "--json"], input=COMPARISON + "\n"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["usage"]["retrieval_calls"] == 1


def test_bad_budget_overrides_are_one_line_errors_naming_the_key(tmp_path: Path) -> None:
    home = _comparison_home(tmp_path)
    cases = [
        (("--budget", "max_searchs=2"), "max_searchs"),
        (("--budget", "max_llm_calls=-1"), "max_llm_calls"),
        (("--budget", "max_tokens"), "--budget"),
        (("--max-seconds", "0"), "--max-seconds"),
        (("--max-searches", "1", "--budget", "max_retrieval_calls=2"), "max_retrieval_calls"),
        (("--budget", "context_split.histroy=0.2"), "histroy"),
        (("--budget", "context_split.history=2"), "context_split.history"),
        (("--budget", "max_rounds.history=2"), "max_rounds"),
    ]
    for flags, named in cases:
        for command in (("ask", COMPARISON), ("chat",)):
            result = runner.invoke(app, [*command, "--home", home, *flags], input=COMPARISON + "\n")
            assert result.exit_code == 2, (command, flags, result.output)
            lines = result.output.strip().splitlines()
            assert named in result.output, (command, flags, result.output)
            assert isinstance(result.exception, SystemExit), (flags, result.output)
            assert len(lines) == 1 or "Usage:" in result.output, result.output


def run_process(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real `agentrag` process, with its memory capped (a read that never ends fails fast instead of
    filling the machine) and a time limit (a read that blocks fails the test instead of hanging it)."""

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run(
        [sys.executable, "-m", "agentrag.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=cap_memory,
        errors="replace",
    )


def test_devices_fifos_and_links_to_them_are_skipped_with_a_line(tmp_path: Path) -> None:
    d = docs(tmp_path / "d")
    (d / "zero.txt").symlink_to("/dev/zero")
    os.mkfifo(d / "pipe.txt")
    result = run_process("ingest", str(d), "/dev/zero", "--home", str(tmp_path / "home"), "--json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert (report["added"], report["skipped"], report["failed"]) == (2, 3, 0)
    reasons = {Path(s["path"]).name: s["reason"] for s in report["skipped_files"]}
    assert reasons == {
        "zero.txt": "not a regular file (a character device)",
        "pipe.txt": "not a regular file (a FIFO)",
        "zero": "not a regular file (a character device)",
    }
    result = run_process("ingest", str(d), "--home", str(tmp_path / "home"))
    assert "pipe.txt: skipped: not a regular file (a FIFO)" in result.stderr
    assert "unchanged 2, skipped 2, failed 0" in result.stdout


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc")
def test_the_size_limit_holds_for_what_is_read_not_what_the_file_claims(tmp_path: Path) -> None:
    # /proc files say they are empty (st_size 0) and hold more: the limit must count the bytes read.
    (tmp_path / "status.txt").symlink_to("/proc/self/status")
    env = {**os.environ, "AGENTRAG_INGEST__MAX_FILE_MB": "0.0001"}  # about 100 bytes
    result = runner.invoke(
        app, ["ingest", str(tmp_path / "status.txt"), "--home", str(tmp_path / "h"), "--strict"], env=env
    )
    assert result.exit_code == 3
    assert "status.txt: file too large" in result.output


def test_a_file_name_that_is_not_utf8_is_ingested_and_named(tmp_path: Path) -> None:
    d = docs(tmp_path / "d")
    odd = os.fsencode(d) + b"/caf\xe9 menu.txt"
    with open(odd, "wb") as f:
        f.write(b"The cafe menu lists espresso and green tea.\n")
    with open(os.fsencode(d) + b"/\xff.md", "wb") as f:
        f.write(b"")
    home = str(tmp_path / "home")
    code, output = run("ingest", str(d), "--home", home, "-v", "--strict")
    assert code == 3
    assert "\\xff.md: empty file" in output
    assert "caf\\xe9 menu.txt" in output
    assert "added 3" in output
    code, output = run("search", "espresso", "--home", home, "--json")
    assert json.loads(output)["hits"][0]["source"].endswith("caf\\xe9 menu.txt")
    code, output = run("ingest", str(d), "--home", home, "--json")
    assert json.loads(output)["unchanged"] == 3


def damaged_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    code, _ = run("ingest", str(docs(tmp_path / "d")), "--home", str(home))
    assert code == 0
    db = home / "kbs" / "default" / "store.sqlite"
    for extra in db.parent.glob("store.sqlite-*"):
        extra.unlink()
    db.write_bytes(b"this is not what agentrag wrote " * 200)
    return home


@pytest.mark.parametrize(
    "command",
    [["search", "quota"], ["ask", "what is E1042?"], ["docs", "list"], ["docs", "show", "x"], ["ingest", "d"]],
)
def test_a_damaged_store_is_one_line_saying_what_to_do(tmp_path: Path, command: list[str]) -> None:
    home = damaged_home(tmp_path)
    args = [str(tmp_path / a) if a == "d" else a for a in command]
    result = runner.invoke(app, [*args, "--home", str(home)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "store.sqlite" in result.output
    assert "damaged" in result.output
    assert "backup" in result.output
    assert "ingest again" in result.output


def test_debug_shows_the_traceback_of_an_expected_failure(tmp_path: Path) -> None:
    home = damaged_home(tmp_path)
    result = runner.invoke(app, ["--debug", "docs", "list", "--home", str(home)])
    assert result.exit_code == 2
    assert "Traceback" in result.output
    assert "damaged" in result.output


def test_a_locked_database_is_a_failure_line_per_document_not_a_traceback(tmp_path: Path) -> None:
    d = docs(tmp_path / "d")
    home = tmp_path / "home"
    run("ingest", str(d), "--home", str(home))
    write(d / "aurora.md", "# Aurora\n\n## Errors\n\nError E2077 means the key expired.\n")
    env = {"AGENTRAG_STORE__BUSY_TIMEOUT_S": "0.1", "AGENTRAG_STORE__LOCK_RETRIES": "1"}
    other = sqlite3.connect(home / "kbs" / "default" / "store.sqlite", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        result = runner.invoke(app, ["ingest", str(d), "--home", str(home), "--strict"], env=env)
    finally:
        other.rollback()
        other.close()
    assert result.exit_code == 3
    assert isinstance(result.exception, SystemExit)
    assert "aurora.md: " in result.output
    assert "locked by another process" in result.output
    assert "unchanged 1, failed 1" in result.output


def test_ingest_sync_deletes_what_left_the_folder_and_json_says_so(tmp_path: Path) -> None:
    d = docs(tmp_path / "d")
    home = str(tmp_path / "home")
    code, output = run("ingest", str(d), "--home", home, "--json")
    assert json.loads(output)["deleted"] == 0
    (d / "aurora.md").rename(d / "errors.md")
    write(d / "policy.md", "# 报销制度\n\n## 差旅标准\n\n员工出差住宿标准为每晚六百元。\n")
    (d / "policy.md").rename(d / "travel.md")
    code, output = run("ingest", str(d), "--home", home)
    assert (code, "added 1, updated 1, unchanged 0, failed 0" in output) == (0, True)
    code, output = run("search", "住宿标准", "--home", home, "--channel", "bm25", "--json")
    assert {Path(h["source"]).name for h in json.loads(output)["hits"]} == {"policy.md", "travel.md"}
    code, output = run("ingest", str(d), "--sync", "--home", home, "--json")
    report = json.loads(output)
    assert (report["added"], report["unchanged"], report["deleted"], report["failed"]) == (0, 2, 1, 0)
    code, output = run("search", "住宿标准", "--home", home, "--channel", "bm25", "--json")
    assert [Path(h["source"]).name for h in json.loads(output)["hits"]] == ["travel.md"]
    code, output = run("docs", "list", "--home", home, "--json")
    assert {Path(x["source"]).name for x in json.loads(output)["documents"]} == {"errors.md", "travel.md"}


def test_serve_says_how_to_get_a_key_while_there_is_none(tmp_path: Path) -> None:
    """A first `agentrag serve` shows a page with no knowledge base until a key is pasted: it says how to make one,
    and stops saying so once a key exists."""
    from agentrag.cli.service import key_hint

    home = tmp_path / "home"
    hint = key_hint(home)
    assert hint is not None
    assert "agentrag keys create --admin" in hint
    code, _ = run("keys", "create", "--admin", "--home", str(home))
    assert code == 0
    assert key_hint(home) is None
