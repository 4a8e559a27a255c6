"""A job runner for tests of server/training_jobs.py: no torch; says whether `warm()` ran in its process."""
import os

WARMED = {"pid": None}


def warm():
    WARMED["pid"] = os.getpid()


def run(spec, emit, should_stop, workdir=None):
    emit({"point": "phase", "phase": "test", "message": "running"})
    return {"pid": os.getpid(), "warmed_here": WARMED["pid"] == os.getpid(), "echo": spec["x"]}
