"""POST /api/v1/exercises/{id}/check with proven verdicts (engine/verify): proved at every length, different
on an input past the exercise's lengths (replayed), and sampled outside the fragments, through a live server
whose checks run in its worker processes (time and memory limits, per-client rate)."""
from __future__ import annotations

import pytest

from live_server import LiveServer

LEADER = ("prefix = select(indices, indices, <=);\na_share = aggregate(prefix, indicator(tokens == \"a\"));\n"
          "b_share = aggregate(prefix, indicator(tokens == \"b\"));\n")
REVERSE_RIGHT = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    server = LiveServer(tmp_path_factory.mktemp("data"), "--workers", "1")
    with server.client() as c:
        yield c
    server.stop()


def post(client, exercise: str, source: str) -> dict:
    r = client.post(f"/api/v1/exercises/{exercise}/check", json={"source": source})
    assert r.status_code == 200, r.text
    return r.json()


def test_check_gives_the_outcomes_of_a_proof(client):
    same = LEADER + 'leader = "a" if a_share - b_share > 0 else ("b" if b_share > a_share else "=");'
    body = post(client, "majority_so_far", same)
    assert body["passed"] and body["verdict"]["outcome"] == "proved" and body["verdict"]["scope"] == "every_length"
    assert body["verdict"]["fragment"] == "causal C-RASP" and body["message"].startswith("proved right at every length")

    longer = LEADER + 'leader = "a" if a_share > b_share + 0.0625 else ("b" if b_share > a_share else "=");'
    body = post(client, "majority_so_far", longer)
    assert body["status"] == "wrong" and body["verdict"]["outcome"] == "different" and body["verdict"]["length"] == 17
    c = body["counterexample"]
    assert len(c["input"]) == 17 and body["inputs_right"] == body["inputs_checked"] and c["expected"] != c["got"]

    body = post(client, "majority_so_far", "leader = aggregate(select(indices, 0, ==), tokens);")
    assert body["status"] == "wrong" and body["verdict"]["method"] == "sampled"

    body = post(client, "reverse", REVERSE_RIGHT)
    assert body["passed"] and body["verdict"]["outcome"] == "sampled"
    assert "outside the fragments" in body["verdict"]["reason"]
