"""Server settings: limits, paths and sizes, set by `rasplay serve` flags (or tests) and handed to
routers through FastAPI dependencies."""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rasplay.engine import Limits


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rasplay"


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000 ** 2, "mb": 1000 ** 2, "mib": 1 << 20,
          "g": 1000 ** 3, "gb": 1000 ** 3, "gib": 1 << 30}


def parse_bytes(text: str) -> int:
    """'1GiB', '512MiB', '300MB', '1000000' -> bytes."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (say e.g. 1GiB, 512MiB or 300MB)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def show_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    workers: int = 4                    # evaluation worker processes
    max_body_bytes: int = 1 << 20       # any request body
    header_seconds: float = 10.0        # a request's headers must arrive within this (else the connection closes)
    proxy_keep_alive_seconds: float = 130.0   # a trusted proxy's idle connection is kept this long (connections.py)
    body_seconds: float = 30.0          # a request's body must arrive within this of its start (else 408)
    send_seconds: float = 30.0          # a client must take each 64 KiB of an answer within this (else closed)
    client_connections: int = 64        # open connections from one client address (more are refused)
    max_response_bytes: int = 32 << 20  # any one answer (every cell counted): larger is a 422 `limit`
    client_pending_bytes: int = 128 << 20  # answers one client has not yet read, held on disk (more: 429)
    max_source_chars: int = 250_000     # program text (published RASP programs reach ~125,000)
    max_inputs: int = 16                # inputs per evaluation
    max_input_length: int = 256         # tokens per input
    eval_seconds: float = 5.0           # per evaluation; the worker is killed past it
    queue_seconds: float = 10.0         # longest wait for a free worker before "busy"
    max_share_bytes: int = 64 * 1024    # a shared state, as JSON
    cors_origins: tuple[str, ...] = ()  # allowed origins for /api (none: CORS off)
    embed_origins: tuple[str, ...] = ()  # sites that may frame /embed (none: any site; other pages: never)
    engine_seconds: float | None = None  # the engine's own cooperative limit (default: 90% of eval_seconds)
    compile_max_len: int = 24           # longest input a compiled model is built for
    compile_max_vocab: int = 32         # tokens in a compiled model's vocabulary
    compile_seconds: float = 30.0       # time limit of a compile, a run or a soft-attention study
    # training jobs running at once: one per two cores, but at least two where there are two cores, so
    # that a model and its ablation train side by side
    train_jobs: int = min(max(2, (os.cpu_count() or 2) // 2), os.cpu_count() or 2)
    train_warm: int = 2                 # spare training processes kept started (PyTorch loaded): no wait at a click
    train_queue: int = 4                # training jobs waiting; more are refused (429)
    client_jobs: int = 2                # training jobs one client may have queued or running (never all places)
    train_seconds: float = 600.0        # a training job's time limit
    train_orphan_seconds: float = 30.0  # a job no page follows (event stream closed, no status asked) is cancelled after this
    heavy_workers: int = 0              # worker processes for compiler work (0: half the evaluation workers, >= 1)
    worker_memory: int = 1 << 30        # memory one request may take on top of an idle worker
    worker_keep: int = 256 << 20        # memory a worker may keep (caches) between requests
    train_memory: int = 2 << 30         # a training job's memory (estimated before queueing, and enforced)
    client_heavy: int = 2               # compiler requests one client may have running at once
    client_workers: int = 0             # workers of a pool one client's requests may hold (0: all but one)
    writes_per_minute: int = 60         # new short links and compiled models per client per minute
    checks_per_minute: int = 30         # exercise checks per client per minute (each reveals a little of the reference)
    max_store_bytes: int = 1 << 30      # the store (links and models) on disk
    store: str | None = None            # a PostgreSQL URL for the store (None: SQLite in data_dir)
    redis: str | None = None            # a Redis URL: write buckets shared by replicas (None: in this process)
    broker: str | None = None           # a Redis URL: training and compiler work through Celery (None: in this process)
    trusted_proxies: tuple[str, ...] = ()  # reverse proxies whose client header is believed (clients.py)
    proxy_header: str = "x-forwarded-for"  # the header they write: x-forwarded-for or forwarded

    @property
    def heavy_pool_size(self) -> int:
        return self.heavy_workers or max(1, self.workers // 2)
    exercises_dirs: tuple[Path, ...] = ()  # teachers' exercise folders, added to the shipped exercises
    check_seconds: float = 10.0         # an exercise check (both programs, all its inputs); killed past it
    # ---- operations (docs/deploy.md, "Health, metrics and logs" and "Restarts"): logs, readiness, draining
    access_log: bool = False            # log one line per request: client, method, path, status, milliseconds
    log_json: bool = False              # log lines as JSON objects (else text); every line has its UTC timestamp
    ready_seconds: float = 2.0          # time limit of each readiness check (store, broker, workers); slower: not ready
    shutdown_seconds: float = 20.0      # SIGTERM: requests in flight get this long to finish, then a 503 (never a 500)
    worker_stop_seconds: float = 60.0   # `rasplay worker` at SIGTERM: running trainings get this long to finish, then fail

    def engine_limits_json(self) -> dict:
        """engine_limits() as the dict sent to workers (computed once)."""
        cached = self.__dict__.get("_limits_json")
        if cached is None:
            cached = asdict(self.engine_limits())
            object.__setattr__(self, "_limits_json", cached)
        return cached

    def engine_limits(self) -> Limits:
        # the engine's own cooperative time limit sits just under the hard one
        return Limits(max_source_chars=self.max_source_chars, max_inputs=self.max_inputs,
                      max_input_length=self.max_input_length,
                      eval_seconds=self.engine_seconds or self.eval_seconds * 0.9)
