"""Chinese words with their part of speech (jieba.posseg), without reading jieba's dictionary in every process.

`import jieba.posseg` builds its default tagger at import: the part of speech of each of the 349,046 words of
jieba's dictionary, read line by line in a Python loop into a dict (0.49 s, paid again by every process that looks
for Chinese names: each CLI `ask` in Chinese). Here the tags are kept in mapped files, built once per dictionary
beside jieba's own cache (the temp folder): the words in a `TermTable` (the mapped string table the BM25 index keeps
its terms in) and one byte per word naming its tag. `jieba.posseg` is imported with its own read of the dictionary
skipped and its tagger looks each word up in those files, a microsecond or two per word. A dictionary the one-pass
parse could read otherwise than jieba's loop (a blank line, a line that is not three fields) is left to that loop.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from agentrag.store.bm25_terms import TermTable
from agentrag.store.mapping import map_npy, save_npy
from agentrag.text.tokenize import ensure_jieba

FORMAT = "agentrag-jieba-pos/1"
_lock = threading.Lock()


class WordTags(Mapping[str, str]):
    """Word -> part of speech over the mapped files (what `POSTokenizer.word_tag_tab` holds: the tagger calls
    `get` per word, and `update` with the words a user dictionary adds, kept in memory beside the files)."""

    def __init__(self, words: TermTable, tags: npt.NDArray[np.uint8], names: list[str]) -> None:
        if len(tags) != len(words) or (len(tags) and int(tags.max()) >= len(names)):
            raise ValueError("word and tag files disagree")
        self._words, self._tags, self._names = words, tags, names
        self._added: dict[str, str] = {}

    def get(self, word: str, default: Any = None) -> Any:
        added = self._added.get(word)
        if added is not None:
            return added
        t = self._words.get(word)
        return default if t is None else self._names[self._tags[t]]

    def __getitem__(self, word: str) -> str:
        found = self.get(word)
        if found is None:
            raise KeyError(word)
        return str(found)

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._words.vocabulary()), **self._added})

    def __len__(self) -> int:
        return len(self._words) + sum(1 for word in self._added if word not in self._words)

    def update(self, more: Mapping[str, str]) -> None:
        self._added.update(more)


def word_tags(dictionary: bytes) -> dict[str, str] | None:
    """Word -> part of speech of a jieba dictionary ("word frequency tag" per line) as `POSTokenizer.load_word_tag`
    reads it (a later line of a word wins); None when the one-pass parse could read it otherwise."""
    text = dictionary.decode("utf-8")
    parts = text.split()
    lines = text.count("\n") + (not text.endswith("\n"))  # a blank line makes these disagree
    if lines * 3 != len(parts) or not all(map(str.isdigit, parts[1::3])):  # every second field a frequency
        return None
    return dict(zip(parts[0::3], parts[2::3], strict=True))


def _dictionary(jieba: Any) -> Path:
    """The dictionary file jieba's default tokenizer reads (its own, unless `jieba.set_dictionary` named another)."""
    custom = jieba.dt.dictionary
    return Path(str(jieba.__file__)).with_name(jieba.DEFAULT_DICT_NAME) if custom is None else Path(custom)


def _folder(dictionary: Path) -> Path:
    """Where the tags of this dictionary file, as it is now, are kept."""
    stat = dictionary.stat()
    identity = f"{FORMAT}|{dictionary.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    key = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"agentrag-jieba-pos-{key}"


def _write(folder: Path, tags: dict[str, str]) -> None:
    names = sorted(set(tags.values()))
    index = {name: i for i, name in enumerate(names)}
    tmp = folder.with_name(f"{folder.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        TermTable.write(tmp, list(tags))
        save_npy(tmp / "tags.npy", np.fromiter((index[t] for t in tags.values()), dtype=np.uint8, count=len(tags)))
        (tmp / "names.json").write_text(json.dumps({"format": FORMAT, "names": names}), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load(folder: Path) -> WordTags:
    meta = json.loads((folder / "names.json").read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise ValueError(f"unknown format {meta.get('format')!r}")
    return WordTags(TermTable.load(folder), map_npy(folder / "tags.npy"), list(meta["names"]))


def _tags(dictionary: Path) -> WordTags | None:
    """The dictionary's tags from their files, made first if missing or damaged; None when only jieba's own loop
    reads this dictionary right, or no file can be written."""
    folder = _folder(dictionary)
    try:
        return _load(folder)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    tags = word_tags(dictionary.read_bytes())
    if tags is None or len(set(tags.values())) > 256:
        return None
    try:
        _write(folder, tags)
        return _load(folder)
    except (OSError, ValueError):
        return None


def posseg() -> ModuleType:
    """`jieba.posseg`, imported once, its default tagger reading the tags from their mapped files."""
    loaded = sys.modules.get("jieba.posseg")
    if loaded is not None:
        return loaded
    with _lock:
        loaded = sys.modules.get("jieba.posseg")
        if loaded is not None:
            return loaded
        ensure_jieba()
        import jieba

        tags = _tags(_dictionary(jieba))
        if tags is None:
            import jieba.posseg as read_by_jieba

            return sys.modules[read_by_jieba.__name__]
        tokenizer: Any = jieba.dt
        tokenizer.get_dict_file = lambda: io.BytesIO(b"")  # the import's own read of the dictionary, skipped
        try:
            import jieba.posseg as module
        finally:
            del tokenizer.get_dict_file  # the class's method again
        module.dt.word_tag_tab = tags
        return sys.modules[module.__name__]
