"""Metrics as everyone reports them (../shared/data/README.md): passage-level, binary-gain nDCG."""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

RECALL_KS = (5, 10, 20)


def passages_by_first_appearance(doc_ids: Iterable[str]) -> list[str]:
    """A chunk ranking turned into a passage ranking: each passage at its best chunk's position."""
    return list(dict.fromkeys(doc_ids))


def retrieval_metrics(ranked: Sequence[str], relevant: dict[str, float]) -> dict[str, float]:
    ranked = passages_by_first_appearance(ranked)
    n_rel = len(relevant)
    out: dict[str, float] = {}
    for k in RECALL_KS:
        out[f"recall@{k}"] = sum(1 for d in ranked[:k] if d in relevant) / n_rel
    top10 = set(ranked[:10])
    out["all_recall@10"] = 1.0 if all(d in top10 for d in relevant) else 0.0
    dcg = sum(relevant.get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    out["ndcg@10"] = dcg / idcg if idcg > 0 else 0.0
    out["mrr@10"] = next((1.0 / (i + 1) for i, d in enumerate(ranked[:10]) if d in relevant), 0.0)
    return out


def recall_curve(ranked: Sequence[str], relevant: dict[str, float], max_k: int = 20) -> list[float]:
    ranked = passages_by_first_appearance(ranked)
    found = 0
    curve = []
    for k in range(1, max_k + 1):
        if k <= len(ranked) and ranked[k - 1] in relevant:
            found += 1
        curve.append(found / len(relevant))
    return curve


# ---------------------------------------------------------------------------------- answers

_PUNCT = set(string.punctuation) | set("，。！？；：、“”‘’（）《》【】—…·「」『』")


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and English articles, collapse whitespace (SQuAD style, CJK-aware)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if ch in _PUNCT else ch for ch in text)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _answer_tokens(text: str) -> list[str]:
    """Words for Latin text, single characters for CJK (the usual CMRC / SQuAD-zh convention)."""
    tokens: list[str] = []
    for word in normalize_answer(text).split():
        if any("\u4e00" <= ch <= "\u9fff" for ch in word):
            tokens.extend(ch for ch in word)
        else:
            tokens.append(word)
    return tokens


def contains(prediction: str, answers: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return 1.0 if any(normalize_answer(a) and normalize_answer(a) in pred for a in answers) else 0.0


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return 1.0 if any(pred == normalize_answer(a) for a in answers) else 0.0


def f1(prediction: str, answers: Sequence[str]) -> float:
    pred = _answer_tokens(prediction)
    best = 0.0
    for answer in answers:
        gold = _answer_tokens(answer)
        common = Counter(pred) & Counter(gold)
        overlap = sum(common.values())
        if overlap == 0 or not pred or not gold:
            continue
        precision, recall = overlap / len(pred), overlap / len(gold)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
