"""GET /api/v1/language over HTTP: the engine's vocabulary as the page's editor and views read it, with
its schema in the OpenAPI document; the evaluation document's `title` and node `role` are in the schema too."""
from __future__ import annotations

from rasplay.engine.vocabulary import vocabulary


def test_language_route_serves_the_engines_vocabulary(api):
    response = api.get("/api/v1/language")
    assert response.status_code == 200
    assert response.json() == vocabulary()


def test_language_route_and_new_fields_are_in_the_openapi_schema(api):
    schema = api.get("/openapi.json").json()
    get = schema["paths"]["/api/v1/language"]["get"]
    assert get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/Language")
    language = schema["components"]["schemas"]["Language"]
    assert set(language["required"]) == {"keywords", "builtins", "inputs", "atoms", "library", "kinds"}
    assert "title" in schema["components"]["schemas"]["EvaluationDocument"]["properties"]
    assert "role" in schema["components"]["schemas"]["GraphNode"]["required"]


def test_evaluation_over_http_carries_title_and_roles(api):
    doc = api.post("/api/v1/evaluate", json={"source": "# title: Flip\nf = select(indices, indices, ==);\n"
                                                       "r = aggregate(f, tokens);", "inputs": ["ab"]}).json()
    assert doc["title"] == "Flip"
    assert {n["kind"]: n["role"] for n in doc["analysis"]["graph"]["nodes"]} == {
        "tokens": "input", "indices": "input", "select": "selector", "aggregate": "attention"}
