"""Schemathesis fuzzes the API from its own OpenAPI schema, over real HTTP: never a 5xx (but the
documented 501 of POST /train on a server without PyTorch), and every response matches the documented
status codes, content types and schemas."""
import importlib.util

import pytest
import schemathesis
from schemathesis import checks

TORCH = importlib.util.find_spec("torch") is not None
QUEUE_SECONDS = 60.0

schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    """A server of its own: the training jobs that generated requests start end within seconds and
    cannot delay later tests."""
    from support.live_server import LiveServer

    # A request waits up to QUEUE_SECONDS for a free worker (the default, 10 s, is also the client's
    # timeout: on a busy machine, with workers killed and restarted by the fuzzing, a wait that long
    # is slowness, not a server error).
    server = LiveServer(tmp_path_factory.mktemp("fuzz"), settings=(
        "workers=3, eval_seconds=3.0, max_input_length=64, max_inputs=8, max_body_bytes=200_000, "
        f"train_seconds=3.0, train_queue=2, queue_seconds={QUEUE_SECONDS}"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api_schema(fuzz_server):
    config = schemathesis.config.SchemathesisConfig.from_dict(
        {"generation": {"mode": "all", "max-examples": 60}})  # valid and deliberately invalid requests
    return schemathesis.openapi.from_url(fuzz_server.url + "/openapi.json", config=config)


def training_unavailable(case, response) -> bool:
    """The documented answer of POST /train when the server has no PyTorch (the `train` extra)."""
    if TORCH or response.status_code != 501 or case.method.upper() != "POST" or case.path != "/api/v1/train":
        return False
    return response.json()["error"]["kind"] == "unavailable"


def not_a_server_error(ctx, response, case):
    if training_unavailable(case, response):
        return None
    return checks.not_a_server_error(ctx, response, case)


@schema.parametrize()
def test_api_never_fails_on_generated_requests(case, fuzz_server):
    case.call_and_validate(base_url=fuzz_server.url, timeout=QUEUE_SECONDS + 30, checks=[
        not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
        checks.response_schema_conformance,
    ])
