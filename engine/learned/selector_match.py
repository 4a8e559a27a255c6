"""Which of a learned program's selectors equal one of the task program's selectors on the inputs a
check ran (engine/learned/check.py): two selectors are equal when their (n, n) patterns are identical
on every input checked, the learned program's BOS/EOS rows and columns dropped. Patterns are compared
a batch at a time (each as one (B, n*n) boolean array), never per position."""
from __future__ import annotations

import numpy as np


class SelectorMatch:
    """Per (learned head, task head): on how many inputs their patterns are identical, of how many."""

    def __init__(self, learned_heads: list[dict], task_heads: list[dict]):
        self.learned = learned_heads
        self.task = task_heads
        self.same = np.zeros((len(learned_heads), len(task_heads)), dtype=np.int64)
        self.compared = np.zeros((len(learned_heads), len(task_heads)), dtype=np.int64)

    def update(self, learned: dict[int, np.ndarray], task: dict[int, np.ndarray]) -> None:
        """Add one batch: selector id -> (B, n, n) patterns of each program (absent when it failed)."""
        flat_task = {sid: a.reshape(len(a), -1) for sid, a in task.items()}
        for i, head in enumerate(self.learned):
            pattern = learned.get(head["selector"])
            if pattern is None:
                continue
            flat = pattern.reshape(len(pattern), -1)
            for j, other in enumerate(self.task):
                theirs = flat_task.get(other["selector"])
                if theirs is None:
                    continue
                self.same[i, j] += int((flat == theirs).all(axis=1).sum())
                self.compared[i, j] += len(flat)

    def report(self) -> list[dict]:
        """Per learned head: its name, label and line, the task heads it equals on every input checked,
        and the task head it agrees with on the most inputs (with that fraction)."""
        rows = []
        for i, head in enumerate(self.learned):
            equal = [self._name(self.task[j]) for j in range(len(self.task))
                     if self.compared[i, j] > 0 and self.same[i, j] == self.compared[i, j]]
            closest = None
            if len(self.task) and self.compared[i].max() > 0:
                fractions = self.same[i] / np.maximum(self.compared[i], 1)
                j = int(np.argmax(fractions))
                closest = {"name": self._name(self.task[j]), "inputs_equal": float(round(fractions[j], 6))}
            rows.append({"name": self._name(head), "label": head["label"], "line": head["line"],
                         "equals": equal, "closest": closest})
        return rows

    @staticmethod
    def _name(head: dict) -> str:
        return head["name"]
