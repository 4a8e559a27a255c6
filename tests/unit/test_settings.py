"""One declaration per setting (server/settings.py): `rasplay serve` and `rasplay worker` take their
options from it, every setting is a flag and a RASPLAY_* variable, Settings() is what `rasplay serve`
runs with no flags, bounds hold from every source, README's table is the generated one, and no
numeric default is written in cli/."""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from rasplay.cli.main import build_parser
from rasplay.cli.settings_options import as_environment, fields, settings_from
from rasplay.server.settings import Settings, default_train_jobs, default_workers, flag_of, variable
from rasplay.server.settings_doc import markdown_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_rasplay_variables(monkeypatch):
    for name in list(os.environ):
        if name.startswith("RASPLAY_"):
            monkeypatch.delenv(name)


def parsed(*argv: str):
    return build_parser().parse_args(list(argv))


def option_strings(command: str) -> set[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {s for action in sub.choices[command]._actions for s in action.option_strings}


def test_settings_are_what_serve_runs_with_no_flags():
    assert settings_from(parsed("serve"), "serve") == Settings()
    assert settings_from(parsed("worker"), "worker") == Settings()
    s = Settings()
    assert (s.workers, s.train_jobs, s.heavy_pool_size) == (default_workers(), default_train_jobs(),
                                                           max(1, default_workers() // 2))


def test_every_setting_is_a_serve_flag_and_the_worker_takes_the_shared_ones():
    serve = option_strings("serve")
    # only the worker's own stop grace is not the server's (its trainings run in the worker)
    worker_only = {n for n, f in Settings.model_fields.items() if f.json_schema_extra["commands"] == ["worker"]}
    assert worker_only == {"worker_stop_seconds"}
    for name, field in Settings.model_fields.items():
        assert name in worker_only or flag_of(name, field) in serve, name
        assert field.description and field.json_schema_extra["unit"], name
    assert serve - {"-h", "--help"} == {flag_of(n, f) for n, f in Settings.model_fields.items() if n not in worker_only}
    worker = option_strings("worker") - {"-h", "--help", "--queues", "--name"}
    assert worker == {flag_of(n, f) for n, f in fields("worker").items()}
    # the copies that disagreed: both commands take the compile limit and the heavy workers, same defaults
    assert {"--compile-seconds", "--heavy-workers", "--train-seconds", "--broker"} <= worker
    assert "--compile-seconds" in serve


def test_flags_win_over_variables_which_win_over_defaults(monkeypatch):
    monkeypatch.setenv("RASPLAY_EVAL_SECONDS", "7")
    monkeypatch.setenv("RASPLAY_MAX_STORE_BYTES", "2MiB")
    monkeypatch.setenv("RASPLAY_TRUSTED_PROXY", "127.0.0.1, 10.0.0.0/8")
    monkeypatch.setenv("RASPLAY_CORS_ORIGINS", "https://a.example,https://b.example")
    monkeypatch.setenv("RASPLAY_BROKER", "redis://127.0.0.1:6379/1")
    s = settings_from(parsed("serve"), "serve")
    assert (s.eval_seconds, s.max_store_bytes, s.trusted_proxies) == (7.0, 2 << 20, ("127.0.0.1, 10.0.0.0/8",))
    assert s.cors_origins == ("https://a.example", "https://b.example") and s.broker == "redis://127.0.0.1:6379/1"
    s = settings_from(parsed("serve", "--eval-seconds", "3", "--cors-origin", "https://c.example"), "serve")
    assert (s.eval_seconds, s.cors_origins, s.max_store_bytes) == (3.0, ("https://c.example",), 2 << 20)
    monkeypatch.setenv("RASPLAY_EVAL_SECONDS", "")   # an empty variable is unset
    assert Settings().eval_seconds == 5.0


def test_a_value_out_of_bounds_stops_with_one_line_naming_its_source(monkeypatch, capsys):
    with pytest.raises(SystemExit) as stop:
        settings_from(parsed("serve", "--workers", "0"), "serve")
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rasplay: --workers: ") and "greater than or equal to 1" in err[0]
    monkeypatch.setenv("RASPLAY_TRAIN_MEMORY", "lots")
    with pytest.raises(SystemExit):
        settings_from(parsed("worker"), "worker")
    assert "rasplay: $RASPLAY_TRAIN_MEMORY: " in capsys.readouterr().err
    with pytest.raises(SystemExit):   # a URL is never echoed (it may hold a password)
        settings_from(parsed("serve", "--embed-origin", "x"), "serve", store=1)
    assert "not an origin" in capsys.readouterr().err


def test_each_flag_says_its_default_and_variable():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    actions = {a.dest: a for a in sub.choices["serve"]._actions}
    assert "(default 5; $RASPLAY_EVAL_SECONDS)" in actions["eval_seconds"].help
    assert "(default 1GiB; $RASPLAY_MAX_STORE_BYTES)" in actions["max_store_bytes"].help
    assert "$RASPLAY_TRUSTED_PROXY)" in actions["trusted_proxies"].help
    assert variable("broker") == "RASPLAY_BROKER" and variable("store") == "RASPLAY_STORE"


def test_the_worker_hands_its_settings_to_its_queues_in_the_environment(monkeypatch):
    from rasplay.cli import worker

    url = "redis://:secret@127.0.0.1:6379/1"
    settings = settings_from(parsed("worker", "--broker", url, "--compile-seconds", "12"), "worker")
    env = worker.child_environment(settings)
    assert env["RASPLAY_BROKER"] == url and env["RASPLAY_COMPILE_SECONDS"] == "12.0"
    monkeypatch.setattr(os, "environ", {**os.environ, **as_environment(settings, "worker")})
    assert settings_from(parsed("worker"), "worker") == settings   # what a queue's process reads back
    seen = {}
    monkeypatch.setattr(worker, "supervise", lambda env, queues, stop_seconds: seen.update(env=env, queues=queues, stop=stop_seconds) or 0)
    assert worker.run(parsed("worker", "--broker", url)) == 0
    assert seen["queues"] == ["train", "heavy"] and seen["env"]["RASPLAY_BROKER"] == url and seen["stop"] == 60.0


def test_readme_holds_the_generated_settings_table():
    readme = (ROOT / "README.md").read_text()
    assert markdown_table() in readme, "README's settings table is stale: python -m rasplay.server.settings_doc"
    assert "| `--compile-seconds` | `RASPLAY_COMPILE_SECONDS` | 30 | s | > 0 | `serve` / `worker` |" in readme


def numeric_defaults(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            for kw in node.keywords:
                if kw.arg == "default" and isinstance(kw.value, ast.Constant) and \
                        isinstance(kw.value.value, (int, float)) and not isinstance(kw.value.value, bool):
                    found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_numeric_default_in_serve_or_worker_options(tmp_path):
    assert numeric_defaults(ROOT / "cli" / "serve.py") == []
    assert numeric_defaults(ROOT / "cli" / "worker.py") == []
    assert numeric_defaults(ROOT / "cli" / "settings_options.py") == []
    example = tmp_path / "example.py"
    example.write_text('p.add_argument("--x", default="a")\np.add_argument("--n", type=int, default=4)\n')
    assert numeric_defaults(example) == ["example.py:2"]   # the check sees one where there is one
