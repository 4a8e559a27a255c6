"""Server settings, each declared once: its default, unit, help text, environment variable
(RASPLAY_<NAME>) and bounds. `rasplay serve` and `rasplay worker` build their options from these
declarations (cli/settings_options.py), README's settings table is generated from them
(server/settings_doc.py), and routers get the settings through FastAPI dependencies.

A setting comes from its flag, else its environment variable, else its default: `Settings()` is what
`rasplay serve` runs with no flags (and no RASPLAY_* variables)."""
from __future__ import annotations

import os
import re
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from ..engine import Limits

SERVE, WORKER = "serve", "worker"
BOTH = (SERVE, WORKER)


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rasplay"


def default_workers() -> int:
    """Evaluation workers: two per core, 2 to 8."""
    return max(2, min(8, (os.cpu_count() or 2) * 2))


def default_train_jobs() -> int:
    """Training jobs at once: one per two cores, but at least two where there are two cores, so that a
    model and its ablation train side by side."""
    return min(max(2, (os.cpu_count() or 2) // 2), os.cpu_count() or 2)


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


def _bytes(value: Any) -> Any:
    return parse_bytes(value) if isinstance(value, str) else value


def _items(value: Any) -> Any:
    """A list setting from the environment: comma-separated (each flag of a repeatable option is one item)."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def _origins(value: Any) -> Any:
    from .security import check_origin

    return tuple(check_origin(v) for v in _items(value))


def _networks(value: Any) -> Any:
    from .clients import parse_networks

    if isinstance(value, str):   # the environment holds one comma-separated list, as one flag does
        value = (value.strip(),) if value.strip() else ()
    for entry in value:
        parse_networks(entry)
    return tuple(value)


Bytes = Annotated[int, BeforeValidator(_bytes)]
Items = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_items)]


def setting(default: Any = None, help: str = "", *, unit: str = "", commands: tuple[str, ...] = (SERVE,),
            flag: str | None = None, shown: str | None = None, factory=None, env: str | None = None, **bounds) -> Any:
    """One setting's declaration: `help` says what it bounds (the CLI adds the default and the variable);
    `unit` is s, bytes, a count...; `commands` the CLIs that take it as a flag; `flag` a flag name other
    than --NAME-WITH-DASHES; `shown` how the default reads where it is computed; `env` an environment
    variable other than RASPLAY_<NAME>; `bounds` ge/gt/le, checked from every source."""
    extra = {"unit": unit, "commands": list(commands), "flag": flag, "shown": shown, "env": env}
    if factory is not None:
        return Field(default_factory=factory, description=help, json_schema_extra=extra, **bounds)
    return Field(default, description=help, json_schema_extra=extra, **bounds)


class VariableSource(PydanticBaseSettingsSource):
    """Each setting from its own environment variable (RASPLAY_<NAME>, exactly; an empty one is unset)."""

    def get_field_value(self, field, field_name):
        value = os.environ.get(variable(field_name, field))
        return value, field_name, False

    def __call__(self) -> dict:
        found = {}
        for name, field in self.settings_cls.model_fields.items():
            value = os.environ.get(variable(name, field), "")
            if value.strip():
                found[name] = value
        return found


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RASPLAY_", frozen=True, extra="forbid")

    host: str = setting("127.0.0.1", "address to bind (127.0.0.1: this machine only)", unit="address")
    port: int = setting(8000, "TCP port to listen on; \"serving at\" is printed once it is bound", unit="port",
                        ge=0, le=65535)
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = setting(
        "warning", "how much the server (uvicorn) or the worker (Celery) logs", unit="level", commands=BOTH)
    data_dir: Path = setting(help="where links, models and temporary files go", unit="path", commands=BOTH,
                             factory=default_data_dir, shown="$XDG_DATA_HOME/rasplay or ~/.local/share/rasplay")
    workers: int = setting(help="evaluation worker processes", unit="processes", factory=default_workers,
                           shown="2 per core, 2 to 8", ge=1, le=256)
    max_body_bytes: Bytes = setting(1 << 20, "any request body (declared or chunked)", unit="bytes", ge=1)
    header_seconds: float = setting(10.0, "time a request's headers may take to arrive (then 408 and closed)",
                                    unit="s", gt=0)
    proxy_keep_alive_seconds: float = setting(
        130.0, "idle time after which a trusted proxy's kept-alive connection is closed (above nginx's 60 s and "
        "Caddy's 120 s, so the proxy closes it first; a client's: 5 s)", unit="s", gt=0)
    body_seconds: float = setting(30.0, "time a request's body may take to arrive (then 408)", unit="s", gt=0)
    send_seconds: float = setting(30.0, "time a client may take to read each 64 KiB of an answer (then closed)",
                                  unit="s", gt=0)
    client_connections: int = setting(64, "connections one client address may have open (more are refused)",
                                      unit="connections", ge=1)
    max_response_bytes: Bytes = setting(32 << 20, "size of any one answer, every value counted (larger: 422 "
                                        "`limit`)", unit="bytes", commands=BOTH, ge=1)
    client_pending_bytes: Bytes = setting(128 << 20, "large answers one client address has not read yet, held in "
                                          "temporary files, not memory (more: 429)", unit="bytes", ge=1)
    max_source_chars: int = setting(250_000, "program text (published RASP programs reach ~125,000)",
                                    unit="characters", ge=1)
    max_inputs: int = setting(16, "inputs per request", unit="inputs", ge=1)
    max_input_length: int = setting(256, "tokens per input", unit="tokens", ge=1)
    eval_seconds: float = setting(5.0, "time limit of one evaluation; the worker process is killed and replaced "
                                  "past it", unit="s", gt=0)
    queue_seconds: float = setting(10.0, "longest wait for a free worker (then 503 with Retry-After)", unit="s",
                                   commands=BOTH, gt=0)
    max_share_bytes: int = setting(64 * 1024, "a shared state, as JSON (larger: 413)", unit="bytes", ge=1)
    cors_origins: Items = setting((), "allow this origin to call the API (repeatable; none: CORS off)",
                                  unit="origins", flag="--cors-origin", shown="none")
    embed_origins: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_origins)] = setting(
        (), "only this site may frame /embed, e.g. https://course.example.edu (repeatable; none: any site; "
        "other pages can never be framed)", unit="origins", flag="--embed-origin", shown="none")
    engine_seconds: float | None = setting(None, "the engine's own cooperative time limit, under the hard one",
                                           unit="s", shown="90% of --eval-seconds", gt=0)
    compile_max_len: int = setting(24, "longest input a compiled model is built for (max_len)", unit="tokens",
                                   ge=1, le=256)
    compile_max_vocab: int = setting(32, "tokens in a compiled model's vocabulary", unit="tokens", ge=1, le=1024)
    compile_seconds: float = setting(30.0, "time limit of a compile, a run, a soft-attention study or a weights "
                                     "download", unit="s", commands=BOTH, gt=0)
    train_jobs: int = setting(help="training jobs at once (low CPU priority)", unit="jobs", commands=BOTH,
                              factory=default_train_jobs,
                              shown="one per two cores, at least two on two cores (a model and its ablation)", ge=1)
    train_warm: int = setting(2, "spare training processes kept started with PyTorch loaded, so that a job starts "
                              "at once (about 300 MB each; 0: none)", unit="processes", commands=BOTH, ge=0)
    train_queue: int = setting(4, "training jobs that may wait (more: 429)", unit="jobs", ge=1)
    client_jobs: int = setting(2, "training jobs one client address may have queued or running (never all the "
                               "places: one is always left for others; more: 429)", unit="jobs", ge=0)
    train_seconds: float = setting(600.0, "time limit of a training job (give replicas and workers the same)",
                                   unit="s", commands=BOTH, gt=0)
    train_device: Literal["cpu", "cuda", "auto"] = setting(
        "cpu", "where a training job runs when its request names no device (auto: a GPU when the process that runs the "
        "job has one; cuda: refused there without one)", unit="device")
    train_orphan_seconds: float = setting(30.0, "a training job that no page follows (no event stream, no status "
                                          "asked) for this long is cancelled: its page was closed", unit="s",
                                          commands=BOTH, gt=0)
    heavy_workers: int = setting(0, "worker processes for compiler work: compile, run, soft study, weights (0: half "
                                 "of --workers' default or value, at least 1)", unit="processes", commands=BOTH, ge=0)
    worker_memory: Bytes = setting(1 << 30, "memory one request may take in a worker, over its idle size (past it: "
                                   "422 `limit`, the worker is replaced)", unit="bytes", commands=BOTH, ge=1)
    worker_keep: Bytes = setting(256 << 20, "memory a worker may keep in caches between requests (past it the "
                                 "worker drops its caches or is replaced)", unit="bytes", commands=BOTH, ge=1)
    train_memory: Bytes = setting(2 << 30, "memory of a training job: estimated before queueing (422 when over) "
                                  "and enforced while it runs", unit="bytes", commands=BOTH, ge=1)
    client_heavy: int = setting(2, "compiler requests one client address may have running at once (0: no limit; "
                                "more: 429)", unit="requests", ge=0)
    client_workers: int = setting(0, "workers of each pool one client address's requests may hold at once; its "
                                  "other requests wait in its own queue, clients take turns (0: all but one)",
                                  unit="workers", ge=0)
    writes_per_minute: int = setting(60, "new short links and compiled models per client address per minute (0: "
                                     "no limit; more: 429 with Retry-After)", unit="per minute", ge=0)
    checks_per_minute: int = setting(30, "exercise checks per client address per minute (0: no limit; more: 429 "
                                     "with Retry-After)", unit="per minute", ge=0)
    max_store_bytes: Bytes = setting(1 << 30, "size cap of the store of links and models (past it, or on a full "
                                     "disk: 507)", unit="bytes", ge=1)
    store: str | None = setting(None, "keep links and models in PostgreSQL at this postgresql://... URL, shared by "
                                "replicas (none: SQLite in --data-dir; needs rasplay[course]; docs/deploy.md)",
                                unit="URL", shown="none")
    redis: str | None = setting(None, "share the per-client write buckets (--writes-per-minute, "
                                "--checks-per-minute) with the other replicas through Redis at this redis://... URL "
                                "(none: this server's own; needs rasplay[course])", unit="URL", shown="none")
    broker: str | None = setting(None, "run training and compiler work in `rasplay worker` processes through Celery "
                                 "with Redis at this redis://... URL, shared by replicas (none: in this server; "
                                 "needs rasplay[course]); give it in the environment to keep it out of `ps`",
                                 unit="URL", commands=BOTH, shown="none")
    trusted_proxies: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_networks)] = setting(
        (), "reverse proxies in front of rasplay, e.g. 127.0.0.1,10.0.0.0/8 (repeatable): for their connections "
        "the client is the right-most address in --proxy-header that is not one of them (docs/security.md)",
        unit="addresses", flag="--trusted-proxy", env="RASPLAY_TRUSTED_PROXY", shown="none")
    proxy_header: Literal["x-forwarded-for", "forwarded"] = setting(
        "x-forwarded-for", "the header the trusted proxies write the client's address in", unit="header")
    exercises_dirs: Annotated[tuple[Path, ...], NoDecode, BeforeValidator(_items)] = setting(
        (), "a folder of .exercise files to offer besides the shipped ones (repeatable); checked at start",
        unit="folders", flag="--exercises", shown="none")
    check_seconds: float = setting(10.0, "time limit of one exercise check (the worker is killed past it)",
                                   unit="s", gt=0)
    # operations (docs/deploy.md, "Health, metrics and logs" and "Restarts"): logs, readiness, draining
    access_log: bool = setting(False, "log one line per request: client, method, path, status, milliseconds",
                               unit="on/off")
    log_format: Literal["text", "json"] = setting("text", "log lines as text or as one JSON object each; both "
                                                  "with UTC timestamps", unit="format", commands=BOTH)
    ready_seconds: float = setting(2.0, "time limit of each readiness check (store, broker, workers); slower: "
                                   "not ready", unit="s", gt=0)
    shutdown_seconds: float = setting(20.0, "at SIGTERM, requests in flight get this long to finish; later "
                                      "answers are a 503 JSON, never a 500", unit="s", ge=0)
    worker_stop_seconds: float = setting(60.0, "at SIGTERM the worker takes no new work and its running trainings "
                                         "get this long to finish, then they fail, saying so (give the service "
                                         "manager more, e.g. systemd's TimeoutStopSec)", unit="s",
                                         commands=(WORKER,), flag="--stop-seconds", ge=0)

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        return init_settings, VariableSource(settings_cls)

    @property
    def log_json(self) -> bool:
        return self.log_format == "json"

    @property
    def heavy_pool_size(self) -> int:
        return self.heavy_workers or max(1, self.workers // 2)

    @cached_property
    def limits_dict(self) -> dict:
        return asdict(self.engine_limits())

    def engine_limits_json(self) -> dict:
        """engine_limits() as the dict sent to workers (computed once)."""
        return self.limits_dict

    def engine_limits(self) -> Limits:
        # the engine's own cooperative time limit sits just under the hard one
        return Limits(max_source_chars=self.max_source_chars, max_inputs=self.max_inputs,
                      max_input_length=self.max_input_length,
                      eval_seconds=self.engine_seconds or self.eval_seconds * 0.9)


def variable(name: str, field=None) -> str:
    """The environment variable of setting `name`."""
    field = field or Settings.model_fields[name]
    return field.json_schema_extra["env"] or "RASPLAY_" + name.upper()


def flag_of(name: str, field) -> str:
    return field.json_schema_extra["flag"] or "--" + name.replace("_", "-")


def shown_default(field) -> str:
    """The default as the help and README show it."""
    extra = field.json_schema_extra
    if extra["shown"]:
        return extra["shown"]
    default = field.default
    if extra["unit"] == "bytes":
        return show_bytes(default).replace(" ", "")
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)
