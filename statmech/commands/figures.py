"""``statmech figures``: regenerate every figure into a directory."""
from __future__ import annotations


def register(sub):
    p = sub.add_parser("figures", help="regenerate every figure (phase diagrams, learning curves) into --out")
    p.add_argument("--out", default="figures", help="output directory (default: figures)")
    p.add_argument("--only", nargs="*", default=None, metavar="MODEL",
                   help="only these figure groups (module names in statmech.figures)")
    p.add_argument("--list", action="store_true", help="list the figure groups and exit")
    p.set_defaults(func=run)


def run(args):
    from ..figures import available, make_all
    if args.list:
        for name in available():
            print(name)
        return 0
    paths = make_all(args.out, only=args.only)
    for p in paths:
        print(p)
    return 0
