"""Language-aware tokens for the BM25 index: one tokenizer at index and at query time.

CJK runs go through jieba's search-mode segmentation (words and their sub-words, so 中华人民共和国 also
matches 共和国); every other word run is lower-cased, stripped of English stopwords and Snowball-stemmed.
Single characters are kept: many Chinese words are one character long.

At query time a few more words are dropped: interrogatives and question scaffolding ("which", "什么",
"哪个") that carry no content but, being rare in documents, would get a high IDF.
"""

from __future__ import annotations

import logging
import marshal
import os
import re
import sys
import threading
from functools import lru_cache
from typing import Any, BinaryIO

import Stemmer

CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_TOKEN_RE = re.compile(rf"([{CJK_RANGES}]+)|([^\W{CJK_RANGES}]+)")

# Lucene's English stopword set: small on purpose, so phrases such as "The Who" keep their content.
ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

# Dropped from queries only: question scaffolding that documents rarely contain.
QUERY_STOPWORDS_EN = frozenset(
    "what which who whom whose when where why how did does do was were is are has have had the a an name named".split()
)
QUERY_STOPWORDS_ZH = frozenset(
    "什么 哪 哪个 哪些 哪里 哪儿 哪一个 哪一年 谁 多少 几 怎么 怎样 如何 为什么 "
    "是 的 了 吗 呢 请问 请 一下 是否 有没有 什么样 多久 何时 啥".split()
)
QUERY_STOPWORDS = QUERY_STOPWORDS_EN | QUERY_STOPWORDS_ZH

TOKENIZER_VERSION = "jieba-search+snowball-en/1"

_jieba_lock = threading.Lock()
_jieba_ready = False


class _WholeFileMarshal:
    """The `marshal` jieba is given: jieba loads its dictionary cache (a 9 MB file, one tuple) with
    `marshal.load(file)`, which reads the file a few bytes at a time through Python's file object: 1.2-1.6 s of every
    process that tokenizes Chinese (a CLI `search` or `ask` each time), where `marshal.loads` of the file read whole
    makes the same object in 0.38 s (BENCHMARKS.md, issue 14)."""

    dump = staticmethod(marshal.dump)
    dumps = staticmethod(marshal.dumps)
    loads = staticmethod(marshal.loads)

    @staticmethod
    def load(file: BinaryIO) -> Any:
        return marshal.loads(file.read())


def ensure_jieba() -> None:
    """jieba loads its dictionary lazily and is not safe to initialise from two threads at once. It is imported
    here, not with this module: what only needs `has_cjk` (the CLI's start-up, the answer text) never loads it."""
    global _jieba_ready
    if _jieba_ready:
        return
    with _jieba_lock:
        if not _jieba_ready:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.marshal = _WholeFileMarshal  # the module global its cache load uses
            jieba.initialize()
            _jieba_ready = True


def segment(text: str, hmm: bool = True) -> list[str]:
    """jieba's words of `text` (its default cut; `hmm`: new words found by its HMM). Every caller outside this module
    goes through here, so jieba is always set up by `ensure_jieba`: quiet, its cache read whole, initialised once."""
    ensure_jieba()
    import jieba  # already loaded by ensure_jieba: a dictionary lookup

    return [str(word) for word in jieba.lcut(text, HMM=hmm)]


def _after_fork_in_child() -> None:
    """A forked ingest worker (`ingest.workers`) has only the forking thread: a lock another thread held at the
    fork would never be released there, so the locks jieba's loading takes are new ones."""
    global _jieba_lock
    _jieba_lock = threading.Lock()
    jieba = sys.modules.get("jieba")
    if jieba is not None and not _jieba_ready:
        jieba.dt.lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


@lru_cache(maxsize=200_000)
def _word_token(word: str) -> str | None:
    """The token of a non-CJK word as written (None: a stopword); cached, as a corpus repeats its words."""
    lowered = word.lower()
    return None if lowered in ENGLISH_STOPWORDS else _stem(lowered)


_CJK_RE = re.compile(f"[{CJK_RANGES}]")
_WORD_RE = re.compile(rf"[^\W{CJK_RANGES}]+")  # the second group of _TOKEN_RE


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def tokenize(text: str) -> list[str]:
    """Index-time tokens (also the base of query tokens)."""
    if not has_cjk(text):  # no CJK run: every match of _TOKEN_RE is a word, found in one C call
        return [t for t in map(_word_token, _WORD_RE.findall(text)) if t is not None]
    out: list[str] = []
    for m in _TOKEN_RE.finditer(text):
        cjk, word = m.group(1), m.group(2)
        if cjk:
            ensure_jieba()
            import jieba  # already loaded by ensure_jieba: a dictionary lookup

            out.extend(t for t in jieba.lcut_for_search(cjk) if t.strip())
        else:
            token = _word_token(word)
            if token is not None:
                out.append(token)
    return out


@lru_cache(maxsize=1)
def _stemmed_query_stopwords() -> frozenset[str]:
    return frozenset(_stem(w) if not has_cjk(w) else w for w in QUERY_STOPWORDS)


def tokenize_query(text: str) -> list[str]:
    """Query tokens: index tokens minus question scaffolding, de-duplicated in order.

    If dropping scaffolding would leave nothing ("what is it?"), the plain tokens are kept instead.
    """
    return list(_query_tokens(text))


@lru_cache(maxsize=16_384)
def _query_tokens(text: str) -> tuple[str, ...]:
    # Answer selection asks for the same question's and target's tokens once per candidate sentence.
    tokens = tokenize(text)
    stop = _stemmed_query_stopwords()
    kept = [t for t in tokens if t not in stop]
    return tuple(dict.fromkeys(kept or tokens))
