"""Job runners for testing the job manager (server/training_jobs.py) with real worker processes."""
import os
import time


def allocate(spec, emit, should_stop, workdir):
    """Touch `mib` MiB, then wait to be stopped."""
    block = bytearray(spec["mib"] << 20)
    block[::4096] = b"x" * len(block[::4096])
    emit({"allocated": spec["mib"]})
    while not should_stop():
        time.sleep(0.05)
    return {"held": len(block)}


def write_and_hang(spec, emit, should_stop, workdir):
    """Write into the job's directory, say where, then hang (ignoring stop requests) until killed."""
    with open(os.path.join(workdir, "model.npz"), "wb") as f:
        f.write(b"x" * 1000)
    emit({"workdir": workdir})
    time.sleep(3600)
