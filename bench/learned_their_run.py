"""Runs TransformerPrograms' own run() (bench/learned_import.py starts it in a subprocess, with the working
directory at their checkout, since run() reads its weights CSV by a relative path): reads a JSON list of
inputs on stdin, prints a JSON list of outputs. Their module prints its examples when loaded; that output
is dropped."""
import contextlib
import importlib.util
import io
import json
import sys

spec = importlib.util.spec_from_file_location("transformer_program", sys.argv[1])
module = importlib.util.module_from_spec(spec)
with contextlib.redirect_stdout(io.StringIO()):
    spec.loader.exec_module(module)
print(json.dumps([module.run(x) for x in json.load(sys.stdin)]))
