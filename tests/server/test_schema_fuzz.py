"""A bounded schemathesis run over the OpenAPI document: no generated request gets a 5xx.

Response-schema conformance (every status code declared, string `detail` on our own 422s) is not asserted
yet: the document does not declare them all (see the report of issue 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

from agentrag.server.app import create_app  # noqa: E402
from agentrag.server.keys import KeyStore  # noqa: E402
from agentrag.settings import load_settings  # noqa: E402


def _app_and_key(home: Path):  # type: ignore[no-untyped-def]
    app_settings = load_settings(home, server={"requests_per_minute": 100_000})
    with KeyStore(app_settings.home) as keys:
        _, secret = keys.create(["kb"])
    return create_app(app_settings), secret


def test_the_openapi_document_holds_under_generated_requests(tmp_path: Path) -> None:
    app, secret = _app_and_key(tmp_path / "home")
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    schema.config.headers = {"Authorization": f"Bearer {secret}"}
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def run(case) -> None:  # type: ignore[no-untyped-def]
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {secret}"}
            case.call_and_validate(checks=[schemathesis.checks.not_a_server_error])

        given = operation.as_strategy()
        try:
            from hypothesis import given as hyp_given

            hyp_given(given)(run)()
        except BaseException as exc:  # collect every operation's failures, then report them together
            failures.append(f"{operation.label}: {exc}")
    assert operations >= 12, "every route is in the document"
    assert not failures, "\n\n".join(failures)
