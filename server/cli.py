"""The `rasplay` command line: `rasplay serve | eval | compile | train | check | worker`."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def _read_program(path: str) -> tuple[str, list[Path]]:
    if path == "-":
        return sys.stdin.read(), [Path.cwd()]
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8"), [p.resolve().parent]
    except (OSError, UnicodeDecodeError) as e:
        raise SystemExit(f"rasplay: cannot read {path}: {e}")


def _print_diagnostics(path: str, diagnostics: list[dict]) -> None:
    for d in diagnostics:
        where = path
        if d.get("source") and d["source"] != "<program>":
            where = d["source"]
        if "line" in d:
            where += f":{d['line']}:{d['col']}"
        print(f"{where}: {d['severity']}: {d['message']}", file=sys.stderr)


def _enforce_limits(path: str, seconds: float, memory: int | None):
    """An address-space limit for this process, then a hard time limit (SIGALRM stops the Python
    code; a watchdog thread ends the process if a long step in C does not return within a second
    more). The engine's library is loaded first, so that the limits are the program's own."""
    import os
    import resource
    import signal
    import threading

    from rasplay import engine

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
        raise _TimeLimit()

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


class _TimeLimit(BaseException):
    pass


def cmd_eval(args) -> int:
    from rasplay import engine
    from .settings import parse_bytes
    from .text_display import render

    names = [n for part in args.names for n in part.split(",") if n] if args.names else None
    limits = None
    if args.tracr:   # FILE.py:NAME, a Tracr program (runs its Python): see docs/interop.md
        from rasplay.interop.cli_tracr import lower_for_eval
        source, _, limits = lower_for_eval(args)
        load_dirs = None
    else:
        source, load_dirs = _read_program(args.file)
    limits = (limits or engine.Limits()).with_(eval_seconds=args.eval_seconds * 0.9)
    try:
        memory = parse_bytes(args.memory) if args.memory else None
    except ValueError as e:
        raise SystemExit(f"rasplay: --memory: {e}")
    disarm = _enforce_limits(args.file, args.eval_seconds, memory)
    try:
        doc = engine.evaluate(source, args.input or None, names=names, input_format=args.input_format,
                              load_dirs=load_dirs, limits=limits)
    except _TimeLimit:
        print(f"{args.file}: error: the evaluation took longer than {args.eval_seconds:g} s (the time limit; "
              "--eval-seconds) and was stopped", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{args.file}: error: the evaluation needed more than {args.memory} of memory (the limit; --memory) "
              "and was stopped", file=sys.stderr)
        return 1
    finally:
        disarm()
    if args.tracr:   # Tracr's values (tuples, None), not the lowered program's codes
        from rasplay.interop.cli_tracr import decode_document
        doc = decode_document(args, doc)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        if not args.input and not doc["inputs"]:
            print("(no input: give one with -i, e.g. -i hello)", file=sys.stderr)
        print(render(doc))
    _print_diagnostics(args.file, doc["diagnostics"])
    failed = any(d["severity"] == "error" for d in doc["diagnostics"])
    failed = failed or any(e for r in doc["results"].values() for e in r["errors"])
    return 1 if failed else 0


def _embed_origin(text: str) -> str:
    from .security import check_origin

    try:
        return check_origin(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _networks(text: str) -> str:
    from .clients import parse_networks

    try:
        parse_networks(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _trusted_proxies(args) -> tuple[str, ...]:
    """--trusted-proxy, else $RASPLAY_TRUSTED_PROXY (checked here: a bad value stops the server with one line)."""
    if args.trusted_proxy:
        return tuple(args.trusted_proxy)
    text = os.environ.get("RASPLAY_TRUSTED_PROXY", "").strip()
    try:
        return (_networks(text),) if text else ()
    except argparse.ArgumentTypeError as e:
        raise SystemExit(f"rasplay: RASPLAY_TRUSTED_PROXY: {e}") from None


def cmd_serve(args) -> int:
    import uvicorn

    from .app import create_app
    from .settings import Settings, default_data_dir, parse_bytes
    from .store import StoreCorrupt, StoreUnavailable, is_database_url, open_store
    from .workers import default_workers

    try:
        sizes = {name: parse_bytes(getattr(args, name)) for name in
                 ("worker_memory", "worker_keep", "train_memory", "max_store_bytes", "max_response_bytes",
                  "client_pending_bytes")}
    except ValueError as e:
        raise SystemExit(f"rasplay: {e}")
    settings = Settings(
        data_dir=Path(args.data_dir) if args.data_dir else default_data_dir(),
        workers=args.workers or default_workers(),
        eval_seconds=args.eval_seconds, max_input_length=args.max_input_length, max_inputs=args.max_inputs,
        max_source_chars=args.max_source_chars, max_body_bytes=args.max_body_bytes,
        cors_origins=tuple(args.cors_origin or ()), embed_origins=tuple(args.embed_origin or ()),
        train_jobs=args.train_jobs or Settings().train_jobs, train_queue=args.train_queue,
        train_seconds=args.train_seconds, train_orphan_seconds=args.train_orphan_seconds, train_warm=args.train_warm, heavy_workers=args.heavy_workers or 0,
        client_heavy=args.client_heavy, queue_seconds=args.queue_seconds, writes_per_minute=args.writes_per_minute,
        client_jobs=args.client_jobs, client_workers=args.client_workers, checks_per_minute=args.checks_per_minute,
        header_seconds=args.header_seconds, proxy_keep_alive_seconds=args.proxy_keep_alive_seconds, body_seconds=args.body_seconds, send_seconds=args.send_seconds, client_connections=args.client_connections,
        exercises_dirs=tuple(Path(d) for d in args.exercises or ()), check_seconds=args.check_seconds, **sizes,
        store=args.store or None, redis=args.redis or None, broker=args.broker or None,
        trusted_proxies=_trusted_proxies(args), proxy_header=args.proxy_header,
    )
    if settings.store and not is_database_url(settings.store):
        print(f"rasplay: --store takes a postgresql://... URL (got {settings.store.split('://')[0]!r}); "
              "without it the store is SQLite in --data-dir", file=sys.stderr)
        return 1
    if settings.broker:
        try:
            import celery  # noqa: F401
            import redis  # noqa: F401
        except ImportError as e:
            print(f"rasplay: --broker needs the course extra ({e}): pip install 'rasplay[course]'", file=sys.stderr)
            return 1
    try:   # a damaged or unreachable store: one clear line, before serving (migrations are applied here)
        open_store(settings.store, settings.data_dir, settings.max_store_bytes).close()
    except (StoreCorrupt, StoreUnavailable) as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    from .app import ExercisesRefused
    try:
        app = create_app(settings)
    except ExercisesRefused as e:
        for problem in e.problems:
            print(f"rasplay: {problem}", file=sys.stderr)
        print(f"rasplay: {len(e.problems)} exercise file(s) refused; fix them (docs/exercises.md) or move them "
              "out of the folder", file=sys.stderr)
        return 2
    if args.exercises:
        print(f"exercises: {len(app.state.exercises.exercises)} ({', '.join(args.exercises)} checked)", flush=True)
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    banner = f"rasplay is serving at http://{shown_host}:{args.port}/  (API docs: /docs; data: {settings.data_dir})"

    class AnnouncingServer(uvicorn.Server):
        """Prints where rasplay serves only once the port is bound (a port in use prints uvicorn's error)."""

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:
                print(banner, flush=True)

    from .clients import proxies
    from .connections import protocol
    http = protocol(settings.header_seconds, settings.client_connections,
                    proxies(settings.trusted_proxies, settings.proxy_header), settings.proxy_keep_alive_seconds)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, http=http, ws="none",
                            access_log=False, proxy_headers=False, timeout_graceful_shutdown=3)
    server = AnnouncingServer(config)
    server.run()
    return 0 if server.started else 1


def cmd_store_copy(args) -> int:
    from .store_copy import copy_store

    return copy_store(args.source, args.target)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _print_matches(matches: list[dict]) -> None:
    print("selector matches (mean attention mass on the selected keys, per query row that selects):")
    if not matches:
        print("  (the output uses no selectors)")
    width = max((len(m["name"]) for m in matches), default=0)
    for m in matches:
        paired = (f"head {m['head']}: {m['score']:.3f}" if m["head"] is not None and m["score"] is not None
                  else "no head in that layer")
        b = m["best"]
        best = f"   (best: layer {b['layer']} head {b['head']}, {b['score']:.3f})" if b["score"] is not None else ""
        if m.get("score_without_bos") is not None:
            paired += f", {m['score_without_bos']:.3f} without BOS"
        print(f"  layer {m['layer']}  {m['name']:<{width}}  {paired}{best}")


def cmd_train(args) -> int:
    import signal

    from rasplay.engine.train import TrainError, overlay_imported, read_attention, torch_available

    source, load_dirs = _read_program(args.file)
    try:
        if args.import_attention:
            doc = overlay_imported(source, read_attention(args.import_attention), args.output, load_dirs)
            if args.json:
                print(json.dumps(doc, ensure_ascii=False))
            else:
                print(f"{args.import_attention}: {doc['layers']} layers x {doc['heads']} heads on "
                      f"{len(doc['tokens'])} tokens; the program's {doc['output']} needs {doc['program_layers']} layers")
                _print_matches(doc["matches"])
            return 0
        if not torch_available():
            print("rasplay: training needs PyTorch: pip install 'rasplay[train]'", file=sys.stderr)
            return 1
        from rasplay.engine.train import TrainConfig, train

        options = dict(vocab=_parse_vocab(args.vocab), output=args.output, min_len=args.min_len,
                       max_len=args.max_len, bos=not args.no_bos, layers=args.layers, heads=args.heads,
                       d_model=args.d_model, steps=args.steps, time_budget=args.time_budget,
                       batch_size=args.batch_size, lr=args.lr, supervise=args.supervise, seed=args.seed,
                       stop_at=args.stop_at, threads=args.threads)
        if args.example is not None:
            options["example"] = _parse_vocab(args.example) if args.example.startswith("[") else args.example
        config = TrainConfig(**{k: v for k, v in options.items() if v is not None}).validated()
        stop = {"now": False}
        signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))
        last = {"t": -1.0}

        def progress(p):
            if args.json or p["point"] != "eval" or p["elapsed"] - last["t"] < 1.0:
                return
            last["t"] = p["elapsed"]
            print(f"step {p['step']:>6}  {p['elapsed']:7.1f} s  loss {p['loss']:.4f}  train {_pct(p['train_acc'])}"
                  f"  held-out {_pct(p['test_acc'])}  per sequence {_pct(p['test_seq_acc'])}", flush=True)

        result = train(source, config, progress, lambda: stop["now"], load_dirs, init=args.init, save_path=args.o)
    except TrainError as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    m, f = result["model"], result["final"]
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"
    print(f"{result['output']}: {plural(m['n_layers'], 'layer')} x {plural(m['n_heads'], 'head')}, d_model {m['d_model']}, "
          f"{result['params']:,} parameters; {result['steps']} steps in {result['elapsed']:.1f} s "
          f"(stopped: {result['stopped']})")
    d = result["data"]
    best = f" (the best checkpoint, step {f['step']}, kept)" if result.get("last", f)["step"] != f["step"] else ""
    print(f"held-out accuracy: {_pct(f['test_acc'])} per position, {_pct(f['test_seq_acc'])} per sequence{best} "
          f"({d['test']} inputs; trained on {d['train']}; {d['dropped']} sampled inputs dropped)")
    _print_matches(result["matches"])
    ex = result["example"]
    print(f"example: {ex['input']} -> {ex['prediction']} (program: {ex['target']})")
    if args.o:
        print(f"saved the model to {args.o}")
    return 0


def _parse_vocab(text: str):
    """`abc` is three tokens; a JSON list (`[1, 2, 3]`) gives the tokens themselves."""
    if text.lstrip().startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise SystemExit(f"rasplay: --vocab is not a valid JSON list ({e.msg})")
        if not isinstance(value, list):
            raise SystemExit("rasplay: --vocab must be a string of tokens or a JSON list")
        return value
    return text


def _parse_encodings(items) -> dict:
    out = {}
    for item in items or []:
        name, sep, enc = item.partition("=")
        if not sep:
            raise SystemExit(f"rasplay: --encoding takes NAME=categorical|numerical, not {item!r}")
        out[name.strip()] = enc.strip()
    return out


def _print_error(path: str, e) -> None:
    where = path
    if e.span is not None:
        where = (e.span.source if e.span.source != "<program>" else path) + f":{e.span.line}:{e.span.col}"
    print(f"{where}: error: {e.message}", file=sys.stderr)


def cmd_compile(args) -> int:
    from rasplay import engine

    output, limits = args.output, None
    if args.export and args.export[0] != "transformer-lens":
        print(f"rasplay: unknown export format {args.export[0]!r}; the one format is transformer-lens", file=sys.stderr)
        return 2
    if args.tracr:   # FILE.py:NAME, a Tracr program (runs its Python): see docs/interop.md
        from rasplay.interop.cli_tracr import lower_for_compile
        source, lowered_output, limits = lower_for_compile(args, _parse_vocab(args.vocab))
        output, load_dirs = output or lowered_output, None
    else:
        source, load_dirs = _read_program(args.file)
    if args.length_free or args.max_len is None:
        return _compile_length_free(args, source, output, load_dirs, limits)
    try:
        model = engine.compile(source, output, vocab=_parse_vocab(args.vocab), max_len=args.max_len,
                               bos=args.bos, encodings=_parse_encodings(args.encoding), load_dirs=load_dirs,
                               eval_limits=limits, causal=args.causal)
        if args.tracr:   # check() against Tracr's evaluation rules, not the lowered program
            from rasplay.interop.cli_tracr import tracr_model
            model = tracr_model(args, model)
        doc = {"summary": model.summary()}
        if args.check:
            doc["check"] = model.check(seed=args.seed, exhaustive_limit=args.check_limit)
        if args.soft:
            doc["soft"] = model.soft_study(seed=args.seed)
        if args.weights:
            model.export_npz(args.weights)
            doc["weights"] = args.weights
        if args.export:
            fmt, out_dir = args.export
            from rasplay.interop.export_tl import export_transformer_lens
            export_transformer_lens(model, out_dir)
            doc["export"] = {"format": fmt, "dir": out_dir}
    except engine.RaspError as e:
        _print_error(args.file, e)
        return 1
    except OSError as e:
        print(f"rasplay: cannot write {e.filename or args.weights}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug in rasplay: say so, without a traceback
        print(f"{args.file}: internal error: {type(e).__name__}: {e} (please report this)", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        from .text_display import render_compiled
        print(render_compiled(args.file, doc))
    ok = "check" not in doc or doc["check"]["agree"] == doc["check"]["inputs"]
    return 0 if ok else 1


def _compile_length_free(args, source, output, load_dirs, limits) -> int:
    """`rasplay compile --length-free`: a model for every length (docs/every_length.md); --check compares it
    with the evaluator at lengths 1..8 (every input) and 16..4096 (seeded samples)."""
    from rasplay import engine
    from .text_display import render_length_free

    if not args.length_free:
        print("rasplay: compile needs --max-len N (or --length-free)", file=sys.stderr)
        return 2
    if args.export or args.encoding:
        print("rasplay: --export and --encoding apply to max_len models", file=sys.stderr)
        return 2
    try:
        model = engine.compile(source, output, vocab=_parse_vocab(args.vocab), bos=args.bos, load_dirs=load_dirs,
                               eval_limits=limits, causal=args.causal, length_free=True)
        doc = {"summary": model.summary()}
        if args.check:
            doc["check"] = model.check(seed=args.seed)
        if args.soft:
            doc["soft"] = model.soft_study(seed=args.seed)
        if args.weights:
            model.export_npz(args.weights)
            doc["weights"] = args.weights
    except engine.RaspError as e:
        _print_error(args.file, e)
        return 1
    except OSError as e:
        print(f"rasplay: cannot write {e.filename or args.weights}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(doc, ensure_ascii=False) if args.json else render_length_free(args.file, doc))
    return 0 if "check" not in doc or doc["check"]["all_agree"] else 1


def cmd_dialect(args) -> int:
    from rasplay import engine

    source, load_dirs = _read_program(args.file)
    try:
        doc = engine.check_dialect(source, args.output, load_dirs=load_dirs)
    except engine.RaspError as e:
        _print_error(args.file, e)
        return 1
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from .text_display import render_dialect
    print(render_dialect(args.file, doc))
    return 0


def _add_tracr_options(p) -> None:
    p.add_argument("--tracr", action="store_true",
                   help="FILE is a Tracr program, FILE.py:NAME (NAME() returns the s-op) or FILE.py:'make_x(ARGS)'; "
                        "runs its Python")
    p.add_argument("--arg", action="append", metavar="EXPR",
                   help="with --tracr: an argument for NAME (a Python expression; `rasp` in scope); repeatable")
    p.add_argument("--save-rasp", metavar="OUT.rasp", help="with --tracr: write the lowered RASP program")


def _find_exercise(spec: str, folders: list[str]):
    """An exercise by id (shipped, or in --exercises folders) or by the path of its file."""
    from rasplay.engine.exercises import ExerciseError, load_catalog, read_exercise
    from rasplay.engine.exercises.catalog import SUFFIX

    if spec.endswith(SUFFIX) or "/" in spec:
        return read_exercise(Path(spec))
    catalog, problems = load_catalog([Path(d) for d in folders], self_check_extra=False)
    for p in problems:
        print(f"rasplay: {p}", file=sys.stderr)
    exercise = catalog.get(spec)
    if exercise is None:
        known = ", ".join(e.id for e in catalog.ordered())
        raise ExerciseError(spec, f"no such exercise (known: {known})")
    return exercise


def _print_check(path: str, r: dict) -> None:
    mark = {"pass": "PASS", "wrong": "WRONG", "over_budget": "OVER BUDGET", "error": "ERROR"}[r["status"]]
    print(f"{mark}  {r['exercise']}: {r['message']}")
    c = r["counterexample"]
    if c is not None:
        show = lambda v: " ".join("T" if x is True else "F" if x is False else str(x) for x in v) if v else "-"
        print(f"  input:    {c['input'] if isinstance(c['input'], str) else json.dumps(c['input'])}")
        print(f"  expected: {show(c['expected'])}   ({r['target']})")
        print(f"  got:      {c['error'] or show(c['got'])}")
        s = c["sop"]
        if s["name"] != r["target"]:
            print(f"  first wrong s-op: {s['name']} (layer {s['layer']}): expected {show(s['expected'])}, "
                  f"got {s['error'] or show(s['got'])}")
        if s["selector"]:
            print(f"  look at the selector: {s['selector_name'] or s['selector']}")
    b = r["budget"]
    if b is not None:
        parts = [f"{k.replace('_', ' ')} {v['used']}" + (f"/{v['max']}" if v["max"] is not None else "")
                 + ("" if v["ok"] else " (over)") for k, v in b.items() if k != "within"]
        print(f"  budget: {', '.join(parts)}")
    _print_diagnostics(path, [d for d in r["diagnostics"] if d["severity"] == "error"])


def cmd_check(args) -> int:
    from rasplay.engine.exercises import ExerciseError, check

    source, _ = _read_program(args.file)
    try:
        exercise = _find_exercise(args.exercise, args.exercises or [])
        result = check(exercise, source)
    except ExerciseError as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        _print_check(args.file, result)
    return 0 if result["passed"] else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rasplay", description="A visual playground for RASP.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval", help="evaluate a RASP program on inputs")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("-i", "--input", action="append", help="an input (repeat for several)")
    p.add_argument("--input-format", choices=["str", "json"], default="str",
                   help="str: one token per character (default); json: a JSON list of tokens")
    p.add_argument("--names", action="append", help="only these names (comma-separated)")
    p.add_argument("--json", action="store_true", help="print the evaluation document as JSON")
    p.add_argument("--eval-seconds", type=float, default=10.0, help="time limit of the evaluation (default 10)")
    p.add_argument("--memory", default="2GiB", help="memory the evaluation may take (default 2GiB; 0: no limit)")
    _add_tracr_options(p)
    p.add_argument("--vocab", help="with --tracr: the tokens to lower the program for (default: the inputs' tokens)")
    p.add_argument("--max-len", type=int, help="with --tracr: the longest input to lower for (default: the inputs')")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("serve", help="run the playground and its REST API")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="TCP port to listen on (default 8000); "
                   "\"serving at\" is printed once it is bound")
    p.add_argument("--data-dir", help="where share links are stored (default ~/.local/share/rasplay)")
    p.add_argument("--workers", type=int, help="evaluation worker processes (default: 2 per core, 2 to 8)")
    p.add_argument("--cors-origin", action="append", help="allow this origin to call the API (repeatable)")
    p.add_argument("--embed-origin", action="append", type=_embed_origin, metavar="ORIGIN",
                   help="only this site may frame /embed, e.g. https://course.example.edu (repeatable; "
                        "default: any site; other pages can never be framed)")
    p.add_argument("--eval-seconds", type=float, default=5.0, help="time limit of one evaluation (default 5)")
    p.add_argument("--max-input-length", type=int, default=256, help="tokens per input (default 256)")
    p.add_argument("--max-inputs", type=int, default=16, help="inputs per request (default 16)")
    p.add_argument("--max-source-chars", type=int, default=250_000, help="program size (default 250000)")
    p.add_argument("--max-body-bytes", type=int, default=1 << 20, help="request body size (default 1 MiB)")
    p.add_argument("--train-jobs", type=int, help="training jobs at once (default: one per two cores, "
                   "at least two on two cores: a model and its ablation side by side)")
    p.add_argument("--train-warm", type=int, default=2, help="spare training processes kept started with "
                   "PyTorch loaded, so that a job starts at once (default 2: a model and its ablation; 0: none)")
    p.add_argument("--train-queue", type=int, default=4, help="training jobs that may wait (default 4)")
    p.add_argument("--train-seconds", type=float, default=600, help="time limit of a training job (default 600)")
    p.add_argument("--train-orphan-seconds", type=float, default=30, help="a training job that no page follows (no "
                   "event stream, no status asked) for this long is cancelled: its page was closed (default 30)")
    p.add_argument("--train-memory", default="2GiB",
                   help="memory of a training job: estimated before queueing (422 when over) and enforced (default 2GiB)")
    p.add_argument("--queue-seconds", type=float, default=10.0,
                   help="longest wait for a free worker before a 503 (default 10)")
    p.add_argument("--heavy-workers", type=int,
                   help="worker processes for compile/run/soft study/weights (default: half of --workers, at least 1)")
    p.add_argument("--worker-memory", default="1GiB",
                   help="memory one request may take in a worker, over its idle size (default 1GiB; 422 when over)")
    p.add_argument("--worker-keep", default="256MiB",
                   help="memory a worker may keep in caches between requests (default 256MiB)")
    p.add_argument("--client-heavy", type=int, default=2,
                   help="compiler requests one client address may have running at once (default 2; 0: no limit)")
    p.add_argument("--client-workers", type=int, default=0,
                   help="workers of each pool one client address's requests may hold at once; its other requests "
                        "wait in its own queue, clients take turns (default 0: all the workers but one)")
    p.add_argument("--client-jobs", type=int, default=2,
                   help="training jobs one client address may have queued or running (default 2; never all "
                        "the places: one is always left for others)")
    p.add_argument("--writes-per-minute", type=int, default=60,
                   help="new short links and compiled models per client address per minute (default 60; 0: no limit)")
    p.add_argument("--max-store-bytes", default="1GiB", help="size cap of the store of links and models (default 1GiB)")
    p.add_argument("--store", default=os.environ.get("RASPLAY_STORE"), metavar="URL",
                   help="keep links and models in PostgreSQL at this postgresql://... URL, shared by replicas "
                        "(default: $RASPLAY_STORE, else SQLite in --data-dir; needs rasplay[course]; docs/deploy.md)")
    p.add_argument("--redis", default=os.environ.get("RASPLAY_REDIS"), metavar="URL",
                   help="share the per-client write buckets (--writes-per-minute, --checks-per-minute) with the "
                        "other replicas through Redis at this redis://... URL (default: $RASPLAY_REDIS, else "
                        "this server's own; needs rasplay[course]; docs/deploy.md)")
    p.add_argument("--broker", default=os.environ.get("RASPLAY_BROKER"), metavar="URL",
                   help="run training and compiler work in `rasplay worker` processes through Celery with Redis at "
                        "this redis://... URL, shared by replicas (default: $RASPLAY_BROKER, else in this server; "
                        "needs rasplay[course]; docs/deploy.md)")
    p.add_argument("--trusted-proxy", action="append", type=_networks, metavar="ADDRESSES",
                   help="reverse proxies in front of rasplay, e.g. 127.0.0.1,10.0.0.0/8 (repeatable; default: "
                        "$RASPLAY_TRUSTED_PROXY, else none): for their connections the client is the right-most "
                        "address in --proxy-header that is not one of them (docs/security.md)")
    p.add_argument("--proxy-header", choices=["x-forwarded-for", "forwarded"], default="x-forwarded-for",
                   help="the header the trusted proxies write the client's address in (default x-forwarded-for)")
    p.add_argument("--max-response-bytes", default="32MiB",
                   help="size of any one answer, every value counted (default 32MiB; larger is a 422)")
    p.add_argument("--client-pending-bytes", default="128MiB",
                   help="large answers one client address has not read yet, held on disk (default 128MiB; "
                        "more is a 429)")
    p.add_argument("--client-connections", type=int, default=64,
                   help="connections one client address may have open (default 64; more are refused)")
    p.add_argument("--header-seconds", type=float, default=10.0,
                   help="time a request's headers may take to arrive (default 10; then 408 and closed)")
    p.add_argument("--proxy-keep-alive-seconds", type=float, default=130.0,
                   help="idle time after which a trusted proxy's kept-alive connection is closed (default 130: "
                        "above nginx's 60 s and Caddy's 120 s, so the proxy closes it first)")
    p.add_argument("--body-seconds", type=float, default=30.0,
                   help="time a request's body may take to arrive (default 30; then 408)")
    p.add_argument("--send-seconds", type=float, default=30.0,
                   help="time a client may take to read each 64 KiB of an answer (default 30; then closed)")
    p.add_argument("--exercises", action="append", metavar="DIR",
                   help="a folder of .exercise files to offer besides the shipped ones (repeatable); checked at start")
    p.add_argument("--check-seconds", type=float, default=10.0, help="time limit of one exercise check (default 10)")
    p.add_argument("--checks-per-minute", type=int, default=30,
                   help="exercise checks per client address per minute (default 30; 0: no limit)")
    p.add_argument("--log-level", default="warning")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("train", help="train a transformer on a program's task and match its heads to the selectors")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--output", help="the s-op to learn (default: the '# output:' header, else the last s-op)")
    p.add_argument("--vocab", default="abcdefgh", help="input tokens: characters (abc) or a JSON list (default abcdefgh)")
    p.add_argument("--min-len", type=int, default=1, help="shortest input (default 1)")
    p.add_argument("--max-len", type=int, default=16, help="longest input (default 16)")
    p.add_argument("--no-bos", action="store_true", help="no BOS token at position 0")
    p.add_argument("--layers", type=int, help="layers (default: the program's analysis)")
    p.add_argument("--heads", type=int, help="heads per layer (default: the analysis' largest layer)")
    p.add_argument("--d-model", type=int, help="residual width (default 64)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=int, help="training steps (default 2000)")
    budget.add_argument("--time-budget", type=float, help="seconds of training instead of a step count")
    p.add_argument("--batch-size", type=int, help="inputs per step (default 64)")
    p.add_argument("--lr", type=float, help="AdamW learning rate (default 1e-3)")
    p.add_argument("--supervise", action="store_true",
                   help="pull each head's attention towards its selector's pattern (the paper's method)")
    p.add_argument("--stop-at", type=float, help="stop once held-out per-sequence accuracy reaches this (0-1)")
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--threads", type=int, help="CPU threads for torch (default 1)")
    p.add_argument("--example", help="the input whose attention maps are shown (default: a held-out input)")
    p.add_argument("--init", help="start from these weights (.pt or .npz, docs/weights.md), e.g. a compiled model")
    p.add_argument("--import-attention", metavar="MAPS",
                   help="do not train: score attention maps from another tool (.json or .npz) against the selectors")
    p.add_argument("--json", action="store_true", help="print only the result, as one JSON object")
    p.add_argument("-o", metavar="MODEL", help="save the trained model (.pt, or .npz)")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("check", help="check a program against an exercise (exit 0: pass, 1: not yet, 2: bad exercise)")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--exercise", required=True, metavar="ID",
                   help="the exercise: an id (rasplay's own, or in --exercises folders) or a .exercise file")
    p.add_argument("--exercises", action="append", metavar="DIR", help="a folder of .exercise files (repeatable)")
    p.add_argument("--json", action="store_true", help="print the check result as JSON")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("compile", help="compile a RASP program to transformer weights")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--vocab", required=True, help="the input tokens: a string (one per character) or a JSON list")
    p.add_argument("--max-len", type=int, help="the longest input the model must handle (or --length-free)")
    p.add_argument("--length-free", action="store_true",
                   help="weights that do not depend on the length, for a program in the length-free fragment "
                        "(see `rasplay dialect`); --check then compares at lengths 1..8 and 16..4096")
    p.add_argument("--output", help="the s-op to compile (default: the '# output:' header, else the last s-op)")
    p.add_argument("--bos", default="<bos>", help="the BOS token (default <bos>)")
    p.add_argument("--encoding", action="append", metavar="NAME=ENC",
                   help="force an s-op's encoding: categorical or numerical (repeat for several)")
    p.add_argument("--check", action="store_true",
                   help="compare with the evaluator on every input up to --max-len (a seeded sample when there "
                        "are more than --check-limit)")
    p.add_argument("--check-limit", type=int, default=200_000, metavar="N",
                   help="--check tries every input when there are at most N in all (default 200,000)")
    p.add_argument("--causal", action="store_true",
                   help="compile a causal (autoregressive) model: every selector must look only backwards")
    p.add_argument("--soft", action="store_true", help="also run the soft-attention study (smallest exact beta)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample for --check and --soft")
    p.add_argument("--json", action="store_true", help="print one JSON object (summary, check, soft)")
    p.add_argument("-o", dest="weights", metavar="MODEL.npz", help="write the weights and config (.npz)")
    p.add_argument("--export", nargs=2, metavar=("FORMAT", "DIR"),
                   help="also write the model for another tool: `--export transformer-lens DIR` (config.json, "
                        "state_dict.pt/.npz for transformer_lens.HookedTransformer; docs/interop.md)")
    _add_tracr_options(p)
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("store", help="move a store of links and models (e.g. from SQLite to PostgreSQL)")
    store_sub = p.add_subparsers(dest="store_command", required=True)
    q = store_sub.add_parser("copy", help="copy every link and model from one store to another, then count both sides")
    q.add_argument("--from", dest="source", required=True, metavar="STORE",
                   help="a data directory (its links.sqlite3), an SQLite file or a postgresql://... URL")
    q.add_argument("--to", dest="target", required=True, metavar="STORE", help="the same kinds as --from")
    q.set_defaults(func=cmd_store_copy)

    from .celery_app import add_parser as add_worker_parser
    add_worker_parser(sub)

    p = sub.add_parser("dialect", help="which fragments a program belongs to (B-RASP, C-RASP, TL[#], length-free)")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--output", help="the s-op to check (default: the '# output:' header, else the last s-op)")
    p.add_argument("--json", action="store_true", help="print the dialect document as JSON")
    p.set_defaults(func=cmd_dialect)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
