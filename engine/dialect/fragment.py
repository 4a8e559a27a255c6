"""What a fragment of the dialect check is: its id and name, the features of the walk it lacks (in the order
the reason is given first) and the theorem sentence the page shows for a program whose smallest fragment it is."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fragment:
    id: str
    name: str
    theorem: str
    excludes: tuple = ()       # features of the walk (walk.py) that keep a program out, first reason first
