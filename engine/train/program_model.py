"""A constrained transformer whose weights read back as a program (the recipe of Friedman, Wettig and Chen,
"Learning Transformer Programs", NeurIPS 2023; rasplay's own implementation).

The residual stream is a list of *categorical variables*, each a distribution over `d_var` values at
every position: the tokens, the positions, then one new variable per categorical head and per MLP.
Beside them run *numerical variables*: `one` (1 at every position) and one per numerical head.

- A categorical head chooses a query, a key and a value variable and a predicate (for each query value,
  one key value), each by a Gumbel-softmax whose temperature `tau` is annealed towards 0. It attends
  with the closest-match rule of `select_closest` (engine/closest.py): among the keys whose value
  matches, the nearest to the query (the query's own position counting as far as the number of
  matches; ties to the earlier key), and position 0 (BOS) when no key matches; it reads the value
  variable there (`aggregate`).
- A numerical head chooses a query and a key variable and a predicate the same way and sums `one` over
  the matching keys (`aggregate_sum`, a count).
- A categorical MLP is a lookup table over two chosen categorical variables; a numerical MLP a lookup
  table over the count of the numerical head it follows. Each writes a new categorical variable.
- The classifier adds one score vector per (variable, value) and takes the best class.

`hard=True` runs the discrete program: every choice is its argmax, attention is exact closest-match,
tables are their argmax; that is what program_decode.py writes out, and what evaluation scores.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

NEG = -1e9
QUANTUM = 1024   # the discrete program's classifier weights are multiples of 1 / QUANTUM: its sums are exact


@dataclass
class ProgramShape:
    n_tokens: int          # the model's token ids (input vocabulary, BOS, EOS when used)
    n_pos: int             # positions (BOS included)
    n_classes: int
    layers: int = 2
    cat_heads: int = 2     # categorical heads per layer
    num_heads: int = 1     # numerical heads per layer
    mlps: int = 1          # categorical MLPs per layer (and one numerical MLP per numerical head)

    @property
    def d_var(self) -> int:
        return max(self.n_tokens, self.n_pos)

    def n_cat_before(self, layer: int) -> int:
        """Categorical variables the heads of `layer` (from 0) can read."""
        return 2 + layer * (self.cat_heads + self.mlps + self.num_heads)

    @property
    def n_cat(self) -> int:
        return self.n_cat_before(self.layers)

    def to_dict(self) -> dict:
        return asdict(self)


def choose(logits: torch.Tensor, tau: float, hard: bool) -> torch.Tensor:
    """A one-hot choice along the last axis: argmax when hard, else a Gumbel-softmax sample at `tau`."""
    if hard:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    if not torch.is_grad_enabled():
        return F.softmax(logits / tau, dim=-1)
    return F.gumbel_softmax(logits, tau=tau, dim=-1)


def closest_rank(s: torch.Tensor) -> torch.Tensor:
    """(B, T, T) how near key j is to query i among the matches `s` (smaller is nearer), the rule of
    engine/closest.py: |i - j|, and for the query's own position the number of matches (so it wins only
    when no other match is closer than that); equal ranks go to the smaller j."""
    T = s.shape[-1]
    i = torch.arange(T, device=s.device)[:, None]
    j = torch.arange(T, device=s.device)[None, :]
    dist = (i - j).abs().to(s.dtype).expand_as(s)
    own = s.detach().sum(-1, keepdim=True).expand_as(s)
    return torch.where((i == j).expand_as(s), own, dist)


class Predicate(nn.Module):
    """Query, key (and value) variable choices and a predicate: query value -> one key value."""

    def __init__(self, n_vars: int, d_var: int, value_vars: int = 0):
        super().__init__()
        self.q = nn.Parameter(torch.randn(n_vars) * 0.1)
        self.k = nn.Parameter(torch.randn(n_vars) * 0.1)
        self.v = nn.Parameter(torch.randn(value_vars) * 0.1) if value_vars else None
        self.pred = nn.Parameter(torch.randn(d_var, d_var) * 0.5)

    def matches(self, X: torch.Tensor, mask: torch.Tensor, tau: float, hard: bool):
        """X: (V, B, T, D) variables; mask: (B, T) real positions -> (B, T, T) degree to which key j
        satisfies query i's predicate, in [0, 1] (exactly 0/1 when hard)."""
        q = torch.einsum("v,vbtd->btd", choose(self.q, tau, hard), X)
        k = torch.einsum("v,vbtd->btd", choose(self.k, tau, hard), X)
        s = torch.einsum("bid,de,bje->bij", q, choose(self.pred, tau, hard), k)
        return s * mask[:, None, :].to(s.dtype)


class CatHead(Predicate):
    def __init__(self, n_vars: int, d_var: int):
        super().__init__(n_vars, d_var, value_vars=n_vars)

    def forward(self, X, mask, tau: float, hard: bool) -> torch.Tensor:
        s = self.matches(X, mask, tau, hard)
        T = s.shape[-1]
        rank = closest_rank(s)
        if hard:
            score = torch.where(s > 0.5, rank, torch.full_like(s, 4.0 * T + 4))
            best = score.argmin(-1)                                # the first minimum: the smaller j
            best = torch.where(s.sum(-1) > 0.5, best, torch.zeros_like(best))
            att = F.one_hot(best, T).to(s.dtype)
        else:
            none = F.relu(1.0 - s.max(-1).values)                # nothing matches: rest on BOS
            s = torch.cat([s[..., :1] + none[..., None], s[..., 1:]], -1).clamp(0, 1)
            later = torch.arange(T, device=s.device) / (2.0 * T)         # equal ranks: the smaller j first
            score = torch.log(s + 1e-6) - (rank + later) / T
            score = score.masked_fill(~mask[:, None, :], NEG)
            att = F.softmax(score / max(tau, 1e-3), dim=-1)
        v = torch.einsum("v,vbtd->btd", choose(self.v, tau, hard), X)
        return torch.einsum("bij,bjd->bid", att, v)


class NumHead(Predicate):
    def forward(self, X, mask, tau: float, hard: bool) -> torch.Tensor:
        return self.matches(X, mask, tau, hard).sum(-1)      # the sum of `one` over matching keys


class CatMLP(nn.Module):
    """A lookup table over two chosen variables: (value a, value b) -> a new variable's value."""

    def __init__(self, n_vars: int, d_var: int):
        super().__init__()
        self.a = nn.Parameter(torch.randn(n_vars) * 0.1)
        self.b = nn.Parameter(torch.randn(n_vars) * 0.1)
        self.table = nn.Parameter(torch.randn(d_var, d_var, d_var) * 0.5)

    def forward(self, X, tau: float, hard: bool) -> torch.Tensor:
        xa = torch.einsum("v,vbtd->btd", choose(self.a, tau, hard), X)
        xb = torch.einsum("v,vbtd->btd", choose(self.b, tau, hard), X)
        logits = torch.einsum("bta,btc,acd->btd", xa, xb, self.table)
        return choose(logits, tau, hard) if hard else F.softmax(logits / max(tau, 1e-3), -1)


class NumMLP(nn.Module):
    """A lookup table over a count 0..n_pos (longer counts read the last row)."""

    def __init__(self, n_pos: int, d_var: int):
        super().__init__()
        self.table = nn.Parameter(torch.randn(n_pos + 1, d_var) * 0.5)

    def forward(self, count: torch.Tensor, tau: float, hard: bool) -> torch.Tensor:
        top = self.table.shape[0] - 1
        c = count.clamp(0, top)
        lo = c.floor().long()
        hi = (lo + 1).clamp_max(top)
        w = (c - lo.to(c.dtype))[..., None]
        logits = self.table[lo] * (1 - w) + self.table[hi] * w
        return choose(logits, tau, hard) if hard else F.softmax(logits / max(tau, 1e-3), -1)


class ProgramModel(nn.Module):
    def __init__(self, shape: ProgramShape):
        super().__init__()
        self.shape = shape
        D, n = shape.d_var, shape.n_cat_before
        self.cat_heads = nn.ModuleList(nn.ModuleList(CatHead(n(i), D) for _ in range(shape.cat_heads))
                                       for i in range(shape.layers))
        self.num_heads = nn.ModuleList(nn.ModuleList(NumHead(n(i), D) for _ in range(shape.num_heads))
                                       for i in range(shape.layers))
        reads = [n(i) + shape.cat_heads for i in range(shape.layers)]
        self.cat_mlps = nn.ModuleList(nn.ModuleList(CatMLP(reads[i], D) for _ in range(shape.mlps))
                                      for i in range(shape.layers))
        self.num_mlps = nn.ModuleList(nn.ModuleList(NumMLP(shape.n_pos, D) for _ in range(shape.num_heads))
                                      for i in range(shape.layers))
        self.classifier = nn.Parameter(torch.randn(shape.n_cat, D, shape.n_classes) * 0.1)
        self.bias = nn.Parameter(torch.zeros(shape.n_classes))

    def variables(self, ids: torch.Tensor, mask: torch.Tensor, tau: float = 1.0, hard: bool = False):
        """All categorical variables (V, B, T, D) and the counts [(B, T)] of the numerical heads."""
        D = self.shape.d_var
        B, T = ids.shape
        X = [F.one_hot(ids, D).float(), F.one_hot(torch.arange(T, device=ids.device), D).float().expand(B, T, D)]
        counts = []
        for i in range(self.shape.layers):
            stack = torch.stack(X)
            new = [h(stack, mask, tau, hard) for h in self.cat_heads[i]]
            c = [h(stack, mask, tau, hard) for h in self.num_heads[i]]
            stack = torch.stack(X + new)
            new += [m(stack, tau, hard) for m in self.cat_mlps[i]]
            new += [m(x, tau, hard) for m, x in zip(self.num_mlps[i], c)]
            X += new
            counts += c
        return torch.stack(X), counts

    def scores(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The discrete program's classifier weights and bias (float64, multiples of 1 / QUANTUM), so that
        its scores are exact sums whatever their order (the emitted program adds them in its own)."""
        q = lambda w: torch.round(w.detach().double() * QUANTUM) / QUANTUM   # noqa: E731
        return q(self.classifier), q(self.bias)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, tau: float = 1.0, hard: bool = False) -> torch.Tensor:
        X, _ = self.variables(ids, mask, tau, hard)
        if hard:
            W, b = self.scores()
            return torch.einsum("vbtd,vdc->btc", X.double(), W) + b
        return torch.einsum("vbtd,vdc->btc", X, self.classifier) + self.bias
