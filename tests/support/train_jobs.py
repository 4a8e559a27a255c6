"""Following a training job over HTTP (tests/api/test_api_train.py, test_train_lengths_api.py): its status
until a condition holds, and its progress events (SSE) to the end."""
from __future__ import annotations

import json
import time

import httpx


def wait_until(client, job_id, predicate, timeout=60):
    """The job's document (GET /api/v1/train/{id}) once `predicate` holds of it, polled until `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/api/v1/train/{job_id}").json()
        if predicate(job):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id}: {job}")


def wait_status(client, job_id, statuses, timeout=60):
    """The job's document once its status is one of `statuses`."""
    return wait_until(client, job_id, lambda job: job["status"] in statuses, timeout)


def read_events(url, timeout=60):
    """A job's event stream read to its end: (the progress events' data, the last other event's data). The
    stream is text/event-stream and never compressed (nor held back), even to a client that accepts it."""
    events, done = [], None
    with httpx.stream("GET", url, timeout=timeout, headers={"accept-encoding": "br, gzip"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in r.headers
        kind = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                if kind == "progress":
                    events.append(data)
                else:
                    done = data
    return events, done
