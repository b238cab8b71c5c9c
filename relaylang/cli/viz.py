"""`relay viz`: the dataflow graph of a function as a picture (relaylang/viz/).

    relay viz model.relay -o main.svg                      # @main, laid out in Python
    relay viz model.relay --function f -o f.dot            # Graphviz dot text
    relay viz model.relay --after FuseOps -o fused.html    # one self-contained page

The output format is the extension of `-o`: `.dot`, `.svg` or `.html` (pan, zoom,
search, tooltips with each node's source line; nothing fetched from the network).
`--after` is a pipeline as `relay opt -p` reads it, run before drawing (each named pass
runs whatever its opt level). No Graphviz is needed for any format.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, error, parse_file, source_name


def cmd_viz(args: argparse.Namespace) -> int:
    from ..viz import VizError, format_of, graph_of, render
    try:
        fmt = format_of(args.output)
    except VizError as e:
        error(args.output, str(e))
        return EXIT_DIAGNOSTICS
    mod = parse_file(args.file)
    if mod is None:
        return EXIT_DIAGNOSTICS
    try:
        graph = graph_of(mod, args.function, args.after)
    except VizError as e:
        message = str(e)
        if "\n" in message or message.startswith(source_name(args.file) + ":"):
            print(message, file=sys.stderr)        # rendered diagnostics, as relay check
        else:
            error(source_name(args.file), message)
        return EXIT_DIAGNOSTICS
    title = source_name(args.file) + (f" after {args.after}" if args.after else "")
    text = render(graph, fmt, title)
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        error(args.output, f"cannot write file: {e.strerror or e}")
        return EXIT_DIAGNOSTICS
    if not args.quiet:
        print(f"{args.output}: @{args.function}: {len(graph.nodes)} nodes, "
              f"{len(graph.edges)} edges, {len(graph.clusters)} clusters", file=sys.stderr)
    return EXIT_OK


def add_viz_parser(sub: Any) -> None:
    p = sub.add_parser("viz", help="draw a function's dataflow graph (.dot, .svg or .html)",
                       description="Draw the dataflow graph of a function: ops with their "
                       "attributes, edges with tensor types, fused functions as clusters, "
                       "if/match branches as subgraphs. No Graphviz needed.")
    p.add_argument("file", metavar="FILE", help="a .relay file; - for standard input")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the picture to write: OUT.dot, OUT.svg or OUT.html")
    p.add_argument("--function", default="main", metavar="NAME",
                   help="the global function to draw (default: main)")
    p.add_argument("--after", metavar="PASSES",
                   help="run this pipeline first, as `relay opt -p` reads it "
                        "(e.g. FuseOps or FoldConstant,FuseOps{fuse_opt_level=2})")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="do not report what was written (on stderr)")
    p.set_defaults(run=cmd_viz)
