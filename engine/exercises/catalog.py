"""Folders of exercise files: the shipped set (package data `rasplay.exercises`) and a teacher's
folder (`rasplay serve --exercises DIR`), whose files add to it or replace shipped ones of the same id.
A teacher's files are validated when loaded: each must parse and its reference must pass its own
check, within its own budget."""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .grading import check
from .format import CHECK_LIMITS, CheckLimits, Exercise, ExerciseError, read_exercise

SHIPPED_DIR = Path(str(resources.files("rasplay.exercises")))
SUFFIX = ".exercise"


def validate(exercise: Exercise, check_limits: CheckLimits = CHECK_LIMITS) -> None:
    """Raise ExerciseError unless the reference passes its own check (and, for `proof: every_length` or
    `lengths`, unless the reference is inside the fragments that have proofs)."""
    result = check(exercise, exercise.reference, check_limits=check_limits, prove=False)
    if not result["passed"]:
        raise ExerciseError(exercise.path, f"the reference fails its own check: {result['message']}")
    if exercise.proof in ("every_length", "lengths"):
        from ..verify.build import build
        built = build(exercise.reference, exercise.target, exercise.alphabet, "ref")
        if built.program is None:
            raise ExerciseError(exercise.path, f"the file asks for proofs (proof: {exercise.proof}), but the "
                                               f"reference has none: {built.reason}")


def load_directory(directory: Path, check_limits: CheckLimits = CHECK_LIMITS,
                   self_check: bool = True) -> tuple[list[Exercise], list[ExerciseError]]:
    """The exercises of one folder and the problems of the files that were refused."""
    directory = Path(directory)
    if not directory.is_dir():
        return [], [ExerciseError(str(directory), "not a folder")]
    paths = sorted(directory.glob("*" + SUFFIX))
    if len(paths) > check_limits.max_exercises:
        return [], [ExerciseError(str(directory), f"{len(paths)} exercise files; the limit is "
                                                  f"{check_limits.max_exercises}")]
    exercises, problems = [], []
    inside = directory.resolve()
    for path in paths:
        try:
            if not path.resolve().is_relative_to(inside):   # a symlink (or one on its way) leading out
                raise ExerciseError(str(path), f"a link to a file outside {directory} (refused: only the "
                                               "folder's own files are read)")
            exercise = read_exercise(path, check_limits)
            if self_check:
                validate(exercise, check_limits)
            exercises.append(exercise)
        except ExerciseError as e:
            problems.append(e)
    return exercises, problems


@dataclass
class Catalog:
    """Exercises by id, in teaching order (the `order` key, then the title)."""
    exercises: dict[str, Exercise] = field(default_factory=dict)

    def ordered(self) -> list[Exercise]:
        return sorted(self.exercises.values(), key=lambda e: (e.order, e.title.lower()))

    def get(self, exercise_id: str) -> Exercise | None:
        return self.exercises.get(exercise_id)


def load_catalog(extra: list[Path] | tuple = (), check_limits: CheckLimits = CHECK_LIMITS,
                 self_check_extra: bool = True) -> tuple[Catalog, list[ExerciseError]]:
    """The shipped exercises (tested, so not re-checked) plus those of `extra` folders (checked)."""
    shipped, problems = load_directory(SHIPPED_DIR, check_limits, self_check=False)
    catalog = Catalog({e.id: e for e in shipped})
    for directory in extra:
        found, refused = load_directory(Path(directory), check_limits, self_check_extra)
        problems += refused
        catalog.exercises.update({e.id: e for e in found})
    return catalog, problems
