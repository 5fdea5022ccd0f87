"""A bounded schemathesis run over the OpenAPI document, with schemathesis's default checks.

Every generated request's answer must match the document: its status code is declared, its content type and
body match the declared schema, declared headers are present, invalid data is refused, a method the path does
not have is a 405 whose `Allow` lists the methods it does have. Bounded (few examples, a fixed seed, no
shrinking, no example database) so the run is the same every time and short on a loaded machine.
use_after_free and ensure_resource_availability are among the defaults but need the document's links between
operations, which it has none of, so they find nothing to check.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.config import SchemathesisConfig  # noqa: E402

from agentrag.kb import KnowledgeBase  # noqa: E402
from agentrag.server.app import create_app  # noqa: E402
from agentrag.server.keys import KeyStore  # noqa: E402
from agentrag.settings import load_settings  # noqa: E402

KB = "kb"  # the knowledge base the key may use; it exists, so routes under it reach their real work

# Routes whose path names a document, chunk, trace or memory fact: a generated id names nothing, and 404 is
# the right answer (the document declares it). Positive-data acceptance would call that a rejected valid
# request, so it is off here and only here; every other check still runs on these routes.
RANDOM_RESOURCE_PATHS = r"\{(doc_id|chunk_id|trace_id|fact_id)\}"
# schemathesis's default for positive data, less 3xx (the service never redirects) and 5xx (always a failure)
ACCEPTED = ["2xx", "401", "403", "404", "409", "429"]


def _config() -> SchemathesisConfig:
    return SchemathesisConfig.from_dict(
        {
            "seed": 20240610,
            "parameters": {"path.kb": KB},
            "generation": {"max-examples": 6, "deterministic": True, "no-shrink": True, "database": "none"},
            "operations": [
                {
                    "include-path-regex": RANDOM_RESOURCE_PATHS,
                    "checks": {"positive_data_acceptance": {"enabled": False}},
                },
                {
                    # The document can say "a file" and "a string", not which bytes are a PDF, DOCX, HTML or
                    # text file (the service reads the type from the content: 415 for the rest, an empty file
                    # too) nor that `tags` is JSON text of an object (422 for "null" or "0").
                    "include-path": "/v1/kb/{kb}/documents",
                    "include-method": "POST",
                    "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "415", "422"]}},
                },
                {
                    # OpenAI's filter schema admits operators and keys that hybrid search cannot express (`ne`,
                    # `nin`, a range on a tag, `or` across keys): valid by the document, a 422 naming them here.
                    "include-path": "/v1/vector_stores/{kb}/search",
                    "include-method": "POST",
                    "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "422"]}},
                },
            ],
        }
    )


# Loaded when the module is imported: `schema.parametrize()` needs the document at collection (its lazy
# `from_fixture` relies on a pytest internal that pytest 9 removed).
_HOME = Path(tempfile.mkdtemp(prefix="agentrag-fuzz-"))
_SETTINGS = load_settings(_HOME / "home", server={"requests_per_minute": 100_000})
_APP = create_app(_SETTINGS)
schema = schemathesis.openapi.from_asgi("/openapi.json", _APP, config=_config())


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    _APP.state.service.close()
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture
def secret() -> str:
    """A key for KB, which exists: made again for each operation, since DELETE /v1/kb/{kb} removes both. Made
    outside the app's service, which schemathesis starts (the app's lifespan) only with the first request."""
    KnowledgeBase.open(KB, settings=_SETTINGS, create=True).close()
    with KeyStore(_SETTINGS.home) as keys:
        _, key = keys.create([KB])
    return key


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
def test_every_answer_matches_the_openapi_document(case, secret: str) -> None:  # type: ignore[no-untyped-def]
    case.call_and_validate(headers={"Authorization": f"Bearer {secret}"})
