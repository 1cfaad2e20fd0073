r"""Symbolic layer: equations written once in sympy, fast kernels generated from them.

A model writes its equations as sympy expressions inside one function decorated
with :func:`kernels`.  The function returns a dict ``name -> spec`` where a spec is

* :class:`Scalar` ``(args, exprs)`` -- a closed form (one expression or a tuple);
  generates ``name(*args)`` (numba ``njit``) returning a float or a tuple, and for a
  single expression also ``name_v``, a numpy ufunc (``numba.vectorize``).
* :class:`Expectation` ``(var, args, exprs)`` -- Gaussian expectations
  ``E_var[expr]`` approximated by a weighted sum over quadrature nodes; generates
  ``name(zs, ws, *args)`` returning ``sum_k ws[k] * expr(zs[k], *args)`` (a tuple when
  several expressions are given; they share one loop and common subexpressions).
  Nodes come from :mod:`statmech.gaussian` (Gauss--Hermite or piecewise tanh--sinh).

Gradients and Hessians are obtained with :func:`sympy.diff` *inside* the decorated
function, so each equation exists in exactly one place.  The special functions of
the Gaussian core are available as sympy functions with their exact derivatives:
:class:`H`, :class:`LogH`, :class:`InvMills` (G/H), :class:`Gauss` (the density G),
:class:`Log2Cosh`.

Hand-written numba code that calls the generated kernels (a Newton loop, a
quadrature sum) lives in an ordinary ``.py`` module, named in
``@kernels(include=("statmech.model._solver",))``.  Its text is appended to the
generated module, where the kernels are module globals, so the whole numba call
graph is compiled -- and cached -- as one module.  Such a file must be valid Python
that only uses absolute imports; it may declare the kernel names it calls under
``if typing.TYPE_CHECKING:`` for linters and editors (the block is inert at run time).

The generated module is written (atomically) to a cache directory keyed by a hash
of the model's source file, of every included file and of this file, and imported
from there, so numba's ``cache=True`` works and sympy runs only when an equation or
an included kernel changed.  The cache
directory is ``$STATMECH_CACHE_DIR`` or ``~/.cache/statmech`` (a temporary directory
if neither is writable).
"""
from __future__ import annotations

import hashlib
import re
import importlib.util
import inspect
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from .io import atomic_write_text

__all__ = ["H", "LogH", "InvMills", "Gauss", "Log2Cosh", "Scalar", "Expectation", "Code", "kernels",
           "KernelSet", "cache_dir"]


# --------------------------------------------------------------------------- sympy functions
class Gauss(sp.Function):
    """Standard normal density G(x) = exp(-x^2/2)/sqrt(2 pi)."""
    nargs = 1

    def fdiff(self, argindex=1):
        x = self.args[0]
        return -x * Gauss(x)

    def _eval_rewrite_as_exp(self, x, **kw):
        return sp.exp(-x ** 2 / 2) / sp.sqrt(2 * sp.pi)


class H(sp.Function):
    """H(x) = int_x^inf Dz."""
    nargs = 1

    def fdiff(self, argindex=1):
        return -Gauss(self.args[0])

    def _eval_rewrite_as_erfc(self, x, **kw):
        return sp.erfc(x / sp.sqrt(2)) / 2


class InvMills(sp.Function):
    """G(x)/H(x)."""
    nargs = 1

    def fdiff(self, argindex=1):
        x = self.args[0]
        return InvMills(x) * (InvMills(x) - x)

    def _eval_rewrite_as_erfc(self, x, **kw):
        return Gauss(x).rewrite(sp.exp) / H(x).rewrite(sp.erfc)


class LogH(sp.Function):
    """log H(x)."""
    nargs = 1

    def fdiff(self, argindex=1):
        return -InvMills(self.args[0])

    def _eval_rewrite_as_erfc(self, x, **kw):
        return sp.log(H(x).rewrite(sp.erfc))


class Log2Cosh(sp.Function):
    """log(2 cosh x)."""
    nargs = 1

    def fdiff(self, argindex=1):
        return sp.tanh(self.args[0])

    def _eval_rewrite_as_cosh(self, x, **kw):
        return sp.log(2 * sp.cosh(x))


class _Printer(PythonCodePrinter):
    def _print_Gauss(self, e):
        return f"G_nb({self._print(e.args[0])})"

    def _print_H(self, e):
        return f"H_nb({self._print(e.args[0])})"

    def _print_InvMills(self, e):
        return f"inv_mills_nb({self._print(e.args[0])})"

    def _print_LogH(self, e):
        return f"log_H_nb({self._print(e.args[0])})"

    def _print_Log2Cosh(self, e):
        return f"log_2cosh_nb({self._print(e.args[0])})"

    def _print_Pow(self, e, rational=False):
        base, ex = e.args
        if ex == sp.Rational(1, 2):
            return f"math.sqrt({self._print(base)})"
        if ex == -sp.Rational(1, 2):
            return f"(1.0/math.sqrt({self._print(base)}))"
        if ex.is_Integer and 1 < abs(int(ex)) <= 4:
            b = self.parenthesize(base, 100)
            p = "*".join([b] * abs(int(ex)))
            return f"({p})" if ex > 0 else f"(1.0/({p}))"
        return super()._print_Pow(e, rational=rational)


# --------------------------------------------------------------------------- specs
@dataclass(frozen=True)
class Scalar:
    """A closed-form kernel: ``args`` (sympy symbols), ``exprs`` (expr or tuple of exprs)."""
    args: tuple
    exprs: object


@dataclass(frozen=True)
class Expectation:
    """``E_var[exprs]`` as a weighted node sum; ``args`` are the other parameters."""
    var: sp.Symbol
    args: tuple
    exprs: object


@dataclass(frozen=True)
class Code:
    """Verbatim source appended to the generated module after the kernels.

    Kept for user code and quick experiments; statmech itself keeps hand-written
    kernels in real modules and names them in ``@kernels(include=...)``, which
    linters, editors and tracebacks can see.
    """
    source: str


def _as_tuple(exprs):
    if isinstance(exprs, (list, tuple)):
        return tuple(sp.sympify(e) for e in exprs), True
    return (sp.sympify(exprs),), False


def _emit(name, spec, printer):
    exprs, multi = _as_tuple(spec.exprs)
    args = tuple(spec.args)
    names = [printer._print(a) for a in args]
    repl, reduced = sp.cse(list(exprs), symbols=sp.numbered_symbols("_x"), optimizations="basic")
    body = [f"{printer._print(s)} = {printer._print(v)}" for s, v in repl]
    lines = []
    if isinstance(spec, Scalar):
        lines.append("@numba.njit(cache=True, fastmath=False)")
        lines.append(f"def {name}({', '.join(names)}):")
        lines += ["    " + b for b in body]
        outs = [printer._print(r) for r in reduced]
        lines.append("    return " + (", ".join(f"float({o})" for o in outs) if multi else f"float({outs[0]})"))
        if not multi:
            sig = "float64(" + ", ".join(["float64"] * len(args)) + ")"
            lines.append("")
            lines.append(f"@numba.vectorize(['{sig}'], cache=True)")
            lines.append(f"def {name}_v({', '.join(names)}):")
            lines.append(f"    return {name}({', '.join(names)})")
    else:
        var = printer._print(spec.var)
        lines.append("@numba.njit(cache=True, fastmath=False)")
        lines.append(f"def {name}(zs, ws, {', '.join(names)}):")
        acc = [f"_s{i}" for i in range(len(reduced))]
        for a in acc:
            lines.append(f"    {a} = 0.0")
        lines.append("    for _k in range(zs.shape[0]):")
        lines.append("        _w = ws[_k]")
        lines.append("        if _w == 0.0:")
        lines.append("            continue")
        lines.append(f"        {var} = zs[_k]")
        lines += ["        " + b for b in body]
        for a, r in zip(acc, reduced):
            lines.append(f"        {a} += _w * ({printer._print(r)})")
        lines.append("    return " + (", ".join(acc) if multi else acc[0]))
    return "\n".join(lines) + "\n"


_HEADER = '''"""Generated by statmech.symbolic from {origin}. Do not edit: edit the sympy equations."""
import math
import numba
from statmech.gaussian import G_nb, H_nb, inv_mills_nb, log_H_nb, log_2cosh_nb

'''


def _include_path(module):
    """File of the module ``module`` (dotted name), found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ImportError(f"kernel include {module!r} is not a Python source module")
    return Path(spec.origin)


def _include_text(module):
    text = _include_path(module).read_text()
    if re.search(r"^from __future__ import", text, re.M):
        raise ValueError(f"kernel include {module!r} must not use __future__ imports "
                         "(its text is appended to the generated module)")
    if re.search(r"^\s*from \.", text, re.M):
        raise ValueError(f"kernel include {module!r} must use absolute imports only")
    return text


def generate_source(specs, origin="<specs>", include=()):
    """Python source of a numba module implementing ``specs`` (dict name -> spec).

    ``include``: dotted names of hand-written modules whose text follows the kernels.
    """
    printer = _Printer({"fully_qualified_modules": True, "allow_unknown_functions": False})
    parts = [_HEADER.format(origin=origin)]
    for name, spec in specs.items():
        if isinstance(spec, Code):
            continue
        if not isinstance(spec, (Scalar, Expectation)):
            raise TypeError(f"kernel spec for {name!r} must be Scalar, Expectation or Code, got {type(spec)}")
        parts.append(_emit(name, spec, printer))
        parts.append("\n")
    for name, spec in specs.items():
        if isinstance(spec, Code):
            import textwrap
            parts.append(f"# --- {name}\nimport numpy as np\n" + textwrap.dedent(spec.source).strip("\n") + "\n\n")
    for module in include:
        parts.append(f"# {'-' * 70} included from {module}\n{_include_text(module)}\n")
    return "".join(parts)


# --------------------------------------------------------------------------- cache + loading
def cache_dir():
    """The directory where generated kernels live (created if needed)."""
    cand = os.environ.get("STATMECH_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "statmech")
    for d in (cand, os.path.join(tempfile.gettempdir(), f"statmech-cache-{os.getuid()}")):
        try:
            Path(d).mkdir(parents=True, exist_ok=True)
            if os.access(d, os.W_OK):
                return Path(d)
        except OSError:
            continue
    raise OSError("no writable cache directory for generated kernels; set STATMECH_CACHE_DIR")


_SELF_SOURCE = None
_lock = threading.Lock()


def _self_hash():
    global _SELF_SOURCE
    if _SELF_SOURCE is None:
        _SELF_SOURCE = Path(__file__).read_bytes()
    return _SELF_SOURCE


class KernelSet:
    """Lazy namespace of generated kernels (see :func:`kernels`).

    ``key``: a string that identifies specs built at run time (e.g. from a user's model): it
    enters the cache key and the module name, so each distinct ``key`` is generated and compiled
    once, and found in the cache afterwards."""

    def __init__(self, fn, include=(), key=None):
        self._fn = fn
        self._include = tuple(include)
        self._module = None
        self._extra_key = key
        self.__doc__ = fn.__doc__

    def _key(self):
        src_file = inspect.getsourcefile(self._fn)
        h = hashlib.sha256()
        h.update(_self_hash())
        h.update(Path(src_file).read_bytes())
        h.update(self._fn.__qualname__.encode())
        for module in self._include:
            h.update(module.encode())
            h.update(_include_path(module).read_bytes())
        if self._extra_key is not None:
            h.update(self._extra_key.encode())
        return h.hexdigest()[:20], src_file

    def load(self):
        """Generate (if needed) and import the kernel module; returns it."""
        if self._module is not None:
            return self._module
        with _lock:
            if self._module is not None:
                return self._module
            key, src_file = self._key()
            modname = f"statmech_kernels_{self._fn.__module__.replace('.', '_')}_{self._fn.__name__.strip('_')}_{key}"
            path = cache_dir() / "kernels" / f"{modname}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                specs = self._fn()
                atomic_write_text(path, generate_source(specs, origin=f"{self._fn.__module__}.{self._fn.__qualname__}",
                                                        include=self._include))
            if modname in sys.modules:
                self._module = sys.modules[modname]
                return self._module
            spec = importlib.util.spec_from_file_location(modname, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[modname] = mod
            spec.loader.exec_module(mod)
            self._module = mod
            return mod

    def specs(self):
        """The sympy specs (runs the decorated function)."""
        return self._fn()

    def __getattr__(self, name):
        # only reached on the first access of ``name``: the kernel is then cached as an
        # instance attribute, so later calls cost a plain attribute lookup
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self.load(), name)
        setattr(self, name, value)
        return value


def kernels(fn=None, *, include=()):
    """Decorator: ``fn() -> {name: Scalar | Expectation}`` becomes a lazy kernel namespace.

    Attribute access (``K.name``) generates the numba module on first use and returns
    the compiled function.  ``K.specs()`` returns the sympy expressions (for tests
    and documentation).  ``@kernels(include=("pkg.mod",))`` appends the text of the
    hand-written numba modules ``pkg.mod`` to the generated module (see the module
    docstring), so their functions -- which call the kernels -- are attributes too.
    """
    if fn is None:
        return lambda f: KernelSet(f, include)
    return KernelSet(fn, include)
