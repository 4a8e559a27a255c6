"""Reading Prometheus' text format in tests (GET /metrics)."""
from __future__ import annotations

import re


def sample(text: str, name: str, **labels) -> float | None:
    """The value of one sample in Prometheus' text format (labels in any order), None when absent."""
    for line in text.splitlines():
        if not line.startswith((name + "{", name + " ")):
            continue
        series, value = line.rsplit(" ", 1)
        found = dict(re.findall(r'(\w+)="([^"]*)"', series))
        if all(found.get(k) == str(v) for k, v in labels.items()):
            return float(value)
    return None
