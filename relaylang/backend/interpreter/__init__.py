"""The reference interpreter: Relay's semantics, on an explicit-stack machine.

`compiler.py` turns each function body into linear stack-machine code once;
`machine.py` runs that code with explicit task and value stacks (tail calls
replace the current code, so recursion never grows the Python stack);
`values.py` holds the run-time values (closures, ADT values, references);
`executor.py` is the public face: `evaluate` and `create_executor`.
"""
