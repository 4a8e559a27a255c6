"""A REST call whose body is not sent as JSON gets a 422 that says what to do (issue 20, item 9)."""
import pytest


@pytest.mark.parametrize("headers", [{"content-type": "text/plain"}, {}])
def test_a_body_without_the_json_content_type_says_so(api, headers):
    r = api.post("/api/v1/evaluate", content=b'{"source": "x = tokens;", "inputs": ["ab"]}', headers=headers)
    assert r.status_code == 422
    message = r.json()["error"]["message"]
    assert "content-type: application/json" in message, message


def test_the_same_body_as_json_runs(api):
    r = api.post("/api/v1/evaluate", content=b'{"source": "x = tokens;", "inputs": ["ab"]}',
                 headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json()["results"]["x"]["values"] == [["a", "b"]]


def test_a_wrong_field_in_json_still_names_the_field(api):
    r = api.post("/api/v1/evaluate", json={"source": 3, "inputs": ["ab"]})
    assert r.status_code == 422 and "source" in r.json()["error"]["message"]
