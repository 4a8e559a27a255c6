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


def blob(payload):
    """`bytes` bytes: a binary result (larger than a pipe's buffer when asked)."""
    return b"x" * payload["bytes"]


def release():
    _kept.clear()


KINDS = {"sleep": sleep, "allocate": allocate, "blob": blob, "evaluate": work_kinds.KINDS["evaluate"]}
