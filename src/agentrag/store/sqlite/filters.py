"""`SearchFilter` as SQL: the chunks a filter allows, for both the BM25 and the dense channel."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import numpy.typing as npt

from agentrag.types import SearchFilter

# A filter that leaves fewer chunks than this is searched exactly over the survivors.
SELECTIVE = 5000


def filter_sql(flt: SearchFilter) -> tuple[str, list[Any]]:
    """A `SELECT key FROM chunks ...` statement for the chunks a filter allows."""
    where: list[str] = []
    args: list[Any] = []
    if flt.doc_ids:
        where.append(f"c.doc_id IN ({','.join('?' * len(flt.doc_ids))})")
        args.extend(flt.doc_ids)
    if flt.sources:
        where.append("(" + " OR ".join("d.source GLOB ?" for _ in flt.sources) + ")")
        args.extend(flt.sources)
    for key, value in flt.tags.items():
        where.append("EXISTS (SELECT 1 FROM doc_tags t WHERE t.doc_id=c.doc_id AND t.key=? AND t.value=?)")
        args.extend([key, value])
    if flt.date_from:
        where.append("d.date >= ?")
        args.append(flt.date_from.isoformat())
    if flt.date_to:
        where.append("d.date <= ?")
        args.append(flt.date_to.isoformat())
    sql = "SELECT c.key FROM chunks c JOIN documents d ON d.doc_id=c.doc_id"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql, args


def allowed_keys(con: sqlite3.Connection, flt: SearchFilter | None) -> npt.NDArray[np.int64] | None:
    """The keys a filter allows, or None when there is no filter (everything is allowed)."""
    if flt is None or flt.is_empty():
        return None
    sql, args = filter_sql(flt)
    return np.asarray([r[0] for r in con.execute(sql, args)], dtype=np.int64)
