"""Pass 8, assemble: the `one` dimension (1 at every position) is written by the embedding table with
fewer rows, and the model is exact either way."""
import numpy as np
import pytest

from rasplay import engine


def one_column(model, table):
    one = next(b for b in model.layout if b["name"] == "one")["start"]
    return model.transformer.weights[table][:, one]


@pytest.mark.parametrize("vocab, max_len, writer, other", [
    ("abcdefgh", 3, "pos_emb.weight", "tok_emb.weight"),      # 9 token rows, 4 position rows
    ("ab", 4, "tok_emb.weight", "pos_emb.weight"),            # 3 token rows, 5 position rows
])
def test_one_is_written_by_the_smaller_table_and_the_model_is_exact(vocab, max_len, writer, other):
    src = 'n = selector_width(select(tokens, tokens, ==));\no = n + (tokens == "a");'
    model = engine.compile(src, "o", vocab=vocab, max_len=max_len)
    assert np.all(one_column(model, writer) == 1.0) and not np.any(one_column(model, other))
    r = model.check(exhaustive_limit=1000)
    assert r["exhaustive"] and r["agree"] == r["inputs"] == sum(len(vocab) ** n for n in range(1, max_len + 1))
