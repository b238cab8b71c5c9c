"""`relay repl`: an interactive Relay session.

session.py holds the session (module, results, evaluation), commands.py its
`:commands` (optimize.py runs `:opt` through transform/pipeline.py) and reply.py what
both answer; none imports prompt_toolkit. app.py is the terminal front end (prompt, key
bindings, highlighting, completion, history) and command.py adds the `repl` subcommand
to the `relay` command line.
"""
