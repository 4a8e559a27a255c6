"""Training for length over HTTP: train and test length ranges, the positional scheme, per-bin accuracy in
every progress event and in the result (the command line: tests/cli/test_train_lengths_cli.py)."""
import pytest
from support.needs import need
from support.train_jobs import read_events

need("torch")
pytestmark = pytest.mark.train

PER_POSITION = 'y = tokens == "a";\n'


@pytest.fixture(scope="module")
def train_server(tmp_path_factory):
    from support.live_server import LiveServer

    server = LiveServer(tmp_path_factory.mktemp("train_lengths"), "--workers", "1", "--train-jobs", "1",
                        "--train-queue", "1", "--train-seconds", "300")
    yield server
    server.stop()


def test_per_bin_accuracy_over_the_api(train_server):
    with train_server.client() as c:
        r = c.post("/api/v1/train", json={"source": PER_POSITION, "vocab": "ab", "max_len": 5, "test_min_len": 6,
                                          "test_max_len": 15, "positional": "none", "causal": True, "steps": 120,
                                          "eval_every": 60, "n_train": 300, "n_test": 40, "d_model": 16})
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        events, done = read_events(f"{train_server.url}/api/v1/train/{job_id}/events", timeout=300)
        assert done["status"] == "done", done
        evals = [e for e in events if e.get("point") == "eval"]
        assert evals and all([(b["lo"], b["hi"]) for b in e["bins"]] == [(1, 5), (6, 10), (11, 15)] for e in evals)
        result = c.get(f"/api/v1/train/{job_id}").json()["result"]
        bins = result["lengths"]["bins"]
        assert [b["held_out"] for b in bins] == [False, True, True]
        assert all(b["seq_acc"] == 1.0 and b["count"] > 0 for b in bins)
        assert result["lengths"]["compiled"]["length_free"]["available"] is True
        assert result["model"]["positional"] == "none" and result["model"]["causal"] is True


@pytest.mark.parametrize("change, message", [
    ({"test_min_len": 4, "test_max_len": 9}, "must be above max_len (5)"),
    ({"test_min_len": 8}, "give both test_min_len and test_max_len"),
    ({"positional": "rotary"}, "positional"),
    ({"test_min_len": 6, "test_max_len": 600}, "test_max_len"),
    ({"blocks": 0}, "blocks"),
    ({"blocks": 513}, "blocks"),
])
def test_bad_length_requests_are_clear_4xx(train_server, change, message):
    with train_server.client() as c:
        r = c.post("/api/v1/train", json={"source": PER_POSITION, "vocab": "ab", "max_len": 5, "steps": 5, **change})
        assert r.status_code == 422 and message in r.text, r.text


def test_the_servers_train_device_is_the_default_of_a_request_without_one(tmp_path):
    """--train-device cuda on a machine without a GPU: a request naming no device trains on cuda, so the job fails
    with the trainer's reason; one naming cpu trains. (With a GPU the first job trains there.)"""
    import torch
    from support.live_server import LiveServer

    server = LiveServer(tmp_path, "--workers", "1", "--train-jobs", "1", "--train-queue", "2", "--train-device", "cuda")
    try:
        with server.client() as c:
            body = {"source": PER_POSITION, "vocab": "ab", "max_len": 4, "steps": 5, "n_train": 50, "n_test": 10,
                    "d_model": 8}
            first = c.post("/api/v1/train", json=body)
            assert first.status_code == 202, first.text
            _, done = read_events(f"{server.url}/api/v1/train/{first.json()['id']}/events", timeout=300)
            if torch.cuda.is_available():
                assert done["status"] == "done", done
            else:
                assert done["status"] == "failed" and "device cuda was asked for" in done["error"], done
            second = c.post("/api/v1/train", json={**body, "device": "cpu"})
            assert second.status_code == 202, second.text
            _, done = read_events(f"{server.url}/api/v1/train/{second.json()['id']}/events", timeout=300)
            assert done["status"] == "done", done
    finally:
        server.stop()
