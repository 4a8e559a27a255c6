"""Training jobs over HTTP: start, progress events (SSE), result, cancel, a full queue (429)."""
import httpx
import pytest
from support.needs import need
from support.train_jobs import read_events, wait_status, wait_until

need("torch")
pytestmark = pytest.mark.train

HIST = "same = select(tokens, tokens, ==);\nhist = selector_width(same);\n"


@pytest.fixture(scope="module")
def train_server(tmp_path_factory):
    from support.live_server import LiveServer

    server = LiveServer(tmp_path_factory.mktemp("train"), "--workers", "2", "--train-jobs", "1",
                        "--train-queue", "1", "--train-seconds", "60")
    yield server
    server.stop()


def from_address(server, address):
    return httpx.Client(base_url=server.url, timeout=30, transport=httpx.HTTPTransport(local_address=address))


def test_job_lifecycle_events_result_cancel_and_full_queue(train_server):
    with train_server.client() as c:
        long = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "max_len": 6, "steps": 1_000_000,
                                             "d_model": 16})
        assert long.status_code == 202, long.text
        long_id = long.json()["id"]
        wait_status(c, long_id, {"running"})
        wait_until(c, long_id, lambda job: job["events"] >= 1)    # it has reported progress
        # two places (one running, one waiting): one address may hold only one of them
        mine = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "steps": 10})
        e = mine.json()["error"]
        assert mine.status_code == 429 and e["kind"] == "busy" and "per client" in e["message"], mine.text
        with from_address(train_server, "127.0.0.2") as other:   # another address gets the place left
            short = other.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "max_len": 6, "steps": 300,
                                                      "d_model": 32, "lr": 0.003})
        assert short.status_code == 202 and short.json()["status"] == "queued"
        with from_address(train_server, "127.0.0.3") as third:
            full = third.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "steps": 10})
        assert full.status_code == 429 and full.json()["error"]["kind"] == "busy"
        assert "already waiting" in full.json()["error"]["message"]

        cancelled = c.delete(f"/api/v1/train/{long_id}")
        assert cancelled.status_code == 200
        job = wait_status(c, long_id, {"cancelled"})
        # the cancelled job's stream ends with "cancelled" after the progress it made, and it makes no more
        progress, end = read_events(f"{train_server.url}/api/v1/train/{long_id}/events")
        assert end["status"] == "cancelled" and end["events"] == len(progress) == job["events"] >= 1
        assert c.get(f"/api/v1/train/{long_id}").json()["events"] == job["events"]

        short_id = short.json()["id"]
        events, done = read_events(f"{train_server.url}/api/v1/train/{short_id}/events")
        assert done["status"] == "done"
        steps = [e["step"] for e in events if e["point"] == "eval"]
        assert steps == sorted(steps) and steps[-1] == 300
        phases = [e for e in events if e["point"] == "phase"]
        assert [p["phase"] for p in phases] == ["program", "data", "model"] and all(p["message"] for p in phases)
        assert all({"loss", "train_acc", "test_acc", "test_seq_acc", "elapsed"} <= set(e) for e in events
                   if e["point"] != "phase")
        job = c.get(f"/api/v1/train/{short_id}").json()
        result = job["result"]
        assert job["status"] == "done" and result["final"]["test_acc"] > 0.6
        assert result["program"]["layers"] == 1 and result["model"]["n_layers"] == 1
        (match,) = result["matches"]
        assert match["name"] == "same" and 0 <= match["score"] <= 1
        # resuming the stream after the last event gives just the end
        again, done = read_events(f"{train_server.url}/api/v1/train/{short_id}/events?from={len(events)}")
        assert again == [] and done["status"] == "done"


def test_bad_training_requests(train_server):
    with train_server.client() as c:
        r = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "output": "nope"})
        assert r.status_code == 422 and "no s-op named 'nope'" in r.json()["error"]["message"]
        r = c.post("/api/v1/train", json={"source": "x = ;", "vocab": "abc"})
        assert r.status_code == 422
        r = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "min_len": 9, "max_len": 3})
        assert r.status_code == 422 and "min_len" in r.json()["error"]["message"]
        r = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "layers": 99})
        assert r.status_code == 422
        for vocab in ("", "aa", [1, "a"]):   # checked before a job is queued
            r = c.post("/api/v1/train", json={"source": HIST, "vocab": vocab})
            assert r.status_code == 422, vocab
        assert c.get("/api/v1/train/AAAAAAAAAAAAAAAAAAAAAA").status_code == 404   # the form of an id, no such job
        assert c.get("/api/v1/train/not-a-job").status_code == 422
        assert c.get("/api/v1/train/0123456789ab").status_code == 422   # the old 12-character form
        assert c.get("/api/v1/train/AAAAAAAAAAAAAAAAAAAAAA/events").status_code == 404


def test_fine_tune_from_a_compiled_model_stays_exact(train_server):
    source = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nreverse = aggregate(flip, tokens);\n"
    with train_server.client() as c:
        model_id = c.post("/api/v1/compile", json={"source": source, "vocab": "abc", "max_len": 6}).json()["id"]
        job = c.post("/api/v1/train", json={"source": source, "vocab": "abc", "max_len": 6, "steps": 60,
                                            "init_model": model_id})
        assert job.status_code == 202, job.text
        assert job.json()["spec"]["config"]["lr"] == 1e-5
        done = wait_status(c, job.json()["id"], {"done", "failed"})
        assert done["status"] == "done", done["error"]
        result = done["result"]
        assert result["model"]["layer_norm"] is False and result["model"]["n_layers"] == 2
        assert result["curve"][0]["test_seq_acc"] == 1.0 and result["final"]["test_seq_acc"] == 1.0
        bad = c.post("/api/v1/train", json={"source": source, "vocab": "abc", "init_model": "mzzzzzzzzzzzzzzz"})
        assert bad.status_code == 422 and "compile first" in bad.json()["error"]["message"]
