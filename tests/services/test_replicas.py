"""Stateless replicas (issue 23, item 3): two real `rasplay serve` processes sharing one real PostgreSQL
and one real Redis answer the same, whichever receives a request, and a client's allowances are shared:
spreading requests over both does not double them. The client here is forwarded by a trusted proxy, as
behind the load balancer of docs/deploy.md."""
from __future__ import annotations

import uuid

from support.postgres_server import postgres_server, postgres_url  # noqa: F401 - fixtures
from support.redis_server import redis_server  # noqa: F401 - fixture
from support.replica_servers import stored_ids, two_replicas

REVERSE = ("opp_index = length - indices - 1;\nflip = select(indices, opp_index, ==);\n"
           "reverse = aggregate(flip, tokens);")


def test_two_replicas_answer_the_same_and_share_allowances(tmp_path, postgres_url, redis_server):  # noqa: F811
    flags = ("--redis", redis_server.url, "--trusted-proxy", "127.0.0.1", "--writes-per-minute", "4",
             "--checks-per-minute", "3")
    with two_replicas(tmp_path, postgres_url, *flags) as (a, b), a.client() as ca, b.client() as cb:
        student = {"X-Forwarded-For": f"203.0.113.{uuid.uuid4().int % 250}"}
        # a link made on one replica opens on the other
        r = ca.post("/api/v1/share", json={"state": {"source": REVERSE, "inputs": ["abc"]}}, headers=student)
        assert r.status_code == 200, r.text
        link = r.json()["id"]
        r = cb.get(f"/s/{link}", follow_redirects=False)
        assert r.status_code == 302 and r.headers["location"].startswith("/#v1=")
        # a model compiled on one replica is run, studied and downloaded on the other
        r = ca.post("/api/v1/compile", json={"source": REVERSE, "vocab": "abc", "max_len": 4}, headers=student)
        assert r.status_code == 200, r.text
        model = r.json()["id"]
        assert stored_ids(postgres_url, "models", [model]) == {model} and stored_ids(postgres_url, "links", [link])
        r = cb.post(f"/api/v1/models/{model}/run", json={"inputs": ["abca"]})
        assert r.status_code == 200, r.text
        assert r.json()["outputs"] == [["a", "c", "b", "a"]]
        r = cb.get(f"/api/v1/models/{model}/weights.npz")
        assert r.status_code == 200 and r.content[:2] == b"PK"
        # the student's writes: 4 a minute across both replicas (2 used above), not 4 on each
        statuses = [c.post("/api/v1/share", json={"state": {"source": f"# {uuid.uuid4().hex}\nx = indices;"}},
                           headers=student).status_code for c in (cb, ca, cb, ca)]
        assert statuses == [200, 200, 429, 429]
        # another student (another forwarded address) has an allowance of its own
        other = {"X-Forwarded-For": "198.51.100.23"}
        assert cb.post("/api/v1/share", json={"state": {"source": f"# {uuid.uuid4().hex}"}},
                       headers=other).status_code == 200
        # exercise checks: 3 a minute across both replicas
        checks = [c.post("/api/v1/exercises/reverse/check", json={"source": REVERSE}, headers=student)
                  for c in (ca, cb, ca, cb)]
        assert [r.status_code for r in checks] == [200, 200, 200, 429], [r.text for r in checks]
        assert checks[-1].json()["error"]["kind"] == "rate_limit" and checks[-1].headers["retry-after"].isdigit()
