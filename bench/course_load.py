"""A course at once: simulated students against (a) one `rasplay serve` and (b) the course deployment, 2
replicas (`--store` PostgreSQL, `--redis`, `--broker`) + 2 `rasplay worker` + PostgreSQL + Redis, all on this
machine (Debian's PostgreSQL and Redis, started in a temporary directory as the tests do).

Each student has an address of its own (127.0.0.X, so per-client limits count each apart), loads the page
and its assets once, then evaluates programs and checks an exercise in a loop, each request sent to a
replica at random (a load balancer without stickiness). At the same time `--trainings` students each press
Train (small models) together and follow their job's event stream to its end (on a random replica).

A request sent on a kept-alive connection that the server closed before answering is sent again once on a
new connection, as browsers do (counted: "sent again"); every other failure is counted per reason (status
and error kind, or the httpx error and whether its connection was new or kept alive).

Prints, per deployment: evaluations and exercise checks (count, non-200 answers, p50/p99), page loads,
trainings completed and whether every page received every event (the events it read = the job's count),
and the time until the last training ended.

    python bench/course_load.py --quick          # 30 students, 4 trainings, 40 s: a check that it all runs
    python bench/course_load.py                  # 300 students, 20 trainings (the issue's figures)
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from live_server import LiveServer  # noqa: E402

REVERSE = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nreverse = aggregate(flip, tokens);\n"
HIST = "same = select(tokens, tokens, ==);\nhist = selector_width(same);\n"
TRAIN = {"source": HIST, "vocab": "abc", "max_len": 5, "steps": 150, "d_model": 16, "batch_size": 32}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


class Figures:
    def __init__(self):
        self.latency = {"evaluate": [], "check": [], "page": []}
        self.errors = {"evaluate": 0, "check": 0, "page": 0}
        self.trainings: list[dict] = []
        self.reasons: collections.Counter = collections.Counter()   # (kind, reason) -> requests not 200
        self.resent: collections.Counter = collections.Counter()    # kind -> requests sent again (see send)

    def failed(self, kind: str, what: str) -> None:
        self.errors[kind] += 1
        self.reasons[kind, what] += 1


def reason(r: httpx.Response) -> str:
    """What a non-200 answer says: its status and its error kind (not its message, which varies)."""
    try:
        kind = r.json()["error"]["kind"]
    except (ValueError, KeyError, TypeError):
        kind = r.text[:60]
    return f"{r.status_code} {kind}"


async def send(c: httpx.AsyncClient, method: str, url: str, figures: Figures, kind: str, **kw) -> httpx.Response:
    """One request, as a browser sends it: when a connection kept alive from an earlier request is closed
    before any answer arrived (the server's keep-alive timer ended it as the request was sent), the request
    is sent again once on a new connection (RFC 9112 9.3.1; Chromium and Firefox do so, POST included),
    and counted in `figures.resent`. An httpx error is re-raised with a note: new or kept-alive connection
    (found with httpcore's trace: a new one has a connect_tcp event)."""
    for attempt in range(2):
        events: list[str] = []

        async def trace(name, info):
            events.append(name)

        try:
            return await c.request(method, url, extensions={"trace": trace}, **kw)
        except httpx.HTTPError as e:
            fresh = any(n.startswith("connection.connect_tcp") for n in events)
            answered = any(n.startswith("http11.receive_response_headers.complete") for n in events)
            if attempt == 0 and not fresh and not answered and isinstance(e, CLOSED):
                figures.resent[kind] += 1
                continue
            e.add_note("new connection" if fresh else "kept-alive connection")
            raise


CLOSED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)   # the connection ended, no answer


def failure(e: httpx.HTTPError) -> str:
    return f"{type(e).__name__}({e}) on a {''.join(getattr(e, '__notes__', ['?']))}"


def client_for(address: str) -> httpx.AsyncClient:
    # An idle connection is reused for at most 2 s (uvicorn closes one idle for 5 s): fewer requests race with
    # the server's close; those that still do (the 5 s count from when the server wrote its answer, which this
    # busy client may read seconds later) are sent again by send(), as a browser does.
    return httpx.AsyncClient(timeout=120, limits=httpx.Limits(keepalive_expiry=2),
                             transport=httpx.AsyncHTTPTransport(local_address=address))


async def student(urls: list[str], address: str, stop_at: float, rng: random.Random, exercise: dict, figures: Figures):
    async with client_for(address) as c:
        start = time.perf_counter()
        try:
            page = await send(c, "GET", rng.choice(urls) + "/", figures, "page")
            bad = [f"/ {reason(page)}"] if page.status_code != 200 else []
            for asset in re.findall(r'(?:src|href)="(/[^"#]+)"', page.text):
                r = await send(c, "GET", rng.choice(urls) + asset, figures, "page")
                if r.status_code != 200:
                    bad.append(f"{asset} {reason(r)}")
        except httpx.HTTPError as e:
            bad = [failure(e)]
        figures.latency["page"].append(time.perf_counter() - start)
        if bad:
            figures.failed("page", "; ".join(bad))
        while time.monotonic() < stop_at:
            kind = "check" if rng.random() < 0.1 else "evaluate"
            if kind == "check":
                path, body = f"/api/v1/exercises/{exercise['id']}/check", {"source": exercise["starter"]}
            else:
                path = "/api/v1/evaluate"
                body = {"source": REVERSE, "inputs": ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(3, 12)))]}
            start = time.perf_counter()
            try:
                r = await send(c, "POST", rng.choice(urls) + path, figures, kind, json=body)
                if r.status_code != 200:
                    figures.failed(kind, reason(r))
            except httpx.HTTPError as e:
                figures.failed(kind, failure(e))
            figures.latency[kind].append(time.perf_counter() - start)
            await asyncio.sleep(rng.uniform(0.5, 2.0))   # a student reads the answer before the next edit


async def trainer(urls: list[str], address: str, rng: random.Random, figures: Figures, t0: float):
    entry = {"status": None, "events_read": 0, "events": None, "seconds": None, "refused": None}
    figures.trainings.append(entry)
    async with client_for(address) as c:
        r = await c.post(rng.choice(urls) + "/api/v1/train", json=TRAIN)
        if r.status_code != 202:
            entry["refused"] = f"{r.status_code} {r.text[:120]}"
            return
        job_id = r.json()["id"]
        last, kind = None, None
        while entry["status"] is None:   # an EventSource: reconnect (to any replica) with Last-Event-ID
            headers = {"Last-Event-ID": str(last)} if last is not None else {}
            try:
                async with c.stream("GET", rng.choice(urls) + f"/api/v1/train/{job_id}/events", headers=headers,
                                    timeout=httpx.Timeout(30, read=700)) as s:
                    async for line in s.aiter_lines():
                        if line.startswith("id: "):
                            last = int(line[4:])
                        elif line.startswith("event: "):
                            kind = line[7:]
                        elif line.startswith("data: "):
                            if kind == "done":
                                done = json.loads(line[6:])
                                entry.update(status=done["status"], events=done["events"])
                            else:
                                entry["events_read"] += 1
            except httpx.HTTPError:
                await asyncio.sleep(1)
        entry["seconds"] = time.monotonic() - t0


async def drive(urls: list[str], students: int, trainings: int, seconds: float) -> Figures:
    figures = Figures()
    async with httpx.AsyncClient(timeout=60) as c:
        exercise_id = (await c.get(urls[0] + "/api/v1/exercises")).json()[0]["id"]
        exercise = (await c.get(urls[0] + f"/api/v1/exercises/{exercise_id}")).json()
    t0 = time.monotonic()
    stop_at = t0 + seconds
    address = (f"127.0.{1 + i // 250}.{1 + i % 250}" for i in range(students + trainings))
    tasks = [student(urls, next(address), stop_at, random.Random(i), exercise, figures) for i in range(students)]
    tasks += [trainer(urls, next(address), random.Random(1000 + i), figures, t0) for i in range(trainings)]
    await asyncio.gather(*tasks)
    return figures


def report(name: str, figures: Figures, wall: float) -> None:
    print(f"\n== {name}")
    for kind in ("evaluate", "check", "page"):
        lat = figures.latency[kind]
        print(f"{kind:9s} {len(lat):6d} requests, {figures.errors[kind]:4d} not 200, p50 {pct(lat, 0.5):7.1f} ms, "
              f"p99 {pct(lat, 0.99):7.1f} ms, {figures.resent[kind]} sent again after a keep-alive close")
    t = figures.trainings
    done = [e for e in t if e["status"] == "done"]
    whole = [e for e in t if e["events"] is not None and e["events_read"] >= e["events"]]
    refused = [e["refused"] for e in t if e["refused"]]
    last = max((e["seconds"] for e in t if e["seconds"] is not None), default=float("nan"))
    print(f"trainings {len(done)}/{len(t)} done, {len(whole)} pages received every event, {len(refused)} refused, "
          f"the last ended after {last:.1f} s (whole run {wall:.1f} s)")
    for r in refused[:3]:
        print("   refused:", r)
    for (kind, what), n in figures.reasons.most_common():
        print(f"   not 200: {kind} {n:5d} x {what}")


def run(name: str, urls: list[str], args) -> None:
    start = time.monotonic()
    figures = asyncio.run(drive(urls, args.students, args.trainings, args.seconds))
    report(name, figures, time.monotonic() - start)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=300)
    p.add_argument("--trainings", type=int, default=20)
    p.add_argument("--seconds", type=float, default=120, help="how long the students evaluate")
    p.add_argument("--quick", action="store_true", help="30 students, 4 trainings, 40 s")
    p.add_argument("--only", choices=["single", "course"], help="measure one deployment only")
    args = p.parse_args()
    if args.quick:
        args.students, args.trainings, args.seconds = 30, 4, 40
    places = ("--train-queue", str(args.trainings + 2), "--train-seconds", "600", "--workers", "2")
    root = Path(tempfile.mkdtemp(prefix="rasplay-course-"))
    print(f"{args.students} students for {args.seconds:g} s, {args.trainings} trainings queued together "
          f"({TRAIN['steps']} steps, d_model {TRAIN['d_model']}); machine: {len(__import__('os').sched_getaffinity(0))} "
          "cores")

    if args.only in (None, "single"):
        (root / "single").mkdir()
        server = LiveServer(root / "single", *places, "--train-warm", "2")
        try:
            run("one rasplay serve", [server.url], args)
        finally:
            server.stop()

    if args.only in (None, "course"):
        from postgres_server import PostgresServer
        from redis_server import RedisServer

        pg, redis_server = PostgresServer(fsync=True), RedisServer()
        store, broker = pg.new_database(), redis_server.url.rsplit("/", 1)[0] + "/1"
        workers, replicas = [], []
        try:
            for i in range(2):
                (root / f"w{i}").mkdir()
                workers.append(subprocess.Popen(
                    [sys.executable, "-m", "rasplay.cli", "worker", "--broker", broker, "--data-dir",
                     str(root / f"w{i}"), "--train-jobs", "1", "--train-warm", "1", "--heavy-workers", "1"],
                    cwd=ROOT, stdout=open(root / f"w{i}.log", "w"), stderr=subprocess.STDOUT, start_new_session=True))
            for i in range(2):
                (root / f"r{i}").mkdir()
                replicas.append(LiveServer(root / f"r{i}", *places, "--store", store, "--redis", redis_server.url,
                                           "--broker", broker))
            run("2 replicas + 2 workers + PostgreSQL + Redis", [r.url for r in replicas], args)
        finally:
            for r in replicas:
                r.stop()
            for w in workers:
                w.terminate()
                try:
                    w.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    w.kill()
            redis_server.close()
            pg.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
