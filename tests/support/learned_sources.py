"""The task program and a learned program in TransformerPrograms' header form that the Learned tab's browser
tests share: the learned one is right from length 2 on (its `back` is the task's `flip`); at length 1 it
reads position 2, the "</s>"."""

TASK = "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);\n"
LEARNED = """# learned: transformer-programs
# bos: <s>
# eos: </s>
# output: rev
back = select(indices, length - indices - 1, ==);
second = select(indices, 2, ==);
rev = aggregate(back, tokens) if length > 3 else aggregate(second, tokens);
"""
