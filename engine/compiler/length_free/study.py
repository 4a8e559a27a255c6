"""Agreement against input length for soft attention: a fixed inverse temperature against the paper's
temperature scaling (beta growing with n), and hard attention as the reference."""
from __future__ import annotations

import numpy as np

from . import runner as R

DEFAULT_LENGTHS = (4, 16, 64, 256, 1024)


def length_study(model, lengths=DEFAULT_LENGTHS, fixed_beta: float = 10.0, samples: int = 16, seed: int = 0,
                 scale: float = 1.0) -> dict:
    """{"lengths", "hard", "fixed", "scaled"}: the fraction of sampled inputs (seeded, `samples` per length)
    on which the model agrees with the evaluator at every position, per attention setting."""
    rng = np.random.default_rng(seed)
    V = len(model.vocab)
    rows = {"hard": [], "fixed": [], "scaled": []}
    for n in lengths:
        idx = rng.integers(0, V, size=(samples, n))
        for key, mode, beta in (("hard", "hard", None), ("fixed", "soft", float(fixed_beta)),
                                ("scaled", "soft", R.temperature_scaled(scale))):
            doc = model.agreement(idx, mode, beta)
            rows[key].append(doc["agree"] / doc["inputs"] if doc["inputs"] else 1.0)
    return {"lengths": list(lengths), "fixed_beta": fixed_beta, "samples": samples, "scaling": f"{2 * scale:g} log(n+2) / gap(n)",
            **rows}
