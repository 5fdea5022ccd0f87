"""Every command of the README's quick starts (English and Chinese, and the service's), run as a user types it:
real processes in bash, a fresh data directory, the bundled sample. The commands are read from the README's
fenced blocks, so the test follows the README; a command that fails or prints a traceback fails it.

Left out, because they need the network or a model: creating the virtualenv and `pip install`, and the block
after `export OPENAI_BASE_URL=...`. `serve` is started, asked for /health, and stopped. And the synopsis of
"Command line" is checked against `--help`: every flag it lists exists."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import write
from tests.servers import free_port

README = Path(__file__).resolve().parent.parent / "README.md"
NEEDS_NETWORK = re.compile(r"python3 -m venv|pip install|^source |\.venv/bin/python")


def blocks(after: str, until: str | None = None, first_only: bool = False) -> list[list[str]]:
    """The bash blocks of the README from the line starting with `after` to the next line starting with `until`."""
    text = README.read_text(encoding="utf-8")
    start = next(m.end() for m in re.finditer(rf"^{re.escape(after)}.*$", text, re.M))
    end = text.find(f"\n{until}", start) if until else -1
    section = text[start : end if end != -1 else len(text)]
    found = [body.strip().splitlines() for body in re.findall(r"```bash\n(.*?)```", section, re.S)]
    return found[:1] if first_only else found


def quick_start_commands() -> list[str]:
    """The commands to run, in README order: `&&` chains split, `.venv/bin/agentrag` spelled `agentrag`."""
    commands: list[str] = []
    sections = [
        *blocks("**Try it**", first_only=True),
        *blocks("## 中文快速上手", until="## "),
        *blocks("## Run it as a service", first_only=True),
    ]
    for block in sections:
        for line in block:
            if line.startswith("export OPENAI_"):
                break  # the rest of the block talks to a model
            for part in line.split(" && "):
                part = part.strip().replace(".venv/bin/agentrag", "agentrag")
                if part and not NEEDS_NETWORK.search(part):
                    commands.append(part)
    return commands


@pytest.fixture
def user(tmp_path: Path) -> dict[str, str]:
    """A user's environment: `agentrag` on PATH, a fresh home and data directory, no LLM configured, and the
    folder the Chinese quick start ingests (~/公司文档) holding a finance document."""
    bin_dir = tmp_path / "bin"
    write(bin_dir / "agentrag", f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m agentrag.cli "$@"\n')
    (bin_dir / "agentrag").chmod(0o755)
    write(tmp_path / "公司文档" / "报销.md", "# 报销制度\n\n报销单最晚在费用发生后三十天内提交。\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTRAG_"))}
    env.update(HOME=str(tmp_path), AGENTRAG_HOME=str(tmp_path / ".agentrag"), PATH=f"{bin_dir}:{env['PATH']}")
    return env


def serve_and_check_health(command: str, env: dict[str, str], cwd: Path) -> None:
    port = free_port()
    command = re.sub(r"--port \d+", f"--port {port}", command)
    proc = subprocess.Popen(
        ["bash", "-c", command], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"{command!r} exited: {proc.communicate()[1][-2000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, f"{command!r}: no /health after 60 s"
                time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr[-3000:]


def test_every_quick_start_command_runs_as_written(user: dict[str, str], tmp_path: Path) -> None:
    commands = quick_start_commands()
    ran: list[str] = []
    for command in commands:
        if command.startswith("agentrag serve"):
            serve_and_check_health(command, user, tmp_path)
        else:
            done = subprocess.run(
                ["bash", "-c", command], env=user, cwd=tmp_path, capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, f"{command!r} exited {done.returncode}: {done.stderr[-2000:]}"
            assert "Traceback" not in done.stdout + done.stderr, f"{command!r}: {done.stderr[-3000:]}"
            assert done.stdout.strip(), f"{command!r} printed nothing"
        ran.append(command.split("#")[0].strip())
    # The README still holds the quick starts this test is about (a reworded heading must not empty it).
    expected = [
        'agentrag ask "出差住宿标准是多少？" --stream',
        "agentrag keys create --admin",
        "agentrag serve --port 8000",
    ]
    assert all(e in ran for e in expected), ran
    assert any(c.startswith('agentrag ingest "$(agentrag sample)"') for c in ran), ran
    assert any("--filter team=财务" in c for c in ran), ran
    assert len(ran) >= 9, ran


def test_every_flag_of_the_command_line_synopsis_is_in_help() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Command line") :]
    synopsis = re.search(r"```\n(agentrag .*?)```", section, re.S)
    assert synopsis is not None
    lines = re.sub(r"\n\s+(?=\[)", " ", synopsis.group(1)).splitlines()  # continuation lines join their command
    checked = 0
    for line in lines:
        for part in line.split(" | "):
            words = part.split()
            if words[0] == "agentrag":
                words = words[1:]
            group = [w for w in words[:2] if re.fullmatch(r"[a-z]+", w)]
            if group and group[0] in ("docs", "keys", "kb") and words[1:2] and re.fullmatch(r"[a-z]+", words[1]):
                command = group[:2]
            else:
                command = group[:1]
            flags = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", part))
            if not flags:
                continue
            help_text = subprocess.run(
                [sys.executable, "-m", "agentrag.cli", *command, "--help"],
                capture_output=True,
                text=True,
                env={**os.environ, "COLUMNS": "200"},
            ).stdout
            missing = {f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", help_text)}
            assert not missing, f"README lists {sorted(missing)} for `agentrag {' '.join(command)}`"
            checked += 1
    assert checked >= 8
