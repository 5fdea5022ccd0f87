"""Secrets never reach the access log: an API key put in a URL is refused, and scrubbed from the log line.

The server's access log (uvicorn's `uvicorn.access` logger) writes each request's path with its query
string. A key sent as `?key=ar_...` gets 401 (keys travel only in the Authorization header), but the line
would still keep it; this filter rewrites the line's arguments before any handler formats them.
"""

from __future__ import annotations

import logging
import re

from agentrag.server.keys import KEY_PREFIX

ACCESS_LOGGER = "uvicorn.access"
# Query parameters that commonly carry credentials, whatever their value looks like.
SECRET_PARAMS = ("key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "authorization", "bearer")
REDACTED = "***"

_PARAM = re.compile(r"(?i)([?&](?:" + "|".join(re.escape(p) for p in SECRET_PARAMS) + r")=)[^&#\s\"]*")
_KEY = re.compile(re.escape(KEY_PREFIX) + r"[A-Za-z0-9_\-%]+")


def scrub(text: str) -> str:
    """`text` with secret-bearing query values and anything shaped like an agentrag key replaced by ***."""
    return _KEY.sub(KEY_PREFIX + REDACTED, _PARAM.sub(r"\g<1>" + REDACTED, text))


def has_secret_param(query: str) -> bool:
    return bool(_PARAM.search("?" + query)) or bool(_KEY.search(query))


class ScrubSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(scrub(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = scrub(record.msg)
        return True


_FILTER = ScrubSecrets()


def install() -> None:
    """Scrub the access log (idempotent: one filter object, added once; survives uvicorn's logging config)."""
    logging.getLogger(ACCESS_LOGGER).addFilter(_FILTER)
