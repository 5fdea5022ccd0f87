"""The term dictionary of a saved BM25 segment, looked up in mapped files instead of held as a Python dict.

A dict of every term was built at open from `terms.txt` (format 2): at 100k chunks about 200,000 str keys,
tens of MB of Python objects and a noticeable part of the first search; at a million chunks more of both.
From format 3 a saved segment keeps, beside its postings:

    terms.bin         every term's UTF-8 bytes, concatenated in term-id order
    term_offsets.npy  int64, n + 1: term t is terms.bin[offsets[t]:offsets[t + 1]]
    term_hashes.npy   uint32, n: crc32 of each term's bytes, ascending
    term_slots.npy    int32, n: the term id at each position of term_hashes

A lookup hashes the token, finds its run of equal hashes by binary search (numpy, in the mapped file) and
compares the bytes of each term in the run with the token's, so a collision can never return a wrong term.
Opening reads none of it; a lookup touches a few pages of each file (mapped page by page: `mapping`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentrag.store.mapping import map_file, map_npy

FILES = ("terms.bin", "term_offsets.npy", "term_hashes.npy", "term_slots.npy")


def _hash(data: bytes) -> int:
    return zlib.crc32(data)


class TermTable(Mapping[str, int]):
    """Term -> term id over the four mapped files (see the module docstring); read-only."""

    def __init__(
        self,
        blob: npt.NDArray[np.uint8],
        offsets: npt.NDArray[np.int64],
        hashes: npt.NDArray[np.uint32],
        slots: npt.NDArray[np.int32],
    ) -> None:
        if len(offsets) != len(hashes) + 1 or len(slots) != len(hashes):
            raise ValueError("term files disagree")
        if len(hashes) and int(offsets[-1]) != len(blob):
            raise ValueError("term offsets and term bytes disagree")
        self._blob = blob
        self._offsets = offsets
        self._hashes = hashes
        self._slots = slots

    # ------------------------------------------------------------------ files

    @staticmethod
    def write(directory: Path, vocabulary: list[str]) -> None:
        """The files of a table holding `vocabulary[t]` as term t."""
        encoded = [term.encode("utf-8") for term in vocabulary]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        hashes = np.fromiter((_hash(e) for e in encoded), dtype=np.uint32, count=len(encoded))
        order = np.argsort(hashes, kind="stable")
        (directory / "terms.bin").write_bytes(b"".join(encoded))
        np.save(directory / "term_offsets.npy", offsets, allow_pickle=False)
        np.save(directory / "term_hashes.npy", hashes[order], allow_pickle=False)
        np.save(directory / "term_slots.npy", order.astype(np.int32), allow_pickle=False)

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
            array("term_slots.npy", np.int32),  # type: ignore[arg-type]
        )

    # ------------------------------------------------------------------ lookups

    def _term_bytes(self, t: int) -> bytes:
        return self._blob[int(self._offsets[t]) : int(self._offsets[t + 1])].tobytes()

    def ids(self, tokens: list[str]) -> list[int | None]:
        """Each token's term id (None where it is not a term), with one binary search for them all."""
        if not tokens or len(self._hashes) == 0:
            return [None] * len(tokens)
        encoded = [token.encode("utf-8") for token in tokens]
        wanted = np.fromiter((_hash(e) for e in encoded), dtype=np.uint32, count=len(encoded))
        starts = np.searchsorted(self._hashes, wanted).tolist()
        out: list[int | None] = []
        n = len(self._hashes)
        for data, h, at in zip(encoded, wanted.tolist(), starts, strict=True):
            found = None
            while at < n and int(self._hashes[at]) == h:
                t = int(self._slots[at])
                if self._term_bytes(t) == data:
                    found = t
                    break
                at += 1
            out.append(found)
        return out

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
