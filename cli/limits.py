"""The time and memory limits of a command-line evaluation (`rasplay eval --eval-seconds --memory`)."""
from __future__ import annotations

import sys


class TimeLimit(BaseException):
    """Raised (by SIGALRM) in the evaluation when it runs past its time limit."""


def enforce_limits(path: str, seconds: float, memory: int | None):
    """An address-space limit for this process, then a hard time limit (SIGALRM stops the Python
    code; a watchdog thread ends the process if a long step in C does not return within a second
    more). The engine's library is loaded first, so that the limits are the program's own. Returns
    `disarm()`, which lifts both."""
    import os
    import resource
    import signal
    import threading

    from .. import engine

    engine.evaluate("x = length;", ["ab"])   # the library (ours) is not the program's time
    address_space = resource.getrlimit(resource.RLIMIT_AS)   # restored by disarm (the CLI may run in-process)
    if memory:
        try:
            with open("/proc/self/statm") as f:
                size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            resource.setrlimit(resource.RLIMIT_AS, (size + memory, address_space[1]))   # soft: disarm restores it
        except (OSError, ValueError):
            pass

    def too_long(*_):
        raise TimeLimit()

    def last_resort():
        print(f"{path}: error: the evaluation took longer than {seconds:g} s (the time limit; --eval-seconds) "
              "and was stopped", file=sys.stderr, flush=True)
        os._exit(1)

    signal.signal(signal.SIGALRM, too_long)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    timer = threading.Timer(seconds + 1.0, last_resort)
    timer.daemon = True
    timer.start()

    def disarm():
        signal.setitimer(signal.ITIMER_REAL, 0)
        timer.cancel()
        if memory:
            try:
                resource.setrlimit(resource.RLIMIT_AS, address_space)
            except (OSError, ValueError):
                pass
    return disarm
