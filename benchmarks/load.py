"""Load on the HTTP service: asks per second and latency with concurrent clients.

    python benchmarks/load.py ../shared/data/hotpotqa --clients 8 --seconds 60

Starts `agentrag serve` in its own process on 127.0.0.1 over the knowledge base that `agentrag eval` built
for the dataset (in --home, default bench-out/home), creates an API key, and lets N client threads ask
the dataset's questions (single mode, model-free) for the given time, each waiting for its answer before
asking again. Prints one JSON object; `--out` also writes it for run.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from agentrag.eval.data import Dataset, load_dataset
from agentrag.eval.runner import eval_kb_name
from agentrag.kb import shared_embedder
from agentrag.server.keys import KeyStore
from agentrag.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--home", type=Path, default=ROOT / "bench-out" / "home")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--mode", default="single")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--cache", action="store_true", help="keep the answer cache on (default off: every ask does the full work)"
    )
    args = parser.parse_args()

    dataset, kb, secret = prepare(args.dataset, args.home)
    server = start_service(args.home, args.port, cache=args.cache)
    url = f"http://127.0.0.1:{args.port}"
    try:
        wait_healthy(url, server)
        measured = measure(url, secret, kb, [q.text for q in dataset.queries], args.clients, args.seconds, args.mode)
    finally:
        stop(server)

    result = {
        "dataset": dataset.name,
        "knowledge_base": kb,
        "mode": args.mode,
        "cache": args.cache,
        "clients": args.clients,
        **measured,
    }
    print(json.dumps(result, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2))


def prepare(data: Path, home: Path) -> tuple[Dataset, str, str]:
    """The dataset, the id of the knowledge base `agentrag eval` built for it in `home`, and a new key for it."""
    settings = load_settings(home)
    dataset = load_dataset(data)
    kb = eval_kb_name(dataset, settings, shared_embedder(settings.embedder).name)
    if not (home / "kbs" / kb).exists():
        sys.exit(f"no knowledge base {kb} in {home}: run `agentrag eval {data} --home {home}` first")
    with KeyStore(home) as keys:
        _, secret = keys.create([kb], label="load benchmark")
    return dataset, kb, secret


def start_service(
    home: Path, port: int, *, cache: bool = False, workers: int = 1, redis_url: str | None = None
) -> subprocess.Popen[bytes]:
    """`agentrag serve` in its own process (`workers` uvicorn workers), model-free, rate limit out of the way."""
    env = {
        **os.environ,
        "AGENTRAG_SERVER__REQUESTS_PER_MINUTE": "1000000",  # measure the service, not the rate limiter
        "AGENTRAG_CACHE__ENABLED": "true" if cache else "false",
    }
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTRAG_LLM_MODEL", "AGENTRAG_REDIS_URL"):
        env.pop(name, None)  # model-free: the numbers are the service's own
    if redis_url:
        env["AGENTRAG_REDIS_URL"] = redis_url
    command = [sys.executable, "-m", "agentrag.cli", "serve", "--home", str(home), "--port", str(port)]
    return subprocess.Popen(
        [*command, "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )


def wait_healthy(url: str, server: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"agentrag serve exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    sys.exit(f"agentrag serve did not answer on {url} within {timeout:.0f} s")


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    server.wait(timeout=60)


def measure(
    url: str, secret: str, kb: str, questions: list[str], clients: int, seconds: float, mode: str
) -> dict[str, Any]:
    """`clients` threads asking in turn for `seconds`, each waiting for its answer; a warm-up ask first."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    headers = {"Authorization": f"Bearer {secret}"}

    def client(offset: int, stop_at: float) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
            i = offset
            while time.monotonic() < stop_at:
                started = time.perf_counter()
                try:
                    r = http.post(f"/v1/kb/{kb}/ask", json={"question": questions[i % len(questions)], "mode": mode})
                    ok, detail = r.status_code == 200, f"{r.status_code} {r.text[:200]}"
                except httpx.HTTPError as exc:  # a dropped connection is an error too, not a crash of the run
                    ok, detail = False, f"{type(exc).__name__}: {exc}"
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    if ok:
                        latencies.append(elapsed)
                    else:
                        errors.append(detail)
                i += clients

    warm = httpx.post(
        f"{url}/v1/kb/{kb}/ask", json={"question": questions[0], "mode": mode}, headers=headers, timeout=120
    )
    warm.raise_for_status()
    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n, started + seconds)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    ordered = sorted(latencies)
    return {
        "seconds": round(wall, 1),
        "asks": len(latencies),
        "errors": len(errors),
        "error_examples": errors[:3],
        "asks_per_s": round(len(latencies) / wall, 2),
        "latency_ms_p50": round(statistics.median(ordered), 1) if ordered else None,
        "latency_ms_p95": round(ordered[int(0.95 * (len(ordered) - 1))], 1) if ordered else None,
    }


if __name__ == "__main__":
    main()
