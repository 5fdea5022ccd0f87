"""OpenAI's vector-store search mapped onto hybrid search: its attribute filters as a `SearchFilter`, and each
hit as a search result (`file_id`, `filename`, `score`, `attributes`, `content`).

A filter names an attribute: `source` (a glob on the source path) and `filename` (the file's name) with `eq`
or `in`, `file_id` (a document id) with `eq` or `in`, `date` (YYYY-MM-DD or Unix seconds) with `eq`, `gt`,
`gte`, `lt` or `lte`, and any other key a tag with `eq`. `and` combines anything that does not constrain one
of those lists twice; `or` only values of one list key (`source`, `filename` or `file_id`), which is what a
`SearchFilter` can say. Everything else is a `FilterUnsupported`, which names the filter at fault.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePath

from agentrag.errors import ConfigError
from agentrag.server.schemas import ComparisonFilter, CompoundFilter, TextContent, VectorStoreSearchResult
from agentrag.text.dates import parse_date
from agentrag.types import Hit, SearchFilter

# The attributes a filter can use that are not tags; a document's tags go beside them in `attributes`.
LIST_KEYS = ("source", "filename", "file_id")
DATE_KEY = "date"
# Attributes a result shows but a filter cannot use (they are not tags either).
SHOWN_ONLY = ("chunk_id", "title", "heading", "page")
RESERVED = frozenset((*LIST_KEYS, DATE_KEY, *SHOWN_ONLY))


class FilterUnsupported(ConfigError):
    """A filter the knowledge base's search cannot express (the service answers 422 with this message)."""


@dataclass(frozen=True)
class _Partial:
    """What a (part of a) filter allows: lists are alternatives (OR), everything else must hold (AND)."""

    lists: dict[str, list[str]] = field(default_factory=dict)  # LIST_KEYS -> allowed values
    tags: dict[str, str] = field(default_factory=dict)
    date_from: dt.date | None = None
    date_to: dt.date | None = None


def to_search_filter(flt: ComparisonFilter | CompoundFilter | None) -> SearchFilter | None:
    if flt is None:
        return None
    partial = _translate(flt, "filters")
    sources = list(partial.lists.get("source", []))
    sources += [glob for name in partial.lists.get("filename", []) for glob in _filename_globs(name)]
    if "source" in partial.lists and "filename" in partial.lists:
        raise FilterUnsupported("filters: 'source' and 'filename' together are not supported (use one of them)")
    return SearchFilter(
        sources=sources,
        doc_ids=partial.lists.get("file_id", []),
        tags=partial.tags,
        date_from=partial.date_from,
        date_to=partial.date_to,
    )


def _translate(flt: ComparisonFilter | CompoundFilter, where: str) -> _Partial:
    if isinstance(flt, ComparisonFilter):
        return _comparison(flt, where)
    parts = [_translate(f, f"{where}.filters[{i}]") for i, f in enumerate(flt.filters)]
    return _all_of(parts, where) if flt.type == "and" else _any_of(parts, where)


def _comparison(flt: ComparisonFilter, where: str) -> _Partial:
    key, op, value = flt.key, flt.type, flt.value
    if key in LIST_KEYS and op in ("eq", "in"):
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) for v in values):
            raise FilterUnsupported(f"{where}: {key!r} takes a string (eq) or a list of strings (in)")
        return _Partial(lists={key: [str(v) for v in values]})
    if key == DATE_KEY and op in ("eq", "gt", "gte", "lt", "lte"):
        day = _date(value, where)
        after = day + dt.timedelta(days=1) if op == "gt" else day if op in ("gte", "eq") else None
        before = day - dt.timedelta(days=1) if op == "lt" else day if op in ("lte", "eq") else None
        return _Partial(date_from=after, date_to=before)
    if key not in RESERVED and op == "eq" and isinstance(value, str | int | float) and not isinstance(value, bool):
        return _Partial(tags={key: _tag_text(value)})
    if key in SHOWN_ONLY:
        raise FilterUnsupported(f"{where}: {key!r} cannot be filtered on; {_SUPPORTED}")
    raise FilterUnsupported(f"{where}: {op!r} on {key!r} is not supported; {_SUPPORTED}")


_SUPPORTED = (
    "supported: source, filename, file_id (eq, in), date (eq, gt, gte, lt, lte) and a tag (eq with a string or number)"
)


def _tag_text(value: str | float) -> str:
    """Tags are text: the number 3 matches the tag "3" (not "3.0")."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _date(value: object, where: str) -> dt.date:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return dt.datetime.fromtimestamp(value, dt.UTC).date()
        except (OverflowError, OSError, ValueError) as exc:
            raise FilterUnsupported(f"{where}: 'date' {value!r} is not a Unix time") from exc
    if isinstance(value, str):
        try:
            return parse_date(value)
        except ValueError as exc:
            raise FilterUnsupported(f"{where}: 'date' {value!r} is not a date (YYYY-MM-DD)") from exc
    raise FilterUnsupported(f"{where}: 'date' takes one date (YYYY-MM-DD) or Unix time, not {value!r}")


def _all_of(parts: list[_Partial], where: str) -> _Partial:
    merged = _Partial()
    for part in parts:
        twice = sorted(set(merged.lists) & set(part.lists))
        if twice:
            raise FilterUnsupported(f"{where}: 'and' of two conditions on {twice[0]!r} is not supported")
        clash = next((k for k, v in part.tags.items() if merged.tags.get(k, v) != v), None)
        if clash is not None:
            raise FilterUnsupported(f"{where}: 'and' of two values of the tag {clash!r} can match nothing")
        merged = replace(
            merged,
            lists={**merged.lists, **part.lists},
            tags={**merged.tags, **part.tags},
            date_from=max((d for d in (merged.date_from, part.date_from) if d), default=None),
            date_to=min((d for d in (merged.date_to, part.date_to) if d), default=None),
        )
    return merged


def _any_of(parts: list[_Partial], where: str) -> _Partial:
    keys = {key for part in parts for key in part.lists}
    lone = all(len(part.lists) == 1 and not part.tags and not (part.date_from or part.date_to) for part in parts)
    if len(keys) != 1 or not lone:
        raise FilterUnsupported(f"{where}: 'or' is supported only between values of one of source, filename or file_id")
    (key,) = keys
    return _Partial(lists={key: list(dict.fromkeys(v for part in parts for v in part.lists[key]))})


def _filename_globs(name: str) -> list[str]:
    """The file `name` at the top of the source path or in any folder (glob characters in it taken literally)."""
    literal = re.sub(r"([*?\[])", r"[\1]", name)
    return [literal, f"*/{literal}"]


def result(hit: Hit, score: float) -> VectorStoreSearchResult:
    chunk = hit.chunk
    attributes: dict[str, str | bool | int | float] = {
        key: value for key, value in chunk.tags.items() if key not in RESERVED
    }  # tags first: a tag named like an attribute below is shadowed by it
    attributes.update(source=chunk.source, chunk_id=chunk.chunk_id, title=chunk.title)
    if chunk.heading:
        attributes["heading"] = chunk.heading
    if chunk.page is not None:
        attributes["page"] = chunk.page
    if chunk.date is not None:
        attributes[DATE_KEY] = chunk.date.isoformat()
    return VectorStoreSearchResult(
        file_id=chunk.doc_id,
        filename=PurePath(chunk.source).name or chunk.source,
        score=round(score, 6),
        attributes=attributes,
        content=[TextContent(text=chunk.text)],
    )
