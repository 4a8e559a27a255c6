"""`rasplay worker --broker redis://...`: run training and compiler work for replicas started with
`--broker` (Celery with Redis; the worker itself is server/course/celery_app.py). Given both queues, it runs one
process for each (`rasplay worker --queues Q`, its settings handed over in RASPLAY_* environment
variables, so that the broker's URL never shows in `ps`) and supervises them."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from .settings_options import add_settings_options, as_environment, settings_from


def add_parser(sub) -> None:
    """`rasplay worker`: its options (the settings it shares with `rasplay serve`, with the same defaults)."""
    p = sub.add_parser("worker", help="run training and compiler work for replicas started with --broker "
                                      "(Celery with Redis; needs rasplay[course,train]; docs/deploy.md)")
    add_settings_options(p, "worker")
    p.add_argument("--queues", default="train,heavy",
                   help="train (training jobs), heavy (compile, run, soft study, weights) or both (default "
                        "train,heavy: one process for each)")
    p.add_argument("--name", help="this worker's Celery node name (default QUEUE-PID@HOST)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..server.course.celery_base import QUEUES

    settings = settings_from(args, "worker")
    if not settings.broker:
        print("rasplay: worker needs --broker redis://... (or RASPLAY_BROKER): the URL the replicas were given",
              file=sys.stderr)
        return 1
    try:
        import celery  # noqa: F401
        import redis  # noqa: F401
    except ImportError as e:
        print(f"rasplay: worker needs the course extra ({e}): pip install 'rasplay[course,train]'", file=sys.stderr)
        return 1
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    if not queues or any(q not in QUEUES for q in queues):
        print(f"rasplay: --queues takes train, heavy or both (got {args.queues!r})", file=sys.stderr)
        return 1
    if len(queues) > 1:
        return supervise(child_environment(settings), queues, settings.worker_stop_seconds)
    from ..server.course.celery_app import run_queue

    return run_queue(settings.broker, settings, queues[0], settings.log_level, args.name)


def child_environment(settings) -> dict[str, str]:
    """The environment of a queue's process: this one's, with every worker setting as its variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RASPLAY_")}
    return {**env, **as_environment(settings, "worker")}


def _die_with_parent() -> None:
    """In a queue's process: end when `rasplay worker` ends, however it ends (even kill -9)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def supervise(env: dict[str, str], queues: list[str], stop_seconds: float) -> int:
    """One process per queue (`rasplay worker --queues Q`, its settings in `env`); when one ends, the
    others are stopped and the worker exits (its service manager starts it again)."""
    children = [subprocess.Popen([sys.executable, "-m", "rasplay.cli", "worker", "--queues", q], env=env,
                                 preexec_fn=_die_with_parent) for q in queues]

    told = []

    def forward(signum, _frame):
        told.append(signum)
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = 0
    while True:
        try:
            pid, status = os.wait()   # any child: the first to end ends the worker
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if any(child.pid == pid for child in children):
            code = os.waitstatus_to_exitcode(status)
            for child in children:
                if child.pid == pid:
                    child.returncode = code
            break
    for child in children:
        if child.poll() is None and not told:   # (once told to stop, each stops at its own pace: not told twice)
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=stop_seconds + 60)   # its trainings' grace, then its compiles' time limit
        except subprocess.TimeoutExpired:
            child.kill()
        code = code or (child.returncode or 0)
    return 1 if code else 0
