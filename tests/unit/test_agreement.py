"""Which settings of a worker disagree with a replica's (server/course/agreement.py), and each said once."""
from __future__ import annotations

import logging

from rasplay.server.course.agreement import Agreement, disagreements, heartbeat_settings
from rasplay.server.settings import Settings


def test_a_worker_with_other_time_limits_is_named_with_each_setting_and_both_values():
    mine = {"train_seconds": 120.0, "compile_seconds": 30.0}
    found = disagreements(mine, {"heavy@m:1": {"train_seconds": 120.0, "compile_seconds": 7.0},
                                 "train@m:2": {"train_seconds": 60.0, "compile_seconds": 30.0},
                                 "train@old:3": {}})   # an older worker says nothing: nothing to compare
    assert [(w, name) for w, name, _ in found] == [("heavy@m:1", "compile_seconds"), ("train@m:2", "train_seconds")]
    assert "rasplay worker heavy@m:1 has --compile-seconds 7 and this replica 30" in found[0][2]


def test_each_disagreement_is_logged_once(caplog, tmp_path):
    agreement = Agreement(Settings(data_dir=tmp_path, compile_seconds=30))
    workers = {"heavy@m:1": {"compile_seconds": 7.0}}
    with caplog.at_level(logging.WARNING, logger="rasplay"):
        assert len(agreement.check(workers)) == 1
        assert agreement.check(workers) == []
        assert len(agreement.check({"heavy@m:1": {"compile_seconds": 8.0}})) == 1   # a new value: said again
    assert caplog.text.count("settings disagree") == 2


def test_heartbeat_values_of_any_release_are_read():
    assert heartbeat_settings(b'{"warm": 1, "settings": {"train_seconds": 5}}') == {"train_seconds": 5}
    assert heartbeat_settings(b'{"warm": 1}') == {} and heartbeat_settings(b"not json") == {}


def test_replicas_of_a_store_with_another_cap_are_named_with_both_values():
    from rasplay.server.course.agreement import store_disagreements

    recorded = [("h:8001", "max_store_bytes", "1000", "2026-11-28 15:00"),
                ("h:8002", "max_store_bytes", "2000", "2026-11-28 15:01"), ("h:8003", "other", "9", "x")]
    told = store_disagreements("h:8004", {"max_store_bytes": "2000"}, recorded)
    assert len(told) == 1 and told[0].startswith("replica h:8001 of this store started on 2026-11-28 15:00 UTC with "
                                                 "--max-store-bytes 1000 and this replica (h:8004) has 2000")
