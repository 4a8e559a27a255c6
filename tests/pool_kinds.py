"""Work kinds for testing the generic worker pool (server/process_pool.py): a registry of the tests' own,
imported by the pool's worker processes."""
import time

from rasplay.server import work_kinds

_kept: list = []


def sleep(payload):
    time.sleep(payload["seconds"])
    return {"slept": payload["seconds"]}


def allocate(payload):
    """Allocate and touch `mib` MiB; with "keep", hold it after the reply (as a cache would)."""
    block = bytearray(payload["mib"] << 20)
    block[::4096] = b"x" * len(block[::4096])
    if payload.get("keep"):
        _kept.append(block)
    return {"allocated": payload["mib"]}


def release():
    _kept.clear()


KINDS = {"sleep": sleep, "allocate": allocate, "evaluate": work_kinds.KINDS["evaluate"]}
