"""POST /api/v1/train refuses a job whose estimated memory is over the server's limit, with the reason, and
queues one under it (the estimate: tests/unit/test_train_memory.py)."""
import pytest

from support.needs import need


@pytest.mark.train
def test_a_training_job_estimated_over_the_memory_limit_is_refused(api):
    need("torch")
    r = api.post("/api/v1/train", json={"source": "x = indices + 1;", "vocab": "ab", "max_len": 128, "layers": 12,
                                        "heads": 16, "d_model": 1024, "batch_size": 4096, "steps": 10})
    assert r.status_code == 422, r.text[:300]
    e = r.json()["error"]
    assert e["kind"] == "limit" and "memory" in e["message"] and "2 GiB" in e["message"]
    r = api.post("/api/v1/train", json={"source": "x = indices + 1;", "vocab": "ab", "max_len": 4, "steps": 2,
                                        "n_train": 50, "n_test": 10})
    assert r.status_code == 202
