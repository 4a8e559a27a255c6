"""A TransformerPrograms-format program written here for the learned-program import and check tests (the
format's helpers from support.transformer_program_text): one closest-match head over positions that reads
the mirror position of an input of length 3 ("<s>" at 0, "</s>" after the input), and a classifier that
outputs the token it read ("a" where it read "<s>" or "</s>": every weight 0, the first class wins the
tie). Against reverse over "ab" it agrees on exactly: "a" at length 1, "aa" at length 2, every input of
length 3."""
from __future__ import annotations

from support.transformer_program_text import HELPERS, csv_text, predicate_text

MIRROR_3 = {1: 3, 2: 2, 3: 1}       # query position -> key position
CLASSES = ["a", "b"]
TOKENS = ["a", "b", "<s>", "</s>"]


def program() -> str:
    body = [
        "def run(tokens):\n",
        "    classifier_weights = pd.read_csv(\"reverse_weights.csv\", index_col=[0, 1], dtype={\"feature\": str})\n",
        "    token_scores = classifier_weights.loc[[(\"tokens\", str(v)) for v in tokens]]\n",
        "    positions = list(range(len(tokens)))\n",
        "    position_scores = classifier_weights.loc[[(\"positions\", str(v)) for v in positions]]\n",
        "    ones = [1 for _ in range(len(tokens))]\n",
        "    one_scores = classifier_weights.loc[[(\"ones\", \"_\") for v in ones]].mul(ones, axis=0)\n",
        predicate_text("predicate_0_0", "position", "position", MIRROR_3),
        "    attn_0_0_pattern = select_closest(positions, positions, predicate_0_0)\n",
        "    attn_0_0_outputs = aggregate(attn_0_0_pattern, tokens)\n",
        "    attn_0_0_output_scores = classifier_weights.loc[[(\"attn_0_0_outputs\", str(v)) for v in attn_0_0_outputs]]\n",
        "    feature_logits = pd.concat([df.reset_index() for df in [token_scores, position_scores, one_scores, "
        "attn_0_0_output_scores]])\n",
        "    logits = feature_logits.groupby(level=0).sum(numeric_only=True).to_numpy()\n",
        "    classes = classifier_weights.columns.to_numpy()\n",
        "    predictions = classes[logits.argmax(-1)]\n",
        "    if tokens[0] == \"<s>\":\n        predictions[0] = \"<s>\"\n",
        "    return predictions.tolist()\n",
    ]
    return HELPERS.format(causal="") + "\n\n" + "".join(body)


def weights() -> str:
    zero = (0.0, 0.0)
    categorical = {"tokens": {t: zero for t in TOKENS}, "positions": {str(p): zero for p in range(5)},
                   "attn_0_0_outputs": {"a": (1.0, 0.0), "b": (0.0, 1.0), "<s>": zero, "</s>": zero}}
    return csv_text(CLASSES, categorical, {"ones": zero})
