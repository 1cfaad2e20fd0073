"""``statmech figures``: regenerate every figure into a directory; ``--recompute`` the data."""
from __future__ import annotations


def register(sub):
    p = sub.add_parser("figures", help="regenerate every figure (phase diagrams, learning curves) into --out")
    p.add_argument("--out", default="figures", help="output directory (default: figures)")
    p.add_argument("--only", nargs="*", default=None, metavar="GROUP",
                   help="only these figure groups (module names in statmech.figures)")
    p.add_argument("--list", action="store_true", help="list the figure groups and their data sets, and exit")
    p.add_argument("--workers", type=int, default=None,
                   help="processes for the figure groups and for --recompute (default: the number of cores)")
    p.add_argument("--recompute", nargs="*", default=None, metavar="NAME",
                   help="recompute the simulation data of these data sets or groups (all if none given) "
                        "before drawing their figures")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run --recompute on this dask.distributed scheduler")
    p.add_argument("--data-dir", default=None, help="simulation data directory (default: figures/data)")
    p.add_argument("--small", action="store_true",
                   help="with --recompute: only the cheap calls of each data set (a reproducibility check)")
    p.add_argument("--data-only", action="store_true", help="with --recompute: do not draw figures")
    p.set_defaults(func=run)


def run(args):
    import os
    from .. import figures
    if args.list:
        for name in figures.available():
            print(name, " ".join(s.name for s in figures.data_sets([name]) if s.group == name))
        return 0
    if args.data_dir:
        os.environ["STATMECH_FIGURES_DATA"] = args.data_dir   # read by the group processes too
    only = args.only
    if args.recompute is not None:
        specs = figures.data_sets(args.recompute)
        for p in figures.recompute(args.recompute, directory=args.data_dir, workers=args.workers,
                                   scheduler=args.scheduler, small=args.small):
            print(p)
        if args.data_only or args.small:
            return 0
        only = sorted({s.group for s in specs} & set(only or figures.available()))
    timings = {}
    for p in figures.make_all(args.out, only=only, workers=args.workers, timings=timings):
        print(p)
    for name, (wall, cpu) in sorted(timings.items(), key=lambda kv: -kv[1][0]):
        print(f"# {name}: {wall:.1f} s wall, {cpu:.1f} s cpu")
    return 0
