"""What the MCP doors cost: the same searches and answers in-process, over REST, and through the MCP tools over
Streamable HTTP and stdio, side by side in one run.

    python benchmarks/mcp_doors.py --rounds 5

The knowledge base is the bundled sample (ingested into --home on the first run); the questions are the
sample's demo questions (QUESTIONS.md, 16). `agentrag serve` and `agentrag mcp` run in their own processes; the
official SDK's client drives both MCP transports, one connection each, kept open. Each round asks every question
through every path in turn (so drift on a shared machine falls on all paths alike): `search` (k=10, hybrid) and
`ask` (mode single, model-free). Caches off: every call does the full work. Prints one JSON object and, with
--markdown, the table BENCHMARKS.md quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from agentrag.kb import KnowledgeBase
from agentrag.server.keys import KeyStore
from agentrag.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "src" / "agentrag" / "sample"
ENV = {**os.environ, "AGENTRAG_CACHE__ENABLED": "false", "AGENTRAG_SERVER__REQUESTS_PER_MINUTE": "1000000"}
for _name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTRAG_LLM_MODEL"):
    ENV.pop(_name, None)  # model-free: the numbers are agentrag's own

Call = Callable[[str, str], Awaitable[Any]]  # (tool, question) -> anything


def questions() -> list[str]:
    rows = re.findall(r"^\| \d+ \| (.+?) \|", (SAMPLE / "QUESTIONS.md").read_text(encoding="utf-8"), re.M)
    return [r.strip() for r in rows]


def ensure_sample(home: Path) -> None:
    settings = load_settings(home)
    if not (home / "kbs" / "default").exists():
        kb = KnowledgeBase.open("default", settings=settings)
        kb.ingest([SAMPLE / "docs"])
        kb.close()


def start_service(home: Path, port: int) -> tuple[subprocess.Popen[bytes], str]:
    keys = KeyStore(home)
    _, secret = keys.create(["default"], label="mcp benchmark")
    keys.close()
    command = [sys.executable, "-m", "agentrag.cli", "serve", "--home", str(home), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server, secret
        except httpx.HTTPError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("agentrag serve did not start")


def arguments(tool: str, question: str) -> dict[str, Any]:
    return {"query": question, "k": 10} if tool == "search" else {"question": question, "mode": "single"}


async def measure(home: Path, port: int, rounds: int) -> dict[str, Any]:
    kb = KnowledgeBase.open("default", settings=load_settings(home, cache={"enabled": False}), create=False)
    server, secret = start_service(home, port)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {secret}"}
    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "agentrag.cli", "mcp", "--home", str(home)], env=ENV
    )
    try:
        async with (
            httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as rest,
            httpx2.AsyncClient(headers=headers, timeout=120) as mcp_http,
            Client(streamable_http_client(f"{url}/mcp", http_client=mcp_http)) as over_http,
            Client(stdio, read_timeout_seconds=120) as over_stdio,
        ):

            async def in_process(tool: str, q: str) -> Any:
                return kb.search(q, 10) if tool == "search" else kb.ask(q, mode="single")

            async def over_rest(tool: str, q: str) -> Any:
                (await rest.post(f"/v1/kb/default/{tool}", json=arguments(tool, q))).raise_for_status()

            def through(client: Client) -> Call:
                async def call(tool: str, q: str) -> Any:
                    done = await client.call_tool(tool, arguments(tool, q))
                    assert not done.is_error, done.content

                return call

            paths: dict[str, Call] = {
                "in-process (kb.search / kb.ask)": in_process,
                "REST /v1/kb/default/...": over_rest,
                "MCP Streamable HTTP /mcp": through(over_http),
                "MCP stdio (agentrag mcp)": through(over_stdio),
            }
            return await rounds_of(paths, rounds)
    finally:
        server.terminate()
        server.wait(timeout=30)
        kb.close()


async def rounds_of(paths: dict[str, Call], rounds: int) -> dict[str, Any]:
    asked = questions()
    times: dict[tuple[str, str], list[float]] = {(p, t): [] for p in paths for t in ("search", "ask")}
    for round_no in range(rounds + 1):  # round 0 warms every path up and is not counted
        for q in asked:
            for tool in ("search", "ask"):
                for name, call in paths.items():
                    started = time.perf_counter()
                    await call(tool, q)
                    if round_no:
                        times[name, tool].append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {}
    for (name, tool), ms in times.items():
        ms.sort()
        out.setdefault(name, {})[tool] = {
            "n": len(ms),
            "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
        }
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["| path | search p50 ms | search p95 ms | ask p50 ms | ask p95 ms |", "|---|---|---|---|---|"]
    for name, row in result["paths"].items():
        s, a = row["search"], row["ask"]
        lines.append(f"| {name} | {s['p50_ms']} | {s['p95_ms']} | {a['p50_ms']} | {a['p95_ms']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=ROOT / "bench-out" / "mcp-home")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--markdown", action="store_true", help="also print the Markdown table")
    args = parser.parse_args()
    ensure_sample(args.home)
    result = {
        "questions": len(questions()),
        "rounds": args.rounds,
        "paths": anyio.run(measure, args.home, args.port, args.rounds),
    }
    print(json.dumps(result, indent=2))
    if args.markdown:
        print(markdown(result))


if __name__ == "__main__":
    main()
