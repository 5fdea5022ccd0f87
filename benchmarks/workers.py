"""The service with one and two workers, side by side in one run: asks per second, p95 and errors.

    python benchmarks/workers.py ../shared/data/musique --seconds 20 --rounds 2

For each round, and in each round for each deployment — one worker without Redis (the default), one worker
with Redis, two workers (`agentrag serve --workers 2`, which needs Redis) — `agentrag serve` is started over
the knowledge base `agentrag eval` built for the dataset (in --home, default bench-out/home), and 8 then 32
client threads ask the dataset's questions (single mode, model-free, cache off) for --seconds each, every
client waiting for its answer before asking again (load.py's `measure`). A private redis-server is started on
a free port. Writes the JSON to bench-out/workers.json and the Markdown section to benchmarks/workers.md
(which benchmarks/run.py appends to BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import measure, prepare, start_service, stop, wait_healthy
from run import machine

ROOT = Path(__file__).resolve().parent.parent
DEPLOYMENTS = [(1, False), (1, True), (2, True)]  # (workers, Redis)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.1)
    proc.terminate()
    sys.exit("redis-server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--home", type=Path, default=ROOT / "bench-out" / "home")
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "workers.json")
    parser.add_argument("--write", type=Path, default=ROOT / "benchmarks" / "workers.md")
    args = parser.parse_args()

    dataset, kb, secret = prepare(args.dataset, args.home)
    questions = [q.text for q in dataset.queries]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        redis, redis_url = start_redis(Path(scratch))
        try:
            for round_ in range(1, args.rounds + 1):
                for workers, shared in DEPLOYMENTS:
                    port = free_port()
                    url = f"http://127.0.0.1:{port}"
                    server = start_service(args.home, port, workers=workers, redis_url=redis_url if shared else None)
                    try:
                        wait_healthy(url, server)
                        for clients in args.clients:
                            m = measure(url, secret, kb, questions, clients, args.seconds, "single")
                            row = {"round": round_, "workers": workers, "redis": shared, "clients": clients, **m}
                            row["load_avg_1m"] = round(os.getloadavg()[0], 1)  # the machine is shared: say how busy
                            print(json.dumps(row), flush=True)
                            rows.append(row)
                    finally:
                        stop(server)
        finally:
            redis.terminate()
            redis.wait(timeout=30)
    command = (
        f"python benchmarks/workers.py ../shared/data/{dataset.name} --seconds {args.seconds:g} --rounds {args.rounds}"
    )
    result = {"dataset": dataset.name, "knowledge_base": kb, "command": command, "machine": machine(), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    args.write.write_text("\n".join(section(result)) + "\n", encoding="utf-8")


def section(result: dict[str, Any]) -> list[str]:
    lines = [
        "## Several workers (issue 12)",
        "",
        f"`{result['command']}` on {result['machine']}, shared with other jobs (noisy: compare rows of one round; "
        "the two rounds show the spread). Over the "
        f"{result['dataset']} knowledge base built by `agentrag eval`; each deployment is `agentrag serve` in its "
        "own process(es); the clients are threads of the benchmark process on the same 2 cores, each posting "
        "`/v1/kb/KB/ask` with `mode: single` (model-free, cache off) and waiting for the answer before asking the "
        "next question. With Redis, every request also counts against the key's rate limit there and every ask "
        "takes its conversation's Redis lock. Latency is the whole HTTP round trip. `load` is the machine's 1-minute "
        "load average at the end of the row (2 cores: anything over 2 means other jobs were waiting too).",
        "",
        "| round | workers | Redis | clients | asks | errors | asks/s | p50 ms | p95 ms | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['round']} | {r['workers']} | {'yes' if r['redis'] else 'no'} | {r['clients']} | {r['asks']} | "
            f"{r['errors']} | **{r['asks_per_s']}** | {r['latency_ms_p50']} | **{r['latency_ms_p95']}** | "
            f"{r.get('load_avg_1m', '')} |"
        )
    return [*lines, ""]


if __name__ == "__main__":
    main()
