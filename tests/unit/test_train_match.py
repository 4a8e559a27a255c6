"""Head-to-selector scores, pairing and imported attention maps (numpy only: no torch needed)."""
import json

import numpy as np
import pytest

from rasplay.engine.train import TrainError, best_pairing, head_scores, overlay_imported, read_attention, validate_attention


REVERSE = "opp_index = length - indices - 1;\nflip = select(indices, opp_index, ==);\nreverse = aggregate(flip, tokens);"


def normalised(sel):
    sel = sel.astype(float)
    return sel / np.maximum(sel.sum(-1, keepdims=True), 1)


def test_perfect_match_scores_one_and_disjoint_zero():
    rng = np.random.default_rng(0)
    sel = rng.random((3, 5, 5)) < 0.4
    sel[:, 0] = False                                   # a row that selects nothing is left out
    perfect = normalised(sel)
    perfect[:, 0] = 1 / 5
    disjoint = normalised(~sel)
    att = np.stack([perfect, disjoint], axis=1)[:, None]   # (E, L=1, H=2, n, n)
    rows = np.ones((3, 5), dtype=bool)
    scores = head_scores(att, sel, rows)
    assert scores.shape == (1, 2)
    assert scores[0, 0] == pytest.approx(1.0) and scores[0, 1] == pytest.approx(0.0)


def test_score_is_the_mean_over_rows_of_the_selected_mass():
    sel = np.array([[[1, 1, 0], [0, 0, 1], [0, 0, 0]]], dtype=bool)
    att = np.array([[0.25, 0.25, 0.5], [0.5, 0.5, 0.0], [1, 0, 0]])[None, None, None]
    assert head_scores(att, sel, np.ones((1, 3), bool))[0, 0] == pytest.approx((0.5 + 0.0) / 2)
    assert np.isnan(head_scores(att, np.zeros_like(sel), np.ones((1, 3), bool))[0, 0])


def test_best_pairing_is_one_to_one():
    scores = np.array([[0.9, 0.8], [0.85, 0.1]])
    assert best_pairing(scores) == [1, 0]               # 0.8 + 0.85 beats 0.9 + 0.1
    assert best_pairing(np.array([[0.2, 0.7, 0.1]])) == [1]
    assert best_pairing(np.array([[0.3], [0.6]])) == [None, 0]
    big = np.random.default_rng(1).random((9, 9))
    pairing = best_pairing(big)
    assert sorted(pairing) == list(range(9))


def imported_reverse(tokens="abcd", bos=False):
    n = len(tokens)
    flip = np.eye(n)[::-1]
    full = np.full((n, n), 1 / n)
    att = np.stack([full[None], flip[None]])            # (2, 1, n, n)
    toks = list(tokens)
    if bos:
        att = np.pad(att, ((0, 0), (0, 0), (1, 0), (1, 0)))
        att[:, :, 0, 0] = 1
        toks = ["<bos>"] + toks
    return {"tokens": toks, "attention": att.tolist(), "bos": bos}


@pytest.mark.parametrize("bos", [False, True])
def test_imported_maps_are_scored_against_the_selectors(bos):
    doc = overlay_imported(REVERSE, imported_reverse(bos=bos))
    assert (doc["layers"], doc["heads"], doc["offset"]) == (2, 1, int(bos))
    by_name = {m["name"]: m for m in doc["matches"]}
    assert by_name["flip"]["score"] == pytest.approx(1.0) and by_name["flip"]["head"] == 0
    assert by_name["full_s"]["score"] == pytest.approx(1.0)
    assert by_name["flip"]["scores"][0][0] < 0.5            # layer 1's uniform head is a poor flip
    assert doc["values"] == ["d", "c", "b", "a"]
    json.dumps(doc)


def test_npz_and_json_files(tmp_path):
    obj = imported_reverse()
    (tmp_path / "m.json").write_text(json.dumps(obj))
    np.savez(tmp_path / "m.npz", tokens=np.array(obj["tokens"]), attention=np.array(obj["attention"]))
    a, b = read_attention(tmp_path / "m.json"), read_attention(tmp_path / "m.npz")
    assert a.tokens == b.tokens == list("abcd") and np.allclose(a.attention, b.attention)
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(TrainError, match="not valid JSON"):
        read_attention(tmp_path / "bad.json")


@pytest.mark.parametrize("change, message", [
    (lambda o: o.pop("tokens"), "no 'tokens' entry"),
    (lambda o: o.pop("attention"), "no 'attention' entry"),
    (lambda o: o.update(tokens=list("abc")), "maps are 4 x 4 but there are 3 tokens"),
    (lambda o: o.update(attention=o["attention"][0]), "must have 4 dimensions"),
    (lambda o: o["attention"][1][0][2].append(0.0), "regular numeric array"),
    (lambda o: o["attention"][1][0].__setitem__(2, [0.5, 0.1, 0, 0]), "layer 2, head 0, row 2 sums to 0.6"),
    (lambda o: o["attention"][0][0].__setitem__(1, [1.5, -0.5, 0, 0]), "is negative"),
    (lambda o: o.update(attention=[[[[1, 0], [0, 1], [0, 1]]]]), "must be square"),
    (lambda o: o.update(tokens=[]), "non-empty list"),
])
def test_import_validation_errors_are_clear(change, message):
    obj = imported_reverse()
    change(obj)
    with pytest.raises(TrainError, match=message.replace("(", r"\(")):
        validate_attention(obj)


def test_bos_mass_counts_as_unselected_unless_skipped():
    sel = np.zeros((1, 3, 3), dtype=bool)
    sel[0, 1:, 1] = True                                  # queries 1, 2 select key 1; position 0 is BOS
    att = np.zeros((1, 1, 1, 3, 3))
    att[..., 0] = 0.5
    att[..., 1] = 0.5
    rows = np.array([[False, True, True]])
    assert head_scores(att, sel, rows)[0, 0] == pytest.approx(0.5)
    assert head_scores(att, sel, rows, skip=1)[0, 0] == pytest.approx(1.0)
