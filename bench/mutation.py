"""Mutation testing with cosmic-ray (the `mutation` extra: pip install -e '.[mutation]'), module by
module, each against only the fast tests that guard it (docs/testing.md). Not part of CI: a full
run takes hours on a 2-core machine.

    python bench/mutation.py                       # every module below
    python bench/mutation.py engine/header.py      # some of them
    python bench/mutation.py --report-only         # the figures of the last sessions
    python bench/mutation.py --retest-survivors engine/header.py   # survivors against the tests as they are now

cosmic-ray mutates the file in place, runs the test command, and puts it back; this script also
restores each module's original text when it stops (Ctrl-C included). Sessions are kept in
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
EXERCISE_TESTS = ("tests/test_exercise_boundaries.py tests/test_exercise_generate.py tests/test_exercise_check_units.py "
                  "tests/test_exercises.py -k 'not cli'")

# module -> the tests that guard it (fast ones only)
MODULES = {
    "engine/header.py": "tests/test_default_output.py tests/test_header_fields.py",
    "engine/exercises/format.py": EXERCISE_TESTS,
    "engine/exercises/grading.py": EXERCISE_TESTS,
    "engine/exercises/generate.py": EXERCISE_TESTS,
    "engine/exercises/catalog.py": EXERCISE_TESTS,
    "engine/compiler/plan.py": "tests/test_compiler_plan_names.py tests/test_compiler_passes.py tests/test_compiler_plan_decisions.py "
                               "tests/test_compiler_sizes.py",
    "interop/tracr_lower.py": "tests/test_tracr_lower_units.py tests/test_tracr_lower_cases.py tests/test_tracr_api.py",
    "server/quotas.py": "tests/test_quotas_unit.py",
    "server/security.py": "tests/test_security_unit.py",
    "server/store.py": "tests/test_store_sqlite_unit.py",
    "server/process_pool.py": "tests/test_workers.py tests/test_workers_limits.py",
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


def mutate(module: str, timeout: float) -> None:
    stem = module.replace("/", "_").removesuffix(".py")
    config, session = SESSIONS / f"{stem}.toml", SESSIONS / f"{stem}.sqlite"
    config.write_text(config_text(module, MODULES[module], timeout).replace("\\", "\\\\"))
    original = (ROOT / module).read_bytes()
    try:
        if not session.exists():
            run(tool("cosmic-ray"), "init", str(config), str(session))
            run(tool("cr-filter-operators"), str(session), str(config))
        subprocess.run([tool("cosmic-ray"), "exec", str(config), str(session)], cwd=ROOT, check=True)
    finally:
        (ROOT / module).write_bytes(original)


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
        elif not args.report_only:
            mutate(module, args.timeout)
        report(module)
    return 0


if __name__ == "__main__":
    sys.exit(main())
