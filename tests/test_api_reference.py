"""GET /api/v1/language/reference over HTTP (issue 32 item 4): the engine's reference table as the page reads
it, with its schema in the OpenAPI document."""
from __future__ import annotations

from rasplay.engine.reference import reference


def test_the_reference_route_serves_the_engines_table(api):
    response = api.get("/api/v1/language/reference")
    assert response.status_code == 200
    assert response.json() == {"entries": reference()}


def test_the_reference_route_is_in_the_openapi_schema(api):
    schema = api.get("/openapi.json").json()
    get = schema["paths"]["/api/v1/language/reference"]["get"]
    assert get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/LanguageReference")
    entry = schema["components"]["schemas"]["ReferenceEntry"]
    assert set(entry["required"]) == {"name", "kind", "signature", "meaning", "example", "input"}
