"""Fuzz ``nous serve`` from its own OpenAPI schema (schemathesis) on both backends, with a valid token.

Every generated request, valid or not, must get an answer the schema documents (status, content type, body
shape) and never a 500. Positive cases get the token's own client in their identity envelope, so they reach
the handlers instead of stopping at the 403 of a foreign client. The example budget is small (CI runs it on
every push); a longer local run: ``NOUS_FUZZ_EXAMPLES=500 pytest tests/service/test_schemathesis.py``.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES = int(os.environ.get("NOUS_FUZZ_EXAMPLES", "12"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          negative_data_rejection, ignored_auth]  # fmt: skip


def _fuzz(served, token: str, operation, mode: GenerationMode) -> None:
    not_built = "archive" if served.kind == "postgres" and operation.path == "/v1/ops/archive" else None

    @given(case=operation.as_strategy(mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
              database=None)  # fmt: skip
    def run(case) -> None:
        body = case.body
        if mode.is_positive and isinstance(body, dict) and isinstance(body.get("identity"), dict):
            body["identity"]["client_id"] = "fuzz"
            body["identity"].pop("tenant_id", None)
        checks = CHECKS if not_built is None else [c for c in CHECKS if c is not not_a_server_error]
        response = case.call_and_validate(base_url=served.url, headers={"Authorization": f"Bearer {token}"},
                                          checks=checks)  # fmt: skip
        if not_built is not None:  # the one documented 5xx: 501 where the backend lacks the feature
            assert response.status_code < 500 or response.status_code == 501, response.text

    run()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_no_request_makes_the_server_fail(serve, kind):
    served = serve(kind, token_cache_seconds=60)
    token = served.token("fuzz", ops=True)
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 10  # every route of the API is fuzzed
    for operation in operations:
        bodyless = operation.path in ("/health", "/v1/whoami")  # nothing a negative case could break
        for mode in (GenerationMode.POSITIVE,) if bodyless else (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz(served, token, operation, mode)
