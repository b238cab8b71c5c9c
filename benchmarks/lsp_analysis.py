"""The language server's analysis after a one-character edit: full vs incremental.

    python benchmarks/lsp_analysis.py [--repeat 9] [--layers 12,27] [--json]

Models: GPT-2 as TVM printed it (gen_models.py), 12 layers (916 lines) and 27
layers (2,041 lines), each one `def @main` in graph form. The edit changes one
character of a literal in a statement halfway down (`1f` -> `2f` in
`%N = add(..., 1f /* ty=float32 */)`): the text is still clean and the
statement keeps its type, the case relaylang/ide/symbols/incremental.py re-analyses alone.

For each model the median of `--repeat` runs of

  full         analyze(edited, incremental=False): parse, type check, index
  incremental  analyze(edited, previous=analysis of the text before the edit)
  enter        analyze(text with a blank line added above that statement, previous=...):
               no token changed, the analysis moves (relaylang/ide/symbols/lines.py)
  fallback     analyze(broken, previous=...) where the edit is a syntax error
               (`1f` -> `1f;`): the incremental path declines, a full analysis runs

and incremental/full. Target (issue 8): incremental under ~40 ms on the
2,041-line model on an idle machine; on a busy one compare the ratio.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))           # this checkout's relaylang
from relaylang.ide.analysis import analyze

sys.path.insert(1, str(ROOT / "benchmarks"))
import gen_models

URI = "file:///gpt2.relay"


def edited_texts(text: str) -> tuple[str, str, str]:
    """(the one-character value edit, a syntax error, Enter above) on a statement halfway
    down."""
    lines = text.split("\n")
    for i in range(len(lines) // 2, len(lines)):
        if lines[i].lstrip().startswith("%") and ", 1f /*" in lines[i]:
            value = lines[:i] + [lines[i].replace(", 1f /*", ", 2f /*", 1)] + lines[i + 1:]
            broken = lines[:i] + [lines[i].replace(", 1f /*", ", 1f; /*", 1)] + lines[i + 1:]
            entered = lines[:i] + [""] + lines[i:]
            return "\n".join(value), "\n".join(broken), "\n".join(entered)
    raise ValueError("no statement with a `1f` literal in the second half")


def median_ms(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def measure(layers: int, repeat: int) -> dict:
    text = gen_models.gpt2_module_text(layers=layers)
    edited, broken, entered = edited_texts(text)
    before = analyze(text, URI, 1)
    after = analyze(edited, URI, 2, before)
    if after.diagnostics or analyze(broken, URI, 3, before).diagnostics == [] \
            or analyze(entered, URI, 4, before).line_map.moves != 1:
        raise RuntimeError("the edits do not give the expected analyses")
    full = median_ms(lambda: analyze(edited, URI, 2, incremental=False), repeat)
    incremental = median_ms(lambda: analyze(edited, URI, 2, before), repeat)
    fallback = median_ms(lambda: analyze(broken, URI, 3, before), repeat)
    enter = median_ms(lambda: analyze(entered, URI, 4, before), repeat)
    return {"layers": layers, "lines": gen_models.count_lines(text),
            "full_ms": round(full, 1), "incremental_ms": round(incremental, 1),
            "enter_ms": round(enter, 1), "fallback_ms": round(fallback, 1),
            "ratio": round(incremental / full, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--layers", default="12,27")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = [measure(int(n), args.repeat) for n in args.layers.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'model':<16}{'lines':>7}{'full ms':>10}{'incr ms':>10}{'ratio':>8}"
          f"{'enter ms':>10}{'fallback ms':>13}")
    for r in results:
        print(f"{'gpt2 ' + str(r['layers']) + ' layers':<16}{r['lines']:>7}{r['full_ms']:>10}"
              f"{r['incremental_ms']:>10}{r['ratio']:>8}{r['enter_ms']:>10}"
              f"{r['fallback_ms']:>13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
