"""Small helpers shared by tests (fixtures live in conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


# The `ask --json` contract (DESIGN.md), as other tools rely on it: its keys, and the keys of one citation.
ASK_KEYS = {
    "answer",
    "short_answer",
    "confidence",
    "conflicts",
    "citations",
    "mode",
    "stop_reason",
    "usage",
    "unsupported",
    "trace_id",
}
CITATION_KEYS = {"n", "doc_id", "chunk_id", "source", "quote", "page"}


@dataclass(frozen=True)
class Corpus:
    """A question and the documents it is asked of, as files (name: content)."""

    question: str
    files: dict[str, str]

    def write(self, root: Path) -> Path:
        for name, text in self.files.items():
            write(root / name, text)
        return root


def _travel_policy(year: int, date: str, hotel: int, manager: int, meals: int) -> str:
    return (
        f"---\ntitle: 差旅费管理办法（{year} 版）\ndate: {date}\n---\n\n# 差旅费管理办法（{year} 版）\n\n"
        f"本办法自 {date} 起施行，适用于全体员工。\n\n## 住宿\n\n"
        f"员工出差时，一线城市住宿标准为 {hotel} 元/晚，经理及以上为 {manager} 元/晚，超出部分由个人承担。\n\n"
        f"## 伙食补助\n\n出差期间按自然日发放伙食补助，每人每天 {meals} 元。\n"
    )


# Two travel policies a year apart, dated in their front matter, that disagree on the hotel cap in tier-1 cities:
# 450 元/晚 from 2024-03-01, 500 元/晚 from 2025-01-01 (the one in force). Beside it, a meal allowance that
# also changed, so the answer has to pick the attribute asked about.
HOTEL = Corpus(
    "出差住宿标准是多少？",
    {
        "travel-2024.md": _travel_policy(2024, "2024-03-01", 450, 600, 100),
        "travel-2025.md": _travel_policy(2025, "2025-01-01", 500, 650, 120),
    },
)

# A question the documents cannot answer: Kestrel is described, but only Aurora's availability SLA is stated.
KESTREL_SLA = Corpus(
    "Kestrel 的可用性 SLA 是多少？",
    {
        "kestrel.md": "# Kestrel\n\n## 概述\n\n"
        "Kestrel 是北风实验室的内部索引与向量化流水线，由数据平台组维护，负责人张伟。\n\n## 配额\n\n"
        "每个租户每分钟最多写入 1,200 篇文档（企业版 6,000 篇），单批最多 256 篇，超出配额的写入返回 E1031。\n\n"
        "## 告警\n\n队列积压超过 5,000 条持续 10 分钟时触发告警，值班频道为 #kestrel-oncall。\n",
        "aurora-sla.md": "# Aurora 服务等级协议\n\n## 可用性\n\n"
        "Aurora 企业版提供 99.95% 的可用性 SLA，未达标时按月费比例给予服务抵扣。"
        "标准版的可用性目标为 99.9%，不提供服务抵扣。\n",
    },
)


def assert_hotel_conflict(contract: dict[str, Any]) -> None:
    """The `ask --json` answer to HOTEL's question: the two policies side by side, newest first, each with its
    date, the 2025 value in force, and the short answer."""
    assert contract["conflicts"], "the two policies disagree and the answer says so"
    conflict = contract["conflicts"][0]
    sides = {Path(v["source"]).name: v for v in conflict["values"]}
    assert set(sides) == set(HOTEL.files)
    assert (sides["travel-2025.md"]["date"], sides["travel-2024.md"]["date"]) == ("2025-01-01", "2024-03-01")
    assert "500" in sides["travel-2025.md"]["value"]
    assert "450" in sides["travel-2024.md"]["value"]
    assert [Path(v["source"]).name for v in conflict["values"]] == ["travel-2025.md", "travel-2024.md"]
    assert conflict["current"] == sides["travel-2025.md"]["value"]
    assert "500" in (contract["short_answer"] or "")
