"""The `rasplay` command line (imported as `rasplay.cli`; `python -m rasplay.cli` runs it): one module
a command (evaluate, serve, train, exercise (`check`), compile, store, worker, dialect), main.py the parser
and dispatch, common.py what they share (reading a program, printing diagnostics, parsing tokens),
text_display.py the terminal rendering and tracr_option.py the `--tracr FILE.py:NAME` option.

The CLI stands above the engine, the server and interop and imports them inside each command, so that
`rasplay eval` loads neither FastAPI nor torch; nothing below imports the CLI."""
