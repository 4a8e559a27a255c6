"""The dialect check in plain words: one short line for the page ("Runs at any length when compiled: yes",
or "no guarantee from this program (line 12)"), and the details a student opens on demand (the fragment, the
theorem behind it, why the program is not in the next smaller fragment).

It reads only the dialect document (engine/dialect.py's `check_dialect`): its `length_free` flag, its
`fragments` list (each with `id`, `name`, `member`, `reason` and a place), `smallest_name`, `causal` and
`theorem`. Fragments it does not know by id are read the same way, so new fragments need no change here.
A prediction says what the theorem guarantees and no more: a program outside the length-free fragments
gets "no guarantee from this program", never "fails"."""
from __future__ import annotations

YES = "yes"
NOT_GUARANTEED = "no guarantee"


def _where(entry: dict | None) -> str:
    return f"line {entry['line']}" if entry and entry.get("line") else ""


def _first_outside(fragments: list[dict]) -> dict | None:
    """The fragment that decides "any length": the length-free entry when the document has one, else the
    largest fragment the program is not in."""
    by_id = {f.get("id"): f for f in fragments}
    if "length-free" in by_id:
        return by_id["length-free"]
    outside = [f for f in fragments if not f.get("member")]
    return outside[-1] if outside else None


def summarize(dialect: dict) -> dict:
    """{"any_length", "answer", "line", "headline", "fragment", "theorem", "why", "why_line"}: `headline` is
    the one line the page shows; `why` (with `why_line`) says why the program is not in the next smaller
    fragment, or null when it is in the smallest."""
    fragments = list(dialect.get("fragments") or [])
    any_length = bool(dialect.get("length_free"))
    decider = None if any_length else _first_outside(fragments)
    where = _where(decider)
    answer = YES if any_length else NOT_GUARANTEED
    headline = f"Runs at any length when compiled: {answer}"
    if not any_length:
        headline += f" from this program ({where})" if where else " from this program"
    causal = dialect.get("causal") or {}
    fragment = f"{dialect.get('smallest_name', '?')}{', causal' if causal.get('member') else ''}"
    smaller = [f for f in fragments if not f.get("member")]
    nearest = smaller[-1] if smaller else None
    why = None
    if nearest is not None:
        why = f"Not {nearest.get('name', nearest.get('id'))}{f' ({_where(nearest)})' if _where(nearest) else ''}: " \
              f"{nearest.get('reason') or 'outside it'}."
    return {
        "any_length": any_length,
        "answer": answer,
        "line": decider.get("line") if decider else None,
        "headline": headline,
        "fragment": fragment,
        "theorem": dialect.get("theorem", ""),
        "why": why,
        "why_line": nearest.get("line") if nearest else None,
    }


__all__ = ["summarize", "YES", "NOT_GUARANTEED"]
