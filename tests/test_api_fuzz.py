"""Schemathesis fuzzes the API from its own OpenAPI schema, over real HTTP: never a 5xx, and every
response matches the documented status codes, content types and schemas."""
import pytest
import schemathesis
from schemathesis import checks

schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(scope="module")
def api_schema(live_server):
    config = schemathesis.config.SchemathesisConfig.from_dict(
        {"generation": {"mode": "all", "max-examples": 60}})  # valid and deliberately invalid requests
    return schemathesis.openapi.from_url(live_server.url + "/openapi.json", config=config)


@schema.parametrize()
def test_api_never_fails_on_generated_requests(case, live_server):
    case.call_and_validate(base_url=live_server.url, checks=[
        checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
        checks.response_schema_conformance,
    ])
