"""axe-core (the npm package pinned in tests/node/package.json, installed by `make test-deps`) run inside a
page: the WCAG 2.1 A and AA rules, violations of serious or critical impact."""
from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).resolve().parents[1] / "node" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def audit(frame, include: str | None = None) -> list[dict]:
    """The serious and critical violations axe-core finds in the frame's current state (each with its rule,
    impact, help text and the first nodes' selectors)."""
    assert AXE.exists(), f"axe-core is missing ({AXE}): `make test-deps` installs it (npm ci in tests/node)"
    if not frame.evaluate("typeof window.axe === 'object'"):
        frame.evaluate(AXE.read_text() + "\n;window.axe = axe; true")
    result = frame.evaluate("""async ([tags, include]) => {
        const r = await window.axe.run(include ? document.querySelector(include) : document,
                                       { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
        return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 160)) }));
    }""", [TAGS, include])
    return [v for v in result if v["impact"] in ("serious", "critical")]
