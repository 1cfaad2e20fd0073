"""The ``statmech`` command line.

Subcommands are contributed by the modules of :mod:`statmech.commands`: each
defines ``register(subparsers)`` and sets ``func`` (a callable taking the parsed
namespace and returning an exit code) on the parsers it adds.  ``--json`` output is
produced with :func:`emit`; a command printing a replica result uses :func:`emit_result`,
which adds the result's ``rs_stable`` and ``ansatz`` and notes an unstable RS value on stderr.

Exit codes: 0 success, 1 no result (a solver failed to converge, or a NaN or an undocumented
None reached the output), 2 a bad argument (one line on stderr, never a traceback).
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import pkgutil
import sys

import numpy as np

from .errors import ConvergenceError

__all__ = ["main", "build_parser", "emit", "emit_result", "ArgumentParser"]


class _BadArgument(Exception):
    pass


class ArgumentParser(argparse.ArgumentParser):
    """argparse parser whose errors are one line on stderr and exit code 2."""

    def error(self, message):
        raise _BadArgument(f"{self.prog}: error: {message}")


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, (np.floating,)):
        v = float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


# result fields documented as possibly None (SaddlePoint: unknown stability; scm: no full-space check)
_MAY_BE_NONE = frozenset({"hessian_eigenvalues", "replicon", "rs_stable", "site_symmetric_stable",
                          "full_space_stable", "solver"})


def _not_numbers(v, path=""):
    """Where ``v`` (nested dicts, lists, arrays) holds a NaN, or a None outside ``_MAY_BE_NONE``."""
    if v is None:
        return [] if path.rpartition(".")[2] in _MAY_BE_NONE else [path or "(no result)"]
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in _not_numbers(x, f"{path}.{k}" if path else str(k))]
    if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
        return [path] if np.isnan(v).any() else []
    if isinstance(v, (list, tuple, np.ndarray)):
        return [p for i, x in enumerate(np.ravel(v) if isinstance(v, np.ndarray) else v)
                for p in _not_numbers(x, f"{path}[{i}]")]
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return [path]
    return []


def emit(args, data: dict, text: str | None = None):
    """Print ``data`` as JSON when ``args.json`` is set, else ``text`` (or key = value lines).

    Returns 0, or 1 with one line on stderr and nothing on stdout when ``data`` is not a result:
    None, a NaN anywhere in it, or a None in a field that is not documented as optional."""
    bad = _not_numbers(data)
    if bad:
        print(f"statmech: error: no result (NaN or None) in {', '.join(bad[:5])}", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        print(json.dumps(_jsonable(data)))
    elif text is not None:
        print(text)
    else:
        for k, v in _jsonable(data).items():
            print(f"{k} = {v}")
    return 0


def emit_result(args, data: dict, result, text: str | None = None):
    """:func:`emit` for a replica result (a :class:`statmech.saddle.SaddlePoint`): ``data`` gets
    the result's ``rs_stable`` (bool, list of bools, or None = unknown) and ``ansatz``; where RS
    is unstable a one-line note goes to stderr (for JSON as well as text output)."""
    stable = result.rs_stable
    data = {**data, "rs_stable": stable, "ansatz": result.ansatz}
    if result.ansatz == "rs" and stable is not None and not np.all(stable):
        where = "" if np.ndim(stable) == 0 else f" at {int(np.size(stable) - np.count_nonzero(stable))} of {np.size(stable)} points"
        print(f"statmech: note: the replica-symmetric solution is unstable (negative replicon or beyond the AT line){where}; "
              "the RS numbers are not those of the typical state", file=sys.stderr)
    return emit(args, data, text)


def float_or_inf(s):
    """argparse type: a float, accepting 'inf'."""
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if math.isnan(v):
        raise argparse.ArgumentTypeError("NaN is not allowed")
    return v


def build_parser():
    parser = ArgumentParser(
        prog="statmech",
        description="Statistical mechanics of learning: capacities, order parameters, entropies, "
                    "free energies and phase diagrams, with convergence reports.",
        epilog="examples:\n"
               "  statmech perceptron capacity --kappa 0.5 --json\n"
               "  statmech scm transitions --K 5 --activation erf --json\n"
               "  statmech committee capacity --K 3 --activation sign --ansatz rs --json\n"
               "  statmech phase-diagram scm --activation erf --K 2:50 --out scm_erf.json\n"
               "  statmech figures --out figures\n"
               "'statmech COMMAND --help' lists each command's options.  Exit codes: 0 ok, "
               "1 no result (no convergence, NaN), 2 bad argument.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    from . import __version__
    parser.add_argument("--version", action="version", version=f"statmech {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    from . import commands
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{commands.__name__}.{info.name}")
        mod.register(sub)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except _BadArgument as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"statmech: error: {exc}", file=sys.stderr)
        return 2
    except ConvergenceError as exc:
        print(f"statmech: did not converge: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("statmech: interrupted", file=sys.stderr)
        return 130
