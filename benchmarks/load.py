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

import httpx

from agentrag.eval.data import load_dataset
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

    settings = load_settings(args.home)
    dataset = load_dataset(args.dataset)
    kb = eval_kb_name(dataset, settings, shared_embedder(settings.embedder).name)
    if not (args.home / "kbs" / kb).exists():
        sys.exit(f"no knowledge base {kb} in {args.home}: run `agentrag eval {args.dataset} --home {args.home}` first")
    keys = KeyStore(args.home)
    _, secret = keys.create([kb], label="load benchmark")
    keys.close()

    env = {
        **os.environ,
        "AGENTRAG_SERVER__REQUESTS_PER_MINUTE": "1000000",  # measure the service, not the rate limiter
        "AGENTRAG_CACHE__ENABLED": "true" if args.cache else "false",
    }
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTRAG_LLM_MODEL"):
        env.pop(name, None)  # model-free: the numbers are the service's own
    server = subprocess.Popen(
        [sys.executable, "-m", "agentrag.cli", "serve", "--home", str(args.home), "--port", str(args.port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    url = f"http://127.0.0.1:{args.port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        questions = [q.text for q in dataset.queries]
        latencies: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        stop_at = time.monotonic() + args.seconds

        def client(offset: int) -> None:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}, timeout=120) as http:
                i = offset
                while time.monotonic() < stop_at:
                    started = time.perf_counter()
                    r = http.post(
                        f"/v1/kb/{kb}/ask", json={"question": questions[i % len(questions)], "mode": args.mode}
                    )
                    elapsed = (time.perf_counter() - started) * 1000
                    with lock:
                        (latencies if r.status_code == 200 else errors).append(
                            elapsed if r.status_code == 200 else r.text
                        )
                    i += args.clients

        warm = httpx.post(
            f"{url}/v1/kb/{kb}/ask",
            json={"question": questions[0], "mode": args.mode},
            headers={"Authorization": f"Bearer {secret}"},
            timeout=120,
        )
        warm.raise_for_status()
        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=30)

    result = {
        "dataset": dataset.name,
        "knowledge_base": kb,
        "mode": args.mode,
        "cache": args.cache,
        "clients": args.clients,
        "seconds": round(wall, 1),
        "asks": len(latencies),
        "errors": len(errors),
        "asks_per_s": round(len(latencies) / wall, 2),
        "latency_ms_p50": round(statistics.median(latencies), 1) if latencies else None,
        "latency_ms_p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1) if latencies else None,
    }
    print(json.dumps(result, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
