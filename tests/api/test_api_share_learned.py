"""A share link carries the Learned tab's program (issue 34): the link's payload holds the learned program's
text, where it came from, the user's program while the editor shows the learned one and the check's
settings, and comes back unchanged from a short link; a malformed learned part is a 422 naming the field."""
from rasplay.server.links import decode_state

LEARNED = "# learned: transformer-programs\n# bos: <s>\n# output: rev\nrev = aggregate(select_closest(" \
          "select(indices, length - indices, ==)), tokens);\n"
TASK = "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);\n"


def error_of(response, status):
    assert response.status_code == status, response.text
    return response.json()["error"]


def test_a_short_link_gives_back_the_learned_program_and_its_check_settings(api):
    state = {"source": LEARNED, "inputs": ["ab"], "view": "learned",
             "learned": {"source": LEARNED, "origin": "TransformerPrograms: reverse.py", "user_source": TASK,
                         "check": {"vocab": "ab", "max_length": 3, "beyond": 1, "samples": 50, "seed": 7}}}
    made = api.post("/api/v1/share", json={"state": state})
    assert made.status_code == 200, made.text
    r = api.get(made.json()["url"], follow_redirects=False)
    assert r.status_code == 302
    back = decode_state(r.headers["location"][len("/#v1="):])
    assert back == state and back["learned"]["source"] == LEARNED


def test_a_malformed_learned_part_is_refused_naming_the_field(api):
    cases = [({"source": 3}, "state.learned must be an object with a source string"),
             ("text", "state.learned must be an object with a source string"),
             ({"source": "x", "origin": 1}, "state.learned.origin must be a string"),
             ({"source": "x", "check": [1]}, "state.learned.check must be an object"),
             ({"source": "x", "check": {"max_length": "6"}}, "state.learned.check.max_length must be"),
             ({"source": "x", "check": {"max_length": True}}, "state.learned.check.max_length must be"),
             ({"source": "x", "check": {"weights": [0.5]}}, "state.learned.check.weights must be")]
    for part, words in cases:
        error = error_of(api.post("/api/v1/share", json={"state": {"source": "x = 1;", "learned": part}}), 422)
        assert error["kind"] == "validation" and words in error["message"], (part, error)
