"""`rasplay worker --broker redis://...`: run training and compiler work for replicas started with
`--broker` (Celery with Redis; the worker itself is server/celery_app.py). Given both queues, it runs one
process for each (`rasplay worker ... --queues Q`) and supervises them."""
from __future__ import annotations

import os
import signal
import subprocess
import sys


def add_parser(sub) -> None:
    """`rasplay worker`: its options (the limits are those of `rasplay serve`, with the same defaults)."""
    p = sub.add_parser("worker", help="run training and compiler work for replicas started with --broker "
                                      "(Celery with Redis; needs rasplay[course,train]; docs/deploy.md)")
    p.add_argument("--broker", default=os.environ.get("RASPLAY_BROKER"), metavar="URL",
                   help="the redis://... URL the replicas were given (default: $RASPLAY_BROKER)")
    p.add_argument("--queues", default="train,heavy",
                   help="train (training jobs), heavy (compile, run, soft study, weights) or both (default "
                        "train,heavy: one process for each)")
    p.add_argument("--data-dir", help="where the jobs' temporary directories go (default ~/.local/share/rasplay)")
    p.add_argument("--train-jobs", type=int, help="training jobs this worker runs at once (default: one per two "
                   "cores, at least two on two cores)")
    p.add_argument("--train-warm", type=int, default=2, help="spare training processes kept started with "
                   "PyTorch loaded (default 2)")
    p.add_argument("--train-seconds", type=float, default=600, help="time limit of a training job (default 600; "
                   "give the replicas the same)")
    p.add_argument("--train-memory", default="2GiB", help="memory of a training job, enforced (default 2GiB)")
    p.add_argument("--heavy-workers", type=int, help="processes for compiler work (default 2)")
    p.add_argument("--compile-seconds", type=float, default=30.0, help="time limit of a compile, run or soft "
                   "study (default 30)")
    p.add_argument("--queue-seconds", type=float, default=10.0, help="longest wait for a free process (default 10)")
    p.add_argument("--worker-memory", default="1GiB", help="memory one compiler request may take (default 1GiB)")
    p.add_argument("--worker-keep", default="256MiB", help="memory a process may keep in caches (default 256MiB)")
    p.add_argument("--max-response-bytes", default="32MiB", help="size of any one result (default 32MiB)")
    p.add_argument("--stop-seconds", type=float, default=60.0, help="at SIGTERM the worker takes no new work and "
                   "its running trainings get this long to finish; then they fail, saying so (default 60; give the "
                   "service manager more, e.g. systemd's TimeoutStopSec)")
    p.add_argument("--name", help="this worker's Celery node name (default QUEUE-PID@HOST)")
    p.add_argument("--log-level", default="warning")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from rasplay.server.celery_app import QUEUES, run_queue
    from rasplay.server.settings import Settings, default_data_dir, parse_bytes

    if not args.broker:
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
        argv = ["--broker", args.broker, "--log-level", args.log_level]
        for name in ("data_dir", "train_jobs", "train_warm", "train_seconds", "train_memory", "heavy_workers",
                     "compile_seconds", "queue_seconds", "worker_memory", "worker_keep", "max_response_bytes",
                     "stop_seconds"):
            if getattr(args, name) is not None:
                argv += ["--" + name.replace("_", "-"), str(getattr(args, name))]
        return supervise(argv, queues, args.stop_seconds)
    try:
        sizes = {name: parse_bytes(getattr(args, name)) for name in
                 ("train_memory", "worker_memory", "worker_keep", "max_response_bytes")}
    except ValueError as e:
        raise SystemExit(f"rasplay: {e}")
    settings = Settings(data_dir=Path(args.data_dir) if args.data_dir else default_data_dir(),
                        train_jobs=args.train_jobs or Settings().train_jobs, train_warm=args.train_warm,
                        train_seconds=args.train_seconds, heavy_workers=args.heavy_workers or 2,
                        compile_seconds=args.compile_seconds, queue_seconds=args.queue_seconds, broker=args.broker,
                        worker_stop_seconds=args.stop_seconds, **sizes)
    return run_queue(args.broker, settings, queues[0], args.log_level, args.name)


def _die_with_parent() -> None:
    """In a queue's process: end when `rasplay worker` ends, however it ends (even kill -9)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def supervise(argv: list[str], queues: list[str], stop_seconds: float = 60.0) -> int:
    """One process per queue (`rasplay worker ... --queues Q`); when one ends, the others are stopped
    and the worker exits (its service manager starts it again)."""
    children = [subprocess.Popen([sys.executable, "-m", "rasplay.cli", "worker", *argv, "--queues", q],
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
