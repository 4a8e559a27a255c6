"""The exercise file format (docs/exercises.md): a comment header of `# key: value` lines (continuation
lines indented, as in the examples' header), then the starter code after `# --- starter` and the
hidden reference solution after `# --- reference`:

    # title: Reverse
    # task: Write `reverse`: the tokens in reverse order.
    # target: reverse
    # alphabet: abcde
    # lengths: 1-10
    # cases: ["a", "ab", "hello"]
    # max_layers: 2
    # --- starter
    reverse = tokens;
    # --- reference
    reverse = aggregate(select(indices, length - indices - 1, ==), tokens);

Every problem is an ExerciseError naming the file and line.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..dialect import FRAGMENTS

ID_PATTERN = r"^[a-z0-9_]+$"
_KEY = re.compile(r"^#\s*([a-z_]+):\s?(.*)$")
_SECTION = re.compile(r"^#\s*---\s*(starter|reference)\b.*$")


@dataclass(frozen=True)
class CheckLimits:
    """Explicit limits of exercises and their checks (docs/exercises.md)."""
    max_file_bytes: int = 64 * 1024     # one exercise file
    max_inputs: int = 1000              # inputs one check evaluates (cases + generated)
    max_length: int = 64                # tokens per checked input
    max_alphabet: int = 256             # tokens in an alphabet
    max_cases: int = 200                # explicit cases
    seconds: float = 10.0               # wall time of one check (both programs)
    max_exercises: int = 500            # files in one folder


CHECK_LIMITS = CheckLimits()
DEFAULT_INPUTS = 300

KNOWN_KEYS = {
    "title": "the exercise's name",
    "task": "the task in words",
    "target": "the s-op the student must define",
    "order": "position in the gallery (teaching order; smaller first)",
    "tags": "comma-separated tags",
    "alphabet": "the tokens of generated inputs: characters, or a JSON list",
    "lengths": "lengths of generated inputs: N or MIN-MAX",
    "cases": "a JSON list of inputs always checked (edge cases)",
    "inputs": "how many inputs are checked in all (default 300)",
    "seed": "the random seed of the generated inputs",
    "input_format": "str (default) or json (inputs are lists of tokens)",
    "example": "the input shown first in the playground",
    "max_layers": "budget: layers",
    "max_heads_per_layer": "budget: heads in any one layer",
    "max_heads": "budget: heads in all",
    "forbid": "comma-separated names the program must not use (e.g. length)",
    "proof": "auto (default), every_length, lengths or off: proven verdicts (docs/exercises.md)",
    "fragment": "the fragment of RASP the program must be in (a dialect check id, e.g. c-rasp)",
}
PROOF_MODES = ("auto", "every_length", "lengths", "off")


class ExerciseError(Exception):
    """A problem with an exercise file, located to a line when it has one."""

    def __init__(self, path: str, message: str, line: int | None = None):
        self.path, self.message, self.line = path, message, line
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class Budget:
    max_layers: int | None = None
    max_heads_per_layer: int | None = None
    max_heads: int | None = None

    def to_json(self) -> dict:
        return {"max_layers": self.max_layers, "max_heads_per_layer": self.max_heads_per_layer,
                "max_heads": self.max_heads}


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    task: str
    target: str
    starter: str
    reference: str
    alphabet: tuple
    min_length: int
    max_length: int
    cases: tuple = ()
    n_inputs: int = DEFAULT_INPUTS
    seed: int = 0
    input_format: str = "str"
    example: object = None
    budget: Budget = field(default_factory=Budget)
    forbid: tuple[str, ...] = ()
    order: int = 100
    tags: tuple[str, ...] = ()
    proof: str = "auto"       # auto | every_length (asked for: the reference must be provable) | lengths | off
    fragment: str | None = None   # a dialect check fragment id (engine/dialect) the program must be in
    path: str = ""
    digest: str = ""          # of the file's text: keys caches of reference values
    text: str = field(default="", repr=False)   # the whole file (server workers parse it again)

    def public(self) -> dict:
        """Everything a student may see: never the reference."""
        return {
            "id": self.id, "title": self.title, "task": self.task, "target": self.target, "starter": self.starter,
            "order": self.order, "tags": list(self.tags), "input_format": self.input_format,
            "alphabet": list(self.alphabet), "lengths": [self.min_length, self.max_length],
            "cases": [list(c) if isinstance(c, tuple) else c for c in self.cases], "inputs": self.n_inputs,
            "example": self.example, "budget": self.budget.to_json(), "forbid": list(self.forbid),
            "proof": self.proof, "fragment": self.fragment,
            "fragment_name": dict(FRAGMENTS).get(self.fragment) if self.fragment else None,
        }

    def summary(self) -> dict:
        return {k: v for k, v in self.public().items() if k in ("id", "title", "order", "tags", "target", "budget")}


def _header(text: str, path: str) -> tuple[dict[str, tuple[str, int]], dict[str, tuple[str, int]]]:
    """Header keys -> (value, line) and sections -> (text, first line)."""
    header: dict[str, tuple[str, int]] = {}
    sections: dict[str, tuple[list[str], int]] = {}
    current: str | None = None
    key = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _SECTION.match(line.strip())
        if m:
            current = m.group(1)
            if current in sections:
                raise ExerciseError(path, f"a second '# --- {current}' section", number)
            sections[current] = ([], number + 1)
            continue
        if current is not None:
            sections[current][0].append(line)
            continue
        if not line.strip():
            key = None
            continue
        if not line.startswith("#"):
            raise ExerciseError(path, "the header holds only '# key: value' lines; the programs go after "
                                      "'# --- starter' and '# --- reference'", number)
        m = _KEY.match(line)
        if m and not line.startswith("#  "):
            key = m.group(1)
            if key not in KNOWN_KEYS:
                raise ExerciseError(path, f"unknown key '{key}' (known: {', '.join(KNOWN_KEYS)})", number)
            if key in header:
                raise ExerciseError(path, f"the key '{key}' is given twice", number)
            header[key] = (m.group(2).strip(), number)
        elif key is not None and line.strip("# ").strip():
            value, at = header[key]
            header[key] = (f"{value} {line.lstrip('#').strip()}".strip(), at)
        elif line.strip("# ").strip():
            raise ExerciseError(path, "a header line must be '# key: value' (or an indented continuation)", number)
    return header, {k: ("\n".join(lines).strip("\n") + "\n", start) for k, (lines, start) in sections.items()}


def _fragment(header: dict, path: str) -> str | None:
    """The `fragment` field: a fragment of the dialect check, by id or name (any case), as its id."""
    if "fragment" not in header:
        return None
    value, line = header["fragment"]
    for fid, name in FRAGMENTS:
        if value.lower() in (fid, name.lower()):
            return fid
    known = ", ".join(f"{fid} ({name})" for fid, name in FRAGMENTS)
    raise ExerciseError(path, f"unknown fragment {value!r}: the dialect check knows {known}", line)


def _int(path: str, header: dict, key: str, low: int, high: int, default=None):
    if key not in header:
        return default
    value, line = header[key]
    try:
        n = int(value)
    except ValueError:
        raise ExerciseError(path, f"{key} must be a whole number, not {value!r}", line) from None
    if not low <= n <= high:
        raise ExerciseError(path, f"{key} must be between {low} and {high}, not {n}", line)
    return n


def _token_ok(t, input_format: str) -> bool:
    if input_format == "str":
        return isinstance(t, str) and len(t) == 1
    return isinstance(t, (int, float, str)) and not (isinstance(t, float) and t != t)


def _alphabet(header: dict, path: str, input_format: str, limits: CheckLimits) -> tuple:
    """The `alphabet` field: its tokens, each once, in order (empty without the field)."""
    alphabet: tuple = ()
    if "alphabet" in header:
        value, line = header["alphabet"]
        if value.startswith("[") or value.startswith('"'):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError as e:
                raise ExerciseError(path, f"alphabet is not valid JSON ({e.msg})", line) from None
            alphabet = tuple(parsed) if isinstance(parsed, list) else tuple(str(parsed))
        else:
            alphabet = tuple(value)
        bad = [t for t in alphabet if not _token_ok(t, input_format)]   # before deduplicating: a list is unhashable
        if bad:
            what = "single characters" if input_format == "str" else "numbers or strings"
            raise ExerciseError(path, f"alphabet tokens must be {what}; {json.dumps(bad[0])} is not", line)
        alphabet = tuple(dict.fromkeys(alphabet))
        if not alphabet:
            raise ExerciseError(path, "the alphabet is empty", line)
        if len(alphabet) > limits.max_alphabet:
            raise ExerciseError(path, f"the alphabet has {len(alphabet)} tokens; the limit is {limits.max_alphabet}",
                                line)
    return alphabet


def _lengths(header: dict, path: str, alphabet: tuple, limits: CheckLimits) -> tuple[int, int]:
    """The `lengths` field: (MIN, MAX), needed with an alphabet."""
    min_len, max_len = 1, 1
    if "lengths" in header:
        value, line = header["lengths"]
        m = re.match(r"^(\d+)\s*(?:-\s*(\d+))?$", value)
        if not m:
            raise ExerciseError(path, f"lengths must be N or MIN-MAX (e.g. 1-8), not {value!r}", line)
        min_len, max_len = int(m.group(1)), int(m.group(2) or m.group(1))
        if not 1 <= min_len <= max_len <= limits.max_length:
            raise ExerciseError(path, f"lengths must satisfy 1 <= MIN <= MAX <= {limits.max_length}", line)
    elif alphabet:
        raise ExerciseError(path, "an alphabet needs '# lengths: MIN-MAX'")
    return min_len, max_len


def _cases(header: dict, path: str, input_format: str, limits: CheckLimits) -> list:
    """The `cases` field: the explicit inputs, checked against the input format and the limits."""
    cases: list = []
    if "cases" in header:
        value, line = header["cases"]
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as e:
            raise ExerciseError(path, f"cases must be a JSON list of inputs ({e.msg})", line) from None
        if not isinstance(parsed, list):
            raise ExerciseError(path, "cases must be a JSON list of inputs", line)
        if len(parsed) > limits.max_cases:
            raise ExerciseError(path, f"{len(parsed)} cases; the limit is {limits.max_cases}", line)
        for i, case in enumerate(parsed):
            ok_type = isinstance(case, str) if input_format == "str" else isinstance(case, list)
            if not ok_type:
                want = "a string" if input_format == "str" else "a JSON list of tokens (input_format: json)"
                raise ExerciseError(path, f"case {i + 1} must be {want}", line)
            if not 1 <= len(case) <= limits.max_length:
                raise ExerciseError(path, f"case {i + 1} has {len(case)} tokens; 1 to {limits.max_length} allowed",
                                    line)
            if input_format == "json" and not all(_token_ok(t, "json") for t in case):
                raise ExerciseError(path, f"case {i + 1} holds a token that is not a number or string", line)
            cases.append(tuple(case) if isinstance(case, list) else case)
    return cases


def parse_exercise(text: str, exercise_id: str, path: str = "<exercise>",
                   limits: CheckLimits = CHECK_LIMITS) -> Exercise:
    if len(text.encode()) > limits.max_file_bytes:
        raise ExerciseError(path, f"the file is {len(text.encode())} bytes; the limit is {limits.max_file_bytes}")
    if not re.match(ID_PATTERN, exercise_id) or len(exercise_id) > 64:
        raise ExerciseError(path, f"the file name must be lower-case letters, digits and _ (the id), "
                                  f"not {exercise_id!r}")
    header, sections = _header(text, path)
    for key in ("title", "task", "target"):
        if not header.get(key, ("", 0))[0]:
            raise ExerciseError(path, f"the header needs '# {key}:' ({KNOWN_KEYS[key]})")
    if "reference" not in sections or not sections["reference"][0].strip():
        raise ExerciseError(path, "no reference solution: put it after a line '# --- reference'")
    target, target_line = header["target"]
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", target):
        raise ExerciseError(path, f"target must be an s-op name, not {target!r}", target_line)

    input_format, line = header.get("input_format", ("str", 0))
    if input_format not in ("str", "json"):
        raise ExerciseError(path, f"input_format must be str or json, not {input_format!r}", line)

    alphabet = _alphabet(header, path, input_format, limits)
    min_len, max_len = _lengths(header, path, alphabet, limits)
    cases = _cases(header, path, input_format, limits)
    if not alphabet and not cases:
        raise ExerciseError(path, "no inputs: give '# alphabet:' and '# lengths:', or '# cases:'")

    n_inputs = _int(path, header, "inputs", 1, limits.max_inputs, DEFAULT_INPUTS)
    if len(cases) > n_inputs:
        raise ExerciseError(path, f"{len(cases)} cases but only {n_inputs} inputs are checked", header["inputs"][1])
    seed = _int(path, header, "seed", 0, 2**31 - 1, int(hashlib.sha256(exercise_id.encode()).hexdigest()[:7], 16))
    budget = Budget(_int(path, header, "max_layers", 1, 100), _int(path, header, "max_heads_per_layer", 1, 100),
                    _int(path, header, "max_heads", 1, 1000))
    example = header.get("example", ("", 0))[0] or None
    if example is not None and input_format == "json":
        try:
            example = json.loads(example)
        except json.JSONDecodeError as e:
            raise ExerciseError(path, f"example must be a JSON list ({e.msg})", header["example"][1]) from None
    if example is None:
        example = list(cases[0]) if cases and input_format == "json" else (cases[0] if cases else
                                                                          _first_example(alphabet, max_len))
    proof, line = header.get("proof", ("auto", 0))
    if proof not in PROOF_MODES:
        raise ExerciseError(path, f"proof must be one of {', '.join(PROOF_MODES)}, not {proof!r}", line)
    if proof in ("every_length", "lengths") and not alphabet:
        raise ExerciseError(path, f"proof: {proof} needs '# alphabet:' (a proof reads every input)", line)
    starter = sections.get("starter", (f"# define {target} here\n{target} = tokens;\n", 0))[0]
    return Exercise(
        id=exercise_id, title=header["title"][0], task=header["task"][0], target=target, starter=starter,
        reference=sections["reference"][0], alphabet=alphabet, min_length=min_len, max_length=max_len,
        cases=tuple(cases), n_inputs=n_inputs, seed=seed, input_format=input_format, example=example,
        budget=budget, forbid=tuple(n.strip() for n in header.get("forbid", ("", 0))[0].split(",") if n.strip()),
        order=_int(path, header, "order", 0, 10_000, 100),
        tags=tuple(t.strip() for t in header.get("tags", ("", 0))[0].split(",") if t.strip()),
        proof=proof, fragment=_fragment(header, path), path=path, digest=hashlib.sha256(text.encode()).hexdigest(), text=text,
    )


def _first_example(alphabet: tuple, max_len: int):
    tokens = [alphabet[i % len(alphabet)] for i in range(min(max_len, 6))]
    return "".join(tokens) if all(isinstance(t, str) and len(t) == 1 for t in tokens) else tokens


def read_exercise(path: Path, limits: CheckLimits = CHECK_LIMITS) -> Exercise:
    try:
        if path.stat().st_size > limits.max_file_bytes:
            raise ExerciseError(str(path), f"the file is {path.stat().st_size} bytes; the limit is "
                                           f"{limits.max_file_bytes}")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ExerciseError(str(path), f"cannot read the file ({e})") from None
    return parse_exercise(text, path.stem, str(path), limits)
