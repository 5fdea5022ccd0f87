"""The structure the next engineer relies on: imports point down the data flow, and no module or function
grows past the size where it holds two concerns (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "agentrag"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def test_imports_point_down_the_flow() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_module_or_function_outgrows_one_concern() -> None:
    too_big: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE.parent)
        if (lines := len(source.splitlines())) > MAX_MODULE_LINES:
            too_big.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_big.append(f"{name}:{node.lineno} {node.name}(): {length} lines")
    assert not too_big, "\n".join(too_big)


# jieba must be set up by `text.tokenize.ensure_jieba` (quiet, its cache read whole, initialised once under a lock):
# its cut is reached through `text.tokenize.segment`, its tagger through `agent.pos.posseg`.
JIEBA_DOORS = {"agentrag/text/tokenize.py", "agentrag/agent/pos.py"}


def test_jieba_is_reached_only_through_its_doors() -> None:
    elsewhere: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            if any(m == "jieba" or m.startswith("jieba.") for m in modules) and name not in JIEBA_DOORS:
                elsewhere.append(f"{name}:{node.lineno}")
    assert not elsewhere, "jieba imported outside text/tokenize.py and agent/pos.py: " + ", ".join(elsewhere)
