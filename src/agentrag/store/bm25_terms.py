"""The term dictionary of a saved BM25 segment, looked up in mapped files instead of held as a Python dict.

A dict of every term was built at open from `terms.txt` (format 2): at 100k chunks about 200,000 str keys,
tens of MB of Python objects and a noticeable part of the first search; at a million chunks more of both.
From format 3 a saved segment keeps, beside its postings:

    terms.bin         every term's UTF-8 bytes, concatenated in term-id order
    term_offsets.npy  int64, n + 1: term t is terms.bin[offsets[t]:offsets[t + 1]]
    term_hashes.npy   uint32, n: crc32 of each term's bytes, by term id
    term_table.npy    int32, a power of two at least 2n: an open-addressing hash table (linear probing from
                      slot hash & (size - 1)) of term id + 1, 0 for an empty slot

A lookup hashes the token and walks the table from its slot to the first empty one, comparing the bytes of
each term whose hash is the token's with the token's, so a collision can never return a wrong term: one or
two probes at this load, about a microsecond per token.
Opening reads none of it; a lookup touches a few pages of each file (mapped page by page: `mapping`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentrag.store.mapping import map_file, map_npy, save_npy, write_pieces

FILES = ("terms.bin", "term_offsets.npy", "term_hashes.npy", "term_table.npy")


def _hash(data: bytes) -> int:
    return zlib.crc32(data)


class TermTable(Mapping[str, int]):
    """Term -> term id over the four mapped files (see the module docstring); read-only."""

    def __init__(
        self,
        blob: npt.NDArray[np.uint8],
        offsets: npt.NDArray[np.int64],
        hashes: npt.NDArray[np.uint32],
        table: npt.NDArray[np.int32],
    ) -> None:
        if len(offsets) != len(hashes) + 1 or len(table) < 2 * len(hashes) or len(table) & (len(table) - 1):
            raise ValueError("term files disagree")
        if len(hashes) and int(offsets[-1]) != len(blob):
            raise ValueError("term offsets and term bytes disagree")
        self._blob = blob
        self._offsets = offsets
        self._hashes = hashes
        self._table = table
        # memoryviews index into Python ints at C speed, where a numpy scalar costs ten times more
        self._views = (table.data, hashes.data, offsets.data, blob.data)

    # ------------------------------------------------------------------ files

    @staticmethod
    def write(directory: Path, vocabulary: list[str]) -> None:
        """The files of a table holding `vocabulary[t]` as term t."""
        encoded = [term.encode("utf-8") for term in vocabulary]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        hashes = np.fromiter((_hash(e) for e in encoded), dtype=np.uint32, count=len(encoded))
        with (directory / "terms.bin").open("wb") as out:
            write_pieces(out, b"".join(encoded))
        save_npy(directory / "term_offsets.npy", offsets)
        save_npy(directory / "term_hashes.npy", hashes)
        save_npy(directory / "term_table.npy", _table(hashes))

    @classmethod
    def load(cls, directory: Path) -> TermTable:
        """The saved table, mapped (nothing read until a lookup); ValueError if its files disagree."""
        blob_path = directory / "terms.bin"
        if blob_path.stat().st_size:
            blob = np.frombuffer(map_file(blob_path), dtype=np.uint8)
        else:  # an empty file cannot be mapped
            blob = np.zeros(0, dtype=np.uint8)

        def array(name: str, dtype: type) -> npt.NDArray[np.generic]:
            loaded = map_npy(directory / name)
            if loaded.dtype != dtype or loaded.ndim != 1:
                raise ValueError(f"{name}: unexpected array")
            return loaded

        return cls(
            blob,
            array("term_offsets.npy", np.int64),  # type: ignore[arg-type]
            array("term_hashes.npy", np.uint32),  # type: ignore[arg-type]
            array("term_table.npy", np.int32),  # type: ignore[arg-type]
        )

    # ------------------------------------------------------------------ lookups

    def ids(self, tokens: list[str]) -> list[int | None]:
        """Each token's term id (None where it is not a term)."""
        return [self._find(token.encode("utf-8")) for token in tokens]

    def _find(self, data: bytes) -> int | None:
        table, hashes, offsets, blob = self._views
        h = _hash(data)
        mask = len(table) - 1
        at = h & mask
        while (entry := table[at]) != 0:
            t = entry - 1
            if hashes[t] == h and blob[offsets[t] : offsets[t + 1]] == data:
                return int(t)
            at = (at + 1) & mask
        return None

    def get(self, token: str, default: int | None = None) -> int | None:  # type: ignore[override]
        found = self.ids([token])[0]
        return default if found is None else found

    def __getitem__(self, token: str) -> int:
        found = self.ids([token])[0]
        if found is None:
            raise KeyError(token)
        return found

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.ids([token])[0] is not None

    def __len__(self) -> int:
        return len(self._hashes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.vocabulary())

    def vocabulary(self) -> list[str]:
        """Every term, in term-id order (decoded whole: for a merge, never for a search)."""
        data = self._blob.tobytes()
        bounds = self._offsets.tolist()
        return [data[bounds[t] : bounds[t + 1]].decode("utf-8") for t in range(len(bounds) - 1)]


def _table(hashes: npt.NDArray[np.uint32]) -> npt.NDArray[np.int32]:
    """The open-addressing table of term ids + 1 for these hashes (size a power of two, at most half full),
    filled in rounds: each round every term still waiting takes its current slot if the slot is empty and no
    term before it in this round wants it, else moves one slot on. A slot is never emptied, so every slot
    between a term's home slot and its own is occupied: what linear probing needs to find it."""
    n = len(hashes)
    size = 1 << max(1, (2 * n - 1).bit_length())
    table = np.zeros(size, dtype=np.int32)
    waiting = np.arange(n, dtype=np.int64)
    at = hashes.astype(np.int64) & (size - 1)
    while len(waiting):
        free = np.flatnonzero(table[at] == 0)
        _, first = np.unique(at[free], return_index=True)
        placed = free[first]
        table[at[placed]] = waiting[placed] + 1
        left = np.ones(len(waiting), dtype=np.bool_)
        left[placed] = False
        waiting, at = waiting[left], (at[left] + 1) & (size - 1)
    return table


def vocabulary(terms: Mapping[str, int]) -> list[str]:
    """The terms of a segment's dictionary (a dict or a saved table), in term-id order."""
    if isinstance(terms, TermTable):
        return terms.vocabulary()
    return sorted(terms, key=terms.__getitem__)


def term_ids(terms: Mapping[str, int], tokens: list[str]) -> list[int | None]:
    """Each token's term id in a segment's dictionary (None where absent)."""
    if isinstance(terms, TermTable):
        return terms.ids(tokens)
    return [terms.get(token) for token in tokens]
