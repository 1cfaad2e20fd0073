"""``statmech figures``: regenerate every figure into a directory; ``--recompute`` the data.

Examples::

    statmech figures --out figures
    statmech figures --only perceptron scm --workers 2
    statmech figures --recompute algorithms_success --small
    statmech figures --list --json

The figures are files, not solver results: ``--json`` prints ``{"command": "figures", ...}`` with
the paths written (``files``) and the seconds per group (``timings``), or with ``--list`` the
groups and their data sets (``groups``).
"""
from __future__ import annotations

from ..cli import emit


class _LazyChoices:
    """argparse ``choices`` computed on first use (the data-set names need the figure modules)."""

    def __init__(self, fn):
        self._fn, self._values = fn, None

    def _get(self):
        if self._values is None:
            self._values = tuple(self._fn())
        return self._values

    def __contains__(self, x):
        return x in self._get()

    def __iter__(self):
        return iter(self._get())


def _groups():
    from .. import figures
    return figures.available()


def _names():
    from .. import figures
    return sorted(set(figures.available()) | {s.name for s in figures.data_sets()})


def register(sub):
    groups = _groups()
    p = sub.add_parser("figures", help="regenerate every figure (phase diagrams, learning curves) into --out")
    p.add_argument("--out", default="figures", metavar="DIR", help="output directory (default: figures)")
    p.add_argument("--only", nargs="+", default=None, choices=groups, metavar="GROUP",
                   help=f"only these figure groups: {', '.join(groups)}")
    p.add_argument("--list", action="store_true", help="list the figure groups and their data sets, and exit")
    p.add_argument("--workers", type=int, default=None, metavar="WORKERS",
                   help="processes for the figure groups and for --recompute (default: the number of cores)")
    p.add_argument("--recompute", nargs="*", default=None, choices=_LazyChoices(_names), metavar="NAME",
                   help="recompute the simulation data of these data sets or figure groups (all if none given; "
                        "--list names them) before drawing their figures")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run --recompute on the dask.distributed scheduler at this address")
    p.add_argument("--data-dir", default=None, metavar="DIR", help="simulation data directory (default: figures/data)")
    p.add_argument("--small", action="store_true",
                   help="with --recompute: only the cheap calls of each data set (a reproducibility check)")
    p.add_argument("--data-only", action="store_true", help="with --recompute: do not draw figures")
    p.add_argument("--json", action="store_true",
                   help="print one JSON record (the paths written and the seconds per group) instead of the paths")
    p.set_defaults(func=run)


def run(args):
    import os
    from .. import figures
    say = (lambda *a: None) if args.json else print
    if args.list:
        rows = [{"group": name, "data_sets": [s.name for s in figures.data_sets([name]) if s.group == name]}
                for name in figures.available()]
        return emit(args, {"command": args.command_name, "groups": rows},
                    text="\n".join(" ".join([r["group"], *r["data_sets"]]) for r in rows))
    if args.data_dir:
        os.environ["STATMECH_FIGURES_DATA"] = args.data_dir   # read by the group processes too
    only = args.only
    files = []
    if args.recompute is not None:
        specs = figures.data_sets(args.recompute)
        for p in figures.recompute(args.recompute, directory=args.data_dir, workers=args.workers,
                                   scheduler=args.scheduler, small=args.small, progress=not args.json):
            files.append(str(p))
            say(p)
        if args.data_only or args.small:
            return emit(args, {"command": args.command_name, "files": files, "timings": {}}) if args.json else 0
        only = sorted({s.group for s in specs} & set(only or figures.available()))
    timings = {}
    for p in figures.make_all(args.out, only=only, workers=args.workers, timings=timings):
        files.append(str(p))
        say(p)
    if args.json:
        return emit(args, {"command": args.command_name, "files": files,
                           "timings": {k: {"wall_seconds": w, "cpu_seconds": c} for k, (w, c) in timings.items()}})
    for name, (wall, cpu) in sorted(timings.items(), key=lambda kv: -kv[1][0]):
        print(f"# {name}: {wall:.1f} s wall, {cpu:.1f} s cpu")
    return 0
