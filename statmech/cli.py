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
import re
import sys
import warnings

import numpy as np

from .errors import ConvergenceError

__all__ = ["main", "build_parser", "emit", "emit_result", "emit_results", "ArgumentParser"]


class _BadArgument(Exception):
    pass


# an option value that starts with '-' but is a number, a range or a list of numbers
# (``--kappa -1``, ``--kappa -1:2``, ``--kappa -1e-3``, ``--K -inf``): argparse's own pattern
# admits only plain negative numbers, so ``--kappa -1:2`` was read as an unknown option
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf\b)[-+0-9.eE:,infINF]*$")


class ArgumentParser(argparse.ArgumentParser):
    """argparse parser whose errors are one line on stderr and exit code 2, and which takes
    negative numbers and ranges (``-1:2``) as option values."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_VALUE

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
        return None
    return v


# result fields documented as possibly None (SaddlePoint: unknown stability; scm: no full-space check)
_MAY_BE_NONE = frozenset({"hessian_eigenvalues", "replicon", "rs_stable", "stability", "command", "site_symmetric_stable",
                          "full_space_stable", "solver"})


def _not_numbers(v, path="", exempt=frozenset()):
    """Where ``v`` (nested dicts, lists, arrays) holds a NaN or an infinity, or a None outside
    ``_MAY_BE_NONE`` and ``exempt``."""
    if v is None:
        name = re.sub(r"\[\d+\]$", "", path.rpartition(".")[2])
        return [] if name in _MAY_BE_NONE or name in exempt else [path or "(no result)"]
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in _not_numbers(x, f"{path}.{k}" if path else str(k), exempt)]
    if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
        return [path] if not np.isfinite(v).all() else []
    if isinstance(v, (list, tuple, np.ndarray)):
        return [p for i, x in enumerate(np.ravel(v) if isinstance(v, np.ndarray) else v)
                for p in _not_numbers(x, f"{path}[{i}]", exempt)]
    if isinstance(v, (float, np.floating)) and not math.isfinite(v):
        return [path]
    return []


def _has_inf(v):
    vals = v if isinstance(v, (list, tuple)) else [v]
    return any(isinstance(x, float) and math.isinf(x) for x in vals)


def _nullify(v, reasons, used, key=""):
    """``v`` with the non-finite values under a key named in ``reasons`` replaced by None."""
    if isinstance(v, dict):
        return {k: _nullify(x, reasons, used, k) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_nullify(x, reasons, used, key) for x in v]
    if key in reasons and isinstance(v, (float, np.floating)) and not math.isfinite(v):
        used.add(key)
        return None
    return v


def emit(args, data: dict, text: str | None = None, *, null_reasons: dict | None = None):
    """Print ``data`` as JSON when ``args.json`` is set, else ``text`` (or key = value lines).

    Returns 0, or 1 with one line on stderr and nothing on stdout when ``data`` is not a result:
    None, a NaN or an infinity anywhere in it, or a None in a field that is not documented as
    optional.  ``null_reasons`` maps field names whose non-finite value is a documented answer
    (``alpha_d = inf`` at K = inf, the parameter ``K = inf`` itself) to the reason: those go out
    as JSON ``null``, with ``"null_reasons": {field: reason}`` added to the record."""
    used = set()
    # an input given as inf on the command line (--beta inf, --K inf) is echoed as null
    null_reasons = {**{k: f"{k} = inf as given" for k, v in vars(args).items() if _has_inf(v)},
                    **(null_reasons or {})}
    if null_reasons and isinstance(data, dict):
        data = _nullify(data, null_reasons, used)
    bad = _not_numbers(data, exempt=used)
    if bad:
        print(f"statmech: error: no result (NaN, infinity or None) in {', '.join(bad[:5])}", file=sys.stderr)
        return 1
    if used:
        data = {**data, "null_reasons": {k: null_reasons[k] for k in sorted(used)}}
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


def emit_results(args, results, text=None, *, extra=None, null_reasons=None):
    """Print one result, or a list of them, in the command line's one JSON schema.

    One result: ``{"command": ..., **statmech.result.flat(result), **extra}``; several:
    ``{"command": ..., "results": [flat(r) | per-result extra ...], **extra}`` (``extra`` may then be
    a list of dicts, one per result, merged into the records).  Every record carries the result's
    ``converged``, ``residual``, ``iterations``, ``ansatz``, ``rs_stable``, ``error`` and
    ``stability``; the same quantity has the same key in every subcommand.  An unstable RS
    result gets the one-line note on stderr of :func:`emit_result`.  Returns the exit code of
    :func:`emit`.
    """
    from .result import flat
    many = isinstance(results, (list, tuple))
    rs = list(results) if many else [results]
    recs = [flat(r) for r in rs]
    if many and isinstance(extra, (list, tuple)):
        recs = [{**rec, **(e or {})} for rec, e in zip(recs, extra)]
        extra = None
    unstable = [r for r in rs if getattr(r, "ansatz", None) == "rs" and getattr(r, "rs_stable", None) is not None
                and not np.all(r.rs_stable)]
    if unstable:
        print("statmech: note: the replica-symmetric solution is unstable (negative replicon or beyond the AT "
              f"line){'' if len(rs) == 1 else f' for {len(unstable)} of {len(rs)} results'}; the RS numbers are "
              "not those of the typical state", file=sys.stderr)
    head = {"command": getattr(args, "command_name", None)}
    data = {**head, **recs[0], **(extra or {})} if not many else {**head, "results": recs, **(extra or {})}
    return emit(args, data, text, null_reasons=null_reasons)


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
        # the words that name the subcommand ("perceptron capacity"): the leading non-options
        words = []
        for a in argv:
            if a.startswith("-"):
                break
            words.append(a)
        args.command_name = " ".join(words)
        # no warning text on stderr: a command's output is its result or one line of error
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return int(args.func(args) or 0)
    except _BadArgument as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:
        print(f"statmech: error: {exc}", file=sys.stderr)
        return 2
    except ConvergenceError as exc:
        print(f"statmech: did not converge: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("statmech: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:     # the reader went away (statmech ... | head)
        sys.stderr.close()
        return 0
