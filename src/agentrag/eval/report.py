"""A readable Markdown report of an eval run, with a Recall@k chart per channel (PNG, extra `plot`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

METRICS = ("recall@5", "recall@10", "recall@20", "all_recall@10", "ndcg@10", "mrr@10")


def write_chart(curves: dict[str, list[float]], title: str, path: Path) -> bool:
    """Recall@k for k = 1..20, one line per channel. False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not curves:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for name, curve in curves.items():
        ax.plot(range(1, len(curve) + 1), curve, marker="o", markersize=3, label=name)
    ax.set_xlabel("k (passages)")
    ax.set_ylabel("Recall@k")
    ax.set_ylim(0, 1)
    ax.set_xticks([1, 5, 10, 15, 20])
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def write_report(result: dict[str, Any], path: Path) -> Path:
    details = result.get("details", {})
    chart = path.with_suffix(".png")
    has_chart = write_chart(details.get("recall_curves", {}), f"{result['dataset']}: Recall@k by channel", chart)
    lines = [
        f"# agentrag eval: {result['dataset']}",
        "",
        f"{result['queries']} queries · task `{details.get('task')}` · channel `{details.get('channel')}` · "
        f"knowledge base `{details.get('knowledge_base')}`",
        "",
        "## Retrieval by channel",
        "",
        "| channel | " + " | ".join(METRICS) + " | p50 ms | p95 ms |",
        "|---|" + "---|" * (len(METRICS) + 2),
    ]
    for name, m in details.get("channels", {}).items():
        cells = [_fmt(m.get(k)) for k in METRICS] + [_fmt(m.get("latency_ms_p50")), _fmt(m.get("latency_ms_p95"))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    if has_chart:
        lines += [f"![Recall@k by channel]({chart.name})", ""]
    else:
        lines += ["(Install the `plot` extra, `pip install 'agentrag[plot]'`, for the Recall@k chart.)", ""]
    by_type = details.get("by_type", {}).get(details.get("channel"), {})
    if by_type:
        lines += [
            "## By question type",
            "",
            "| type | n | recall@10 | all_recall@10 | ndcg@10 |",
            "|---|---|---|---|---|",
        ]
        for t, m in sorted(by_type.items()):
            lines.append(
                f"| {t} | {m['n']} | {_fmt(m['recall@10'])} | {_fmt(m['all_recall@10'])} | {_fmt(m['ndcg@10'])} |"
            )
        lines.append("")
    answer = result.get("answer", {})
    if any(v is not None for v in answer.values()):
        lines += ["## Answers", "", "| " + " | ".join(answer) + " |", "|" + "---|" * len(answer)]
        lines.append("| " + " | ".join(_fmt(v) for v in answer.values()) + " |")
        lines.append("")
    process, ingest = result.get("process", {}), result.get("ingest", {})
    lines += [
        "## Process",
        "",
        "| " + " | ".join(process) + " |",
        "|" + "---|" * len(process),
        "| " + " | ".join(_fmt(v) for v in process.values()) + " |",
        "",
        "## Ingest",
        "",
        f"{_fmt(ingest.get('passages'))} passages in {_fmt(ingest.get('seconds'))} s "
        f"({_fmt(ingest.get('passages_per_s'))} passages/s)"
        + (" — knowledge base reused from an earlier run" if details.get("ingest_reused") else ""),
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
