"""A function of one real variable given in sympy, analysed for its proximal operator.

Losses (as functions of the margin ``u = y h``, of the residual ``y - h`` or of ``h`` at a fixed
label) and separable penalties (functions of one weight ``w``) are the same object to the
solvers: a function ``f(t)`` whose Moreau envelope ``M_V f(a) = min_t f(t) + (t - a)^2/(2V)`` and
proximal operator ``P(a, V) = argmin`` enter the replica equations.  This module takes the sympy
expression apart once:

* **pieces**: ``Max``, ``Min``, ``Abs``, ``Heaviside``, ``sign`` and ``Piecewise`` are rewritten
  as one ``Piecewise``; its conditions give the candidate kinks ``c_j`` (expressions in the
  parameters, ordered at run time); on each piece ``f`` is smooth and ``f'``, ``f''`` come from
  ``sympy.diff``;
* **kind**: ``"convex"`` (every piece convex, continuous, slopes non-decreasing across kinks:
  the prox is single-valued and Lipschitz), ``"step"`` (every piece constant: the margin-counting
  cost and other step functions; the prox jumps at tie points of the candidate envelopes), or
  ``"nonconvex"`` (anything else: ERM refuses it, Gibbs learning accepts it);
* **closed-form prox** on a piece that is a polynomial of degree <= 2 (the solution of the
  linear equation ``P + V f'(P) = a``); other pieces are solved by the safeguarded Newton
  iteration of :mod:`statmech.glm._prox_nb` at every quadrature node;
* **validity** (``ValueError`` naming what is wrong): ``f`` must be real and finite on the real
  line, and ``f(t) + t^2/(2V)`` must be bounded below for every ``V > 0`` (otherwise the
  proximal operator does not exist): ``liminf f(t)/t^2 >= 0`` at both ends.

The checks are made at the parameter values given with the component; the kernels take the
parameters at run time (continuation in a parameter does not recompile).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..gaussian import log_2cosh
from ..symbolic import Log2Cosh

__all__ = ["Fun1D"]

_REWRITE = (sp.Max, sp.Min, sp.Abs, sp.Heaviside, sp.sign)


def _stable(expr):
    """``log(1 + exp(X))`` -> ``X/2 + Log2Cosh(X/2)`` (the same function, evaluated without
    overflow for large X by :func:`statmech.gaussian.log_2cosh_nb`)."""
    def is_softplus(e):
        if not isinstance(e, sp.log):
            return False
        a = e.args[0]
        return isinstance(a, sp.Add) and len(a.args) == 2 and sp.S.One in a.args and \
            any(isinstance(t, sp.exp) for t in a.args)

    def repl(e):
        x = next(t for t in e.args[0].args if isinstance(t, sp.exp)).args[0]
        return x / 2 + Log2Cosh(x / 2)
    return expr.replace(is_softplus, repl)


def _as_piecewise(expr):
    e = expr
    for _ in range(3):
        e2 = e.rewrite(sp.Piecewise)
        e2 = sp.piecewise_fold(e2)
        if e2 == e:
            break
        e = e2
    return e


def _relationals(cond):
    if cond in (sp.true, sp.false) or isinstance(cond, bool):
        return []
    return sorted(cond.atoms(sp.core.relational.Relational), key=sp.default_sort_key)


class Fun1D:
    """Analysis of ``f(var)`` (see the module docstring).

    Parameters
    ----------
    expr : sympy expression in ``var`` and the parameter symbols ``params``
    var : sympy Symbol
    params : tuple of sympy Symbols (the run-time parameters, in order)
    values : dict Symbol -> float (the values used for the checks)
    what : str, the name used in error messages (``"loss"``, ``"penalty"``)
    """

    def __init__(self, expr, var, params, values, what):
        self.var = var
        self.params = tuple(params)
        self.values = dict(values)
        self.what = what
        self.expr = sp.sympify(expr)
        pw = _as_piecewise(self.expr)
        branches = list(pw.args) if isinstance(pw, sp.Piecewise) else [(pw, sp.true)]
        self.pieces = []
        self.conds = []
        for ex, cond in branches:
            if ex.has(sp.Piecewise):
                raise ValueError(f"{what} {self.expr}: nested piecewise definition not understood")
            if isinstance(cond, sp.Eq):      # a single point: irrelevant (lower semicontinuous hull)
                continue
            ex = sp.simplify(ex) if ex.count_ops() < 40 else ex
            self.pieces.append(_stable(ex))
            self.conds.append(cond)
        if not self.pieces:
            raise ValueError(f"{what} {self.expr}: no piece defined on an interval")
        brk = []
        for cond in self.conds:
            for rel in _relationals(cond):
                sol = sp.solve(sp.Eq(rel.lhs, rel.rhs), var, dict=False)
                for s in sol:
                    if s.free_symbols - set(self.params):
                        raise ValueError(f"{what} {self.expr}: kink {s} depends on an unknown symbol")
                    if s not in brk:
                        brk.append(s)
        self.breaks = brk
        self.d1 = [sp.diff(f, var) for f in self.pieces]
        self.d2 = [sp.diff(f, var) for f in self.d1]
        self.constant = [not f.has(var) for f in self.pieces]
        self.closed = [self._closed_prox(f) for f in self.pieces]
        self._check()

    # ------------------------------------------------------------------ closed forms
    def _closed_prox(self, f):
        """``P(a, V)`` on a piece that is a polynomial of degree <= 2 in the variable (else None)."""
        t = self.var
        if not f.is_polynomial(t):
            return None
        poly = sp.Poly(f, t)
        if poly.degree() > 2:
            return None
        c2 = poly.coeff_monomial(t ** 2)
        c1 = poly.coeff_monomial(t)
        a, V = sp.symbols("a V", real=True)
        return (a - V * c1) / (1 + 2 * V * c2)

    # ------------------------------------------------------------------ numeric checks
    def _num(self, e):
        f = sp.lambdify(self.var, e.subs(self.values), modules=[{"Log2Cosh": log_2cosh}, "scipy", "numpy"])
        return lambda x: np.asarray(f(np.asarray(x, dtype=float)), dtype=complex) * np.ones(np.shape(x))

    def numeric_breaks(self):
        out = []
        for b in self.breaks:
            v = complex(sp.N(b.subs(self.values)))
            if abs(v.imag) > 0 or not math.isfinite(v.real):
                continue
            out.append(v.real)
        return sorted(set(out))

    def which(self, x):
        """Index of the piece active at the number ``x`` (the first branch whose condition holds)."""
        for i, cond in enumerate(self.conds):
            c = cond.subs(self.values).subs(self.var, x) if cond is not sp.true else sp.true
            if bool(c):
                return i
        raise ValueError(f"{self.what} {self.expr}: not defined at {self.var} = {x}")

    def intervals(self):
        """[(lo, hi, piece)] at the check values, adjacent equal pieces merged."""
        br = self.numeric_breaks()
        edges = [-math.inf] + br + [math.inf]
        out = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            mid = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else \
                (hi - 1.0 if math.isfinite(hi) else lo + 1.0 if math.isfinite(lo) else 0.0)
            i = self.which(mid)
            if out and out[-1][2] == i:
                out[-1] = (out[-1][0], hi, i)
            else:
                out.append((lo, hi, i))
        return out

    def _check(self):
        what, e = self.what, self.expr
        ivs = self.intervals()
        self.kind = "convex"
        for lo, hi, i in ivs:
            a = lo if math.isfinite(lo) else (hi - 30.0 if math.isfinite(hi) else -30.0)
            b = hi if math.isfinite(hi) else (lo + 30.0 if math.isfinite(lo) else 30.0)
            xs = np.linspace(a, b, 203)[1:-1]
            if not math.isfinite(lo):
                xs = np.concatenate([[a - 1e3, a - 1e6], xs])
            if not math.isfinite(hi):
                xs = np.concatenate([xs, [b + 1e3, b + 1e6]])
            with np.errstate(all="ignore"):
                v = self._num(self.pieces[i])(xs)
                d2 = self._num(self.d2[i])(xs)
            bad = ~np.isfinite(v) | (np.abs(v.imag) > 1e-12 * (1 + np.abs(v.real)))
            if np.any(bad[np.abs(xs) < 1e3]):
                x0 = float(xs[np.argmax(bad)])
                raise ValueError(f"{what} {e} is not a real finite number at {self.var} = {x0:g}: "
                                 f"a {what} must be defined on the whole real line")
            fin = np.isfinite(d2) & (np.abs(xs) < 1e3)
            if np.any(d2.real[fin] < -1e-9 * (1.0 + np.max(np.abs(d2.real[fin])))):
                self.kind = "nonconvex"
        # kinks: continuity and slopes
        for (lo, hi, i), (lo2, hi2, j) in zip(ivs[:-1], ivs[1:]):
            c = hi
            fl = complex(sp.N(self.pieces[i].subs(self.values).subs(self.var, c)))
            fr = complex(sp.N(self.pieces[j].subs(self.values).subs(self.var, c)))
            dl = complex(sp.N(self.d1[i].subs(self.values).subs(self.var, c)))
            dr = complex(sp.N(self.d1[j].subs(self.values).subs(self.var, c)))
            if abs(fl - fr) > 1e-12 * (1 + abs(fl)) or dl.real > dr.real + 1e-12 * (1 + abs(dl)):
                self.kind = "nonconvex"
        if all(self.constant):
            self.kind = "step" if len(ivs) > 1 else "convex"
        # proximal operator exists: f(t) + t^2/(2V) bounded below for every V > 0
        for end, (lo, hi, i) in (("+inf", ivs[-1]), ("-inf", ivs[0])):
            lim = None
            try:
                lim = sp.limit(self.pieces[i].subs(self.values) / self.var ** 2, self.var,
                               sp.oo if end == "+inf" else -sp.oo)
            except Exception:  # noqa: BLE001 -- sympy may fail; fall back to numbers
                lim = None
            if lim is None or lim.has(sp.nan) or not (lim.is_real or lim in (sp.oo, -sp.oo)):
                x = 1e6 if end == "+inf" else -1e6
                with np.errstate(all="ignore"):
                    lim = float(self._num(self.pieces[i])(np.array([x])).real[0]) / x ** 2
            else:
                lim = float(lim) if lim not in (sp.oo, -sp.oo) else (math.inf if lim == sp.oo else -math.inf)
            if lim < 0:
                raise ValueError(
                    f"{what} {e} has no proximal operator: {what}({self.var})/{self.var}^2 -> {lim:g} < 0 as "
                    f"{self.var} -> {end}, so min_t {what}(t) + (t - a)^2/(2V) is unbounded below "
                    f"for V > {(-1 / (2 * lim)) if math.isfinite(lim) else 0:g}")
        self.ivs = ivs
