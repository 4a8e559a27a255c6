"""Each pair of parts that stand in for each other (server/seams.py) has the interface declared there:
every method with the same parameters (names, kinds, defaults), async where it is async, and the
attributes the routes read."""
from __future__ import annotations

import inspect
import typing

import pytest

from rasplay.server import seams
from rasplay.server.course.heavy_queue import RemotePool
from rasplay.server.course.store_postgres import PostgresStore
from rasplay.server.course.training_board import SharedJobs
from rasplay.server.process_pool import WorkerPool
from rasplay.server.store import SQLiteStore
from rasplay.server.training_jobs import JobManager

PAIRS = {seams.Store: (SQLiteStore, PostgresStore), seams.Pool: (WorkerPool, RemotePool),
         seams.Jobs: (JobManager, SharedJobs)}


def members(protocol) -> dict:
    return {name: value for name, value in vars(protocol).items()
            if inspect.isfunction(value) and not name.startswith("_")}


def parameters(fn) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def differences(protocol, cls) -> list[str]:
    found = []
    for name, declared in members(protocol).items():
        actual = getattr(cls, name, None)
        if actual is None:
            found.append(f"{cls.__name__} has no {name}")
            continue
        if parameters(actual) != parameters(declared):
            found.append(f"{cls.__name__}.{name}{inspect.signature(actual)} is not {name}{inspect.signature(declared)}")
        if inspect.iscoroutinefunction(declared) != inspect.iscoroutinefunction(actual):
            found.append(f"{cls.__name__}.{name}: async differs")
        if name == "follow_job" and not inspect.isasyncgenfunction(actual):
            found.append(f"{cls.__name__}.{name} is not an async generator")
    return found


@pytest.mark.parametrize("protocol", list(PAIRS), ids=lambda p: p.__name__)
def test_each_implementation_has_the_declared_interface(protocol):
    assert len(members(protocol)) >= 5
    for cls in PAIRS[protocol]:
        assert differences(protocol, cls) == []


def test_attributes_the_routes_read_are_set_by_each_implementation():
    source = {cls: inspect.getsource(cls.__init__) for pair in PAIRS.values() for cls in pair}
    for protocol, pair in PAIRS.items():
        for attribute in typing.get_type_hints(protocol):
            for cls in pair:
                assert f"self.{attribute}" in source[cls], (cls.__name__, attribute)


def test_the_check_sees_a_difference():
    class Narrow:
        async def run(self, kind, payload): ...

    assert any("run" in d for d in differences(seams.Pool, Narrow))
    assert any("has no alive" in d for d in differences(seams.Pool, Narrow))


def test_the_routes_dependency_is_typed_by_the_seams():
    from rasplay.server.api.deps import Services

    hints = typing.get_type_hints(Services)
    assert (hints["store"], hints["pool"], hints["heavy"], hints["jobs"]) == (seams.Store, seams.Pool, seams.Pool,
                                                                             seams.Jobs)
