"""Mutation testing with cosmic-ray (the `mutation` extra: pip install -e '.[mutation]'), module by
module, each against only the fast tests that guard it (docs/testing.md). Not part of CI: a full
run takes hours on a 2-core machine.

    python bench/mutation.py                       # every module below
    python bench/mutation.py engine/header.py      # some of them
    python bench/mutation.py --report-only         # the figures of the last sessions
    python bench/mutation.py --retest-survivors engine/header.py   # survivors against the tests as they are now
    python bench/mutation.py --shards 3 server/process_pool.py   # three copies of the tree at once

cosmic-ray mutates the file in place, runs the test command, and puts it back; this script also
restores each module's original text when it stops (Ctrl-C included). With --shards N the module's
pending mutants are dealt to N copies of the tree (bench/mutation/shards/, each with its own virtual
environment, refreshed from this tree's files at each run), which run at once and leave this tree
untouched: for modules whose tests mostly wait (the process pool's), not for CPU-bound ones on 2 cores.

Sessions are kept in
bench/mutation/ (git-ignored) so that an interrupted run resumes where it stopped.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT / "bench" / "mutation"
# (plugins the guarding tests never use are left out: a third of each run's start-up)
PYTEST = (f"{sys.executable} -m pytest -x -q -p no:cacheprovider -p no:schemathesis -p no:benchmark -p no:anyio "
          f"-p no:jaxtyping -p no:typeguard")
EXERCISE_TESTS = ("tests/unit/test_exercise_boundaries.py tests/unit/test_exercise_generate.py tests/unit/test_exercise_grading.py "
                  "tests/unit/test_exercises.py -k 'not cli'")

# module -> the tests that guard it (fast ones only)
MODULES = {
    "engine/header.py": "tests/unit/test_default_output.py tests/unit/test_program_header.py",
    "engine/exercises/format.py": EXERCISE_TESTS,
    "engine/exercises/grading.py": EXERCISE_TESTS,
    "engine/exercises/generate.py": EXERCISE_TESTS,
    "engine/exercises/catalog.py": EXERCISE_TESTS,
    "engine/compiler/plan.py": "tests/unit/test_compiler_plan_names.py tests/unit/test_compiler_heads.py tests/unit/test_compiler_residual.py tests/unit/test_compiler_value_sets.py tests/unit/test_compiler_plan_decisions.py "
                               "tests/unit/test_compiler_sizes.py",
    "interop/tracr_lower.py": "tests/unit/test_tracr_lower.py tests/unit/test_tracr_lower_cases.py tests/unit/test_tracr_api.py",
    "server/quotas.py": "tests/unit/test_quotas.py",
    "server/security.py": "tests/unit/test_security_policies.py",
    "server/store.py": "tests/unit/test_store_sqlite.py",
    "server/process_pool.py": "tests/unit/test_process_pool.py tests/services/test_worker_pool.py tests/services/test_worker_pool_time_limits.py",
}

# Operators left out (docs/testing.md): `|` appears in these modules only in type annotations, which
# `from __future__ import annotations` never evaluates (every such mutant is equivalent); bitwise and
# shift operators as replacements of arithmetic are left out to keep runs feasible.
EXCLUDED_OPERATORS = [
    r"core/ReplaceBinaryOperator_BitOr_.*",
    r"core/ReplaceBinaryOperator_.*_(BitOr|BitAnd|BitXor|LShift|RShift)$",
]


def config_text(module: str, tests: str, timeout: float) -> str:
    excluded = ", ".join(f'"{r}"' for r in EXCLUDED_OPERATORS)
    return (f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {timeout}\nexcluded-modules = []\n'
            f'test-command = "{PYTEST} {tests}"\n\n[cosmic-ray.distributor]\nname = "local"\n\n'
            f'[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n')


def run(*cmd: str) -> str:
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _session(module: str, timeout: float) -> tuple[Path, Path]:
    """The module's cosmic-ray config (written afresh) and session (made, and filtered, once)."""
    stem = module.replace("/", "_").removesuffix(".py")
    config, session = SESSIONS / f"{stem}.toml", SESSIONS / f"{stem}.sqlite"
    config.write_text(config_text(module, MODULES[module], timeout).replace("\\", "\\\\"))
    if not session.exists():
        run(tool("cosmic-ray"), "init", str(config), str(session))
        run(tool("cr-filter-operators"), str(session), str(config))
    return config, session


def mutate(module: str, timeout: float) -> None:
    config, session = _session(module, timeout)
    original = (ROOT / module).read_bytes()
    try:
        subprocess.run([tool("cosmic-ray"), "exec", str(config), str(session)], cwd=ROOT, check=True)
    finally:
        (ROOT / module).write_bytes(original)


def _shard_tree(i: int) -> Path:
    """A copy of this tree (its tracked and not-ignored files, as they are now) with a virtual environment
    whose `rasplay` is that copy; made once, refreshed at each run."""
    import shutil

    tree = SESSIONS / "shards" / f"tree{i}"
    files = run("git", "ls-files", "-co", "--exclude-standard").splitlines()
    for name in files:
        source, target = ROOT / name, tree / name
        if source.is_file() and (not target.exists() or target.read_bytes() != source.read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    python = tree / ".venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(tree / ".venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(tree)], check=True,
                       capture_output=True)
    return tree


def mutate_sharded(module: str, timeout: float, shards: int) -> None:
    """The session's pending mutants dealt to `shards` copies of the tree, run at once, the results merged
    back into the session."""
    stem = module.replace("/", "_").removesuffix(".py")
    config, session = _session(module, timeout)
    with closing(sqlite3.connect(session)) as db:
        pending = [r[0] for r in db.execute("SELECT job_id FROM work_items WHERE job_id NOT IN "
                                            "(SELECT job_id FROM work_results) ORDER BY job_id")]
    runs = []
    for i in range(shards):
        tree = _shard_tree(i)
        share = SESSIONS / "shards" / f"{stem}.{i}.sqlite"
        share.write_bytes(session.read_bytes())
        with closing(sqlite3.connect(share)) as db:
            keep = pending[i::shards]
            db.execute("CREATE TEMP TABLE keep (job_id TEXT)")
            db.executemany("INSERT INTO keep VALUES (?)", [(j,) for j in keep])
            db.execute("DELETE FROM work_results")
            db.execute("DELETE FROM mutation_specs WHERE job_id NOT IN (SELECT job_id FROM keep)")
            db.execute("DELETE FROM work_items WHERE job_id NOT IN (SELECT job_id FROM keep)")
            db.commit()
        shard_config = share.with_suffix(".toml")
        shard_config.write_text(config.read_text().replace(sys.executable, str(tree / ".venv" / "bin" / "python")))
        runs.append((share, subprocess.Popen([tool("cosmic-ray"), "exec", str(shard_config), str(share)], cwd=tree)))
    try:
        for _, process in runs:
            process.wait()
    finally:
        with closing(sqlite3.connect(session)) as db:   # whatever the shards finished counts, even after Ctrl-C
            for share, process in runs:
                process.wait()
                db.execute("ATTACH DATABASE ? AS shard", (str(share),))
                db.execute("INSERT OR REPLACE INTO work_results SELECT * FROM shard.work_results")
                db.commit()
                db.execute("DETACH DATABASE shard")


def retest_survivors(module: str, timeout: float) -> None:
    """Run each surviving mutant again against the tests as they are now (tests written since the session ran)
    and record its new outcome in the session."""
    stem = module.replace("/", "_").removesuffix(".py")
    session = SESSIONS / f"{stem}.sqlite"
    command = f"{PYTEST} {MODULES[module]}"
    original = (ROOT / module).read_bytes()
    with closing(sqlite3.connect(session)) as db:
        survivors = db.execute("SELECT r.job_id, s.operator_name, s.occurrence FROM work_results r "
                               "JOIN mutation_specs s USING (job_id) WHERE r.test_outcome = 'SURVIVED'").fetchall()
        try:
            for job_id, operator, occurrence in survivors:
                # its own process group, so that a time-out also ends the test run cosmic-ray started (left
                # running, such orphans load the machine and make the next mutants time out too)
                proc = subprocess.Popen([tool("cosmic-ray"), "mutate-and-test", module, operator, str(occurrence),
                                         command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
                try:
                    stdout, _ = proc.communicate(timeout=timeout)
                    outcome = json.loads(stdout.strip().splitlines()[-1])["test_outcome"].upper()
                    note = ""
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.communicate()
                    (ROOT / module).write_bytes(original)   # cosmic-ray, killed, could not put it back
                    outcome, note = "KILLED", " (time-out)"   # the tests no longer finish: as cosmic-ray counts it
                db.execute("UPDATE work_results SET test_outcome = ? WHERE job_id = ?", (outcome, job_id))
                db.commit()
                print(f"{module} {operator} {occurrence}: {outcome.lower()}{note}", flush=True)
        finally:
            (ROOT / module).write_bytes(original)


def report(module: str) -> None:
    """Mutants run (the skipped operators not counted), killed and surviving, from the session's database."""
    stem = module.replace("/", "_").removesuffix(".py")
    session = SESSIONS / f"{stem}.sqlite"
    if not session.exists():
        return
    with closing(sqlite3.connect(session)) as db:
        jobs = db.execute("SELECT COUNT(*) FROM work_items").fetchone()[0]
        outcomes = dict(db.execute("SELECT COALESCE(test_outcome, worker_outcome), COUNT(*) FROM work_results "
                                   "GROUP BY 1").fetchall())
    killed, survived = outcomes.get("KILLED", 0), outcomes.get("SURVIVED", 0)
    skipped = outcomes.get("SKIPPED", 0)
    others = sum(outcomes.values()) - killed - survived - skipped   # incompetent, abnormal
    left = jobs - sum(outcomes.values())
    score = f"{100 * killed / (killed + survived):.0f}%" if killed + survived else "-"
    print(f"{module}: {killed + survived} run, {killed} killed, {survived} survived ({score}), {skipped} skipped, "
          f"{others} other, {left} not run yet")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", default=list(MODULES))
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant's test run")
    ap.add_argument("--shards", type=int, default=1,
                    help="run the pending mutants in this many copies of the tree at once (see above)")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--retest-survivors", action="store_true",
                    help="run the surviving mutants of the sessions again against the current tests")
    args = ap.parse_args()
    SESSIONS.mkdir(exist_ok=True)
    for module in args.modules:
        if module not in MODULES:
            ap.error(f"no tests are listed for {module} (known: {', '.join(MODULES)})")
        if args.retest_survivors:
            retest_survivors(module, args.timeout)
        elif args.shards > 1 and not args.report_only:
            mutate_sharded(module, args.timeout, args.shards)
        elif not args.report_only:
            mutate(module, args.timeout)
        report(module)
    return 0


if __name__ == "__main__":
    sys.exit(main())
