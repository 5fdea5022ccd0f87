"""An inverted index that scores exactly as SQLite FTS5's `bm25()` does, in numpy.

FTS5 scores every row that matches any OR'd query token with a per-row C callback, so a BM25 query costs
time in proportion to the corpus (66 ms at a million chunks). This index holds the same postings as
numpy arrays (per term: the rows, and the term's frequency in the title and in the body) and scores a
query with a few vectorised passes over the postings of its tokens, with FTS5's formula:

    score = sum over query tokens of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))

where f = title_weight * tf(title) + tf(body), D is the row's token count over both columns, avgdl the mean
of D, and idf = ln((N - n + 0.5) / (n + 0.5)) clamped to 1e-6 (N rows, n rows holding the token). A token
repeated in the query counts once per repetition, as a repeated FTS5 phrase does.

An index is one or more `Segment`s: a large one saved beside the database and a small one of recent
changes, with the rows of the large one that changed since masked out (see `sqlite/text_index`). Each
segment keeps, per term, a bound of its contribution to any row, which `bm25_search` uses to skip rows that
cannot reach the top k.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from agentrag.store.bm25_terms import TermTable, vocabulary
from agentrag.store.mapping import Origin, map_npy, origin, save_npy, will_read

K1 = 1.2
B = 0.75
# FTS5's 'ascii' tokenizer: ASCII letters and digits are token characters, every other ASCII character
# separates tokens, and every non-ASCII character belongs to a token; ASCII letters are folded to lower case.
_ASCII_TOKEN = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# 2: per-term score bounds (`Segment.bounds`) for pruned top-k search; files of format 1 are rebuilt.
# 3: the term dictionary in mapped files (`bm25_terms`) instead of `terms.txt`; format 2 is read (a dict of its
# terms.txt) and saved again as 3 by the text index, its postings unchanged.
FORMAT = "agentrag-bm25/3"
FORMAT_2 = "agentrag-bm25/2"
BOUND_TITLE_WEIGHT = 2.0  # the title weight the saved bounds assume (the default); others scale them
PREFETCH_POSTINGS = 64  # postings from which a term's run is asked for at once (rows and frequencies together)
TF_MAX = 65535  # a term frequency is capped here (FTS5 counts on; no chunk comes near it)

# A term frequency array: uint8 when every frequency of the segment is below 256 (almost always: half the
# postings' bytes, on disk and in memory, read and mapped at search), uint16 otherwise. The values are the same,
# and so is every score.
Counts = npt.NDArray[np.uint8] | npt.NDArray[np.uint16]


def narrow_counts(counts: npt.NDArray[Any]) -> Counts:
    """Term frequencies (capped at TF_MAX) in the narrowest of uint8 and uint16 that holds them all."""
    top = int(counts.max()) if len(counts) else 0
    if top <= np.iinfo(np.uint8).max:
        return counts.astype(np.uint8)
    capped: npt.NDArray[np.uint16] = np.minimum(counts, TF_MAX).astype(np.uint16)
    return capped


def fts5_tokens(text: str) -> list[str]:
    """The tokens FTS5's 'ascii' tokenizer finds in `text`."""
    return _ASCII_TOKEN.findall(text.translate(_ASCII_LOWER))


@dataclass
class Segment:
    """Postings of a set of rows. Rows are numbered 0..n-1 in key order; `keys[i]` is row i's chunk key."""

    keys: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int32]  # D: tokens in title and body
    terms: Mapping[str, int]  # a dict while built in memory, a mapped `TermTable` once saved
    indptr: npt.NDArray[np.int64]  # term t's postings are [indptr[t], indptr[t + 1])
    rows: npt.NDArray[np.int32]
    tf_title: Counts
    tf_body: Counts
    # Per term: the largest f / (f + k1 * (1 - b + b * D / bound_avgdl)) over its postings, f taken with
    # BOUND_TITLE_WEIGHT; bound_avgdl is this segment's mean row length (see `bm25_topk.upper_bound`).
    bounds: npt.NDArray[np.float64]
    bound_avgdl: float
    # Where the postings arrays lie in their mapped files (a saved segment only): see `will_read`.
    origins: tuple[Origin | None, ...] = field(default=(), repr=False, compare=False)
    _asked: set[int] = field(default_factory=set, repr=False, compare=False)  # terms whose run was asked for

    @classmethod
    def build(cls, items: Iterable[tuple[int, str, str]]) -> Segment:
        """A segment of (key, title, body) rows, as stored in `chunks_fts`."""
        terms: dict[str, int] = {}
        keys: list[int] = []
        lengths: list[int] = []
        post_term: list[int] = []
        post_row: list[int] = []
        post_title: list[int] = []
        post_body: list[int] = []
        for row, (key, title, body) in enumerate(sorted(items, key=lambda item: item[0])):
            title_tokens, body_tokens = fts5_tokens(title), fts5_tokens(body)
            keys.append(key)
            lengths.append(len(title_tokens) + len(body_tokens))
            in_title, in_body = Counter(title_tokens), Counter(body_tokens)
            for token in in_title.keys() | in_body.keys():
                post_term.append(terms.setdefault(token, len(terms)))
                post_row.append(row)
                post_title.append(in_title.get(token, 0))
                post_body.append(in_body.get(token, 0))
        term_ids = np.asarray(post_term, dtype=np.int64)
        order = np.argsort(term_ids, kind="stable")  # rows stay ascending within a term
        indptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_ids, minlength=len(terms)), out=indptr[1:])
        return cls.of(
            keys=np.asarray(keys, dtype=np.int64),
            lengths=np.asarray(lengths, dtype=np.int32),
            terms=terms,
            indptr=indptr,
            rows=np.asarray(post_row, dtype=np.int32)[order],
            tf_title=np.asarray(post_title, dtype=np.int64)[order],
            tf_body=np.asarray(post_body, dtype=np.int64)[order],
        )

    @classmethod
    def of(cls, **arrays: Any) -> Segment:
        """A segment of the given postings (term frequencies narrowed: `narrow_counts`), its per-term bounds
        computed from them."""
        arrays["tf_title"], arrays["tf_body"] = narrow_counts(arrays["tf_title"]), narrow_counts(arrays["tf_body"])
        lengths = arrays["lengths"]
        avgdl = float(lengths.mean(dtype=np.float64)) if len(lengths) else 0.0
        avgdl = avgdl if avgdl > 0 else 1.0
        bounds = term_bounds(arrays["indptr"], arrays["rows"], arrays["tf_title"], arrays["tf_body"], lengths, avgdl)
        return cls(**arrays, bounds=bounds, bound_avgdl=avgdl)

    def __len__(self) -> int:
        return len(self.keys)

    def will_read(self, t: int, lo: int, hi: int) -> None:
        """Term t's postings [lo, hi) of a saved segment are about to be read: ask for the run in one read per
        array, the three at once, once per term in this process (the mapping is otherwise read page by page, as
        a scattered access wants, one fault after another; asking again for pages in memory would only cost
        system calls)."""
        if self.origins and hi - lo >= PREFETCH_POSTINGS and t not in self._asked:
            self._asked.add(t)
            arrays: tuple[npt.NDArray[Any], ...] = (self.rows, self.tf_title, self.tf_body)
            for where, array in zip(self.origins, arrays, strict=True):
                will_read(where, lo, hi, array.itemsize)

    def postings(self, token: str) -> tuple[npt.NDArray[np.int32], Counts, Counts]:
        t = self.terms.get(token)
        if t is None:
            empty = np.zeros(0, dtype=np.int32)
            return empty, self.tf_title[:0], self.tf_body[:0]
        lo, hi = int(self.indptr[t]), int(self.indptr[t + 1])
        return self.rows[lo:hi], self.tf_title[lo:hi], self.tf_body[lo:hi]

    # ------------------------------------------------------------------ files

    _ARRAYS = ("keys", "lengths", "indptr", "rows", "tf_title", "tf_body", "bounds")
    _POSTINGS = ("rows", "tf_title", "tf_body")

    def save(self, directory: Path, generation: int) -> None:
        """Write to `directory` atomically (a temporary directory renamed into place)."""
        tmp = directory.with_name(f"{directory.name}.tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name in self._ARRAYS:
            save_npy(tmp / f"{name}.npy", getattr(self, name))
        TermTable.write(tmp, vocabulary(self.terms))
        meta = {
            "format": FORMAT,
            "generation": generation,
            "rows": len(self),
            "terms": len(self.terms),
            "bound_avgdl": self.bound_avgdl,
        }
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        shutil.rmtree(directory, ignore_errors=True)
        tmp.rename(directory)

    @classmethod
    def load(cls, directory: Path) -> tuple[Segment, int]:
        """A saved segment (its arrays memory-mapped) and the generation it reflects; ValueError if damaged."""
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") not in (FORMAT, FORMAT_2):
            raise ValueError(f"unknown format {meta.get('format')!r}")
        # Plain arrays over the mapping, not np.memmap: slicing an np.memmap costs a Python-level __getitem__
        # and __array_finalize__ per postings list (three per query token), a tenth of a BM25 search.
        # Mapped read page by page (`mapping`): a query reads a few terms' postings, never the whole file.
        # The per-row and per-term arrays (keys, lengths, indptr, bounds: 22 MB at a million chunks) are read
        # whole at open, in the background: the lengths for the length norms at once, the others a few entries
        # per query term all over them. The postings (450 MB there) are read as terms ask: `will_read`.
        arrays = {
            name: map_npy(directory / f"{name}.npy", "MADV_RANDOM" if name in cls._POSTINGS else "MADV_WILLNEED")
            for name in cls._ARRAYS
        }
        terms: Mapping[str, int]
        if meta["format"] == FORMAT:
            terms = TermTable.load(directory)
        else:  # format 2: read once, to be saved again as format 3
            text = (directory / "terms.txt").read_text(encoding="utf-8")
            words = text.split("\n") if text else []
            terms = dict(zip(words, range(len(words)), strict=True))
        if len(terms) != meta["terms"] or len(arrays["indptr"]) != len(terms) + 1:
            raise ValueError("term list and postings disagree")
        if len(arrays["bounds"]) != len(terms):
            raise ValueError("term list and bounds disagree")
        if len(arrays["keys"]) != meta["rows"] or int(arrays["indptr"][-1]) != len(arrays["rows"]):
            raise ValueError("row count and postings disagree")
        origins = tuple(origin(arrays[name]) for name in cls._POSTINGS)
        segment = cls(terms=terms, bound_avgdl=float(meta["bound_avgdl"]), origins=origins, **cast(Any, arrays))
        return segment, int(meta["generation"])

    @staticmethod
    def saved_format(directory: Path) -> str | None:
        """The format a saved segment's meta.json records (None if unreadable)."""
        try:
            found = json.loads((directory / "meta.json").read_text(encoding="utf-8")).get("format")
        except (OSError, ValueError, AttributeError):
            return None
        return found if isinstance(found, str) else None


def merge(main: Segment, live: npt.NDArray[np.bool_] | None, recent: Segment) -> Segment:
    """One segment holding the live rows of `main` and every row of `recent` (whose keys `live` masks out
    of `main`), built from the postings alone: no text is read or tokenized again."""
    keep = np.ones(len(main), dtype=np.bool_) if live is None else np.asarray(live, dtype=np.bool_)
    keys = np.concatenate([main.keys[keep], recent.keys])
    order = np.argsort(keys, kind="stable")
    keys, lengths = keys[order], np.concatenate([main.lengths[keep], recent.lengths])[order]
    new_row = np.empty(len(order), dtype=np.int64)
    new_row[order] = np.arange(len(order))
    main_row = np.full(len(main), -1, dtype=np.int64)
    main_row[np.flatnonzero(keep)] = new_row[: int(keep.sum())]
    recent_row = new_row[int(keep.sum()) :]

    terms = {term: t for t, term in enumerate(vocabulary(main.terms))}
    recent_ids = np.asarray([terms.setdefault(t, len(terms)) for t in recent.terms], dtype=np.int64)
    main_terms = np.repeat(np.arange(len(main.terms), dtype=np.int64), np.diff(main.indptr))
    recent_terms = recent_ids[np.repeat(np.arange(len(recent.terms), dtype=np.int64), np.diff(recent.indptr))]
    posted = keep[main.rows]
    term_ids = np.concatenate([main_terms[posted], recent_terms])
    rows = np.concatenate([main_row[main.rows[posted]], recent_row[recent.rows]])
    tf_title = np.concatenate([main.tf_title[posted], recent.tf_title])
    tf_body = np.concatenate([main.tf_body[posted], recent.tf_body])
    by_term = np.lexsort((rows, term_ids))
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_ids, minlength=len(terms)), out=indptr[1:])
    return Segment.of(
        keys=keys,
        lengths=lengths.astype(np.int32),
        terms=terms,
        indptr=indptr,
        rows=rows[by_term].astype(np.int32),
        tf_title=tf_title[by_term],
        tf_body=tf_body[by_term],
    )


def term_bounds(
    indptr: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    tf_title: Counts,
    tf_body: Counts,
    lengths: npt.NDArray[np.int32],
    avgdl: float,
) -> npt.NDArray[np.float64]:
    """Per term, the largest f / (f + k1 * (1 - b + b * D / avgdl)) over its postings (0 for a term with
    none), f = BOUND_TITLE_WEIGHT * tf(title) + tf(body): computed in slices of postings to bound memory."""
    out = np.zeros(len(indptr) - 1, dtype=np.float64)
    nonempty = np.flatnonzero(np.diff(indptr) > 0)
    if len(nonempty) == 0:
        return out
    step = 1 << 22
    norms = K1 * (1 - B + B * lengths.astype(np.float64) / avgdl)
    starts = indptr[nonempty]
    done = 0
    while done < len(nonempty):  # whole terms per slice, at least one, about `step` postings
        end = int(np.searchsorted(starts, starts[done] + step, side="left"))
        end = max(end, done + 1)
        lo, hi = int(starts[done]), int(indptr[nonempty[end - 1] + 1])
        f = BOUND_TITLE_WEIGHT * tf_title[lo:hi] + tf_body[lo:hi].astype(np.float64)
        sat = f / (f + norms[rows[lo:hi]])
        out[nonempty[done:end]] = np.maximum.reduceat(sat, starts[done:end] - lo)
        done = end
    return out
