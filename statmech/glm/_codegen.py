"""One compiled kernel module per model specification (generated from sympy, cached on disk).

:func:`kernels_for` turns a :class:`statmech.glm.Model` and a theory (``"erm"``, ``"gibbs"``,
``"bayes"``) into a :class:`statmech.symbolic.KernelSet` keyed by the canonical text of the
model's expressions (parameters renamed by position: parameter *values* are run-time arguments).
The module holds

* the model's primitives as :class:`statmech.symbolic.Scalar` kernels: the pieces of every
  one-variable function (value, first and second derivative), its kink expressions, its
  conditions, its closed-form prox; the smoothed channel ``Z(y, mu, v)`` with its derivatives;
* the assembly kernels of :mod:`statmech.glm._assembly`;
* small dispatchers (``fn_val(k, i, t, par)`` ...) written by :func:`_dispatch` -- generated
  text, one ``if`` per piece;
* the hand-written numba drivers of the theory (``include=``: :mod:`statmech.glm._prox_nb`,
  :mod:`statmech.glm._erm_nb`, ...), which call those names.

So each distinct model compiles once (numba ``cache=True`` in the generated module) and every
later process loads it from the cache (``$STATMECH_CACHE_DIR`` or ``~/.cache/statmech``).
"""
from __future__ import annotations

import threading

import numpy as np
import sympy as sp

from ..symbolic import Code, Gauss, H, KernelSet, Scalar
from ._assembly import assembly_specs
from ._fun1d import Fun1D
from .spec import h, u, w, y, z

__all__ = ["kernels_for", "ModelLayout"]

_INCLUDE = {
    "erm": ("statmech.glm._prox_nb", "statmech.glm._quad_nb", "statmech.glm._erm_nb"),
}

# term modes of the binary-label ERM channel: the prox variable is the margin u, or h itself
MODE_MARGIN, MODE_H = 0, 1
# channel kinds
CH_BINARY, CH_RANDOM, CH_REAL = 0, 1, 2
# penalty kinds
PEN_RIDGE, PEN_SPHERE, PEN_ISING, PEN_FUN = 0, 1, 2, 3
# cfg layout
C_CHANNEL, C_PENALTY, C_PEN_FID, C_NTERMS, C_LAYER, C_LAM, C_DELTA, C_NFUN = range(8)


class ModelLayout:
    """How a model maps onto the kernels: the one-variable functions, the run-time parameter
    vector (``par``), the channel terms, the configuration integers (``cfg``)."""

    def __init__(self, model, theory):
        self.theory = theory
        self.model = model
        comps = [c for c in (model.loss, model.penalty, model.channel) if c is not None]
        self.psyms = []          # (component, symbol)
        for c in comps:
            for s in c.param_symbols:
                self.psyms.append((c, s))
        self.pg = [sp.Symbol(f"_pg{i}", real=True) for i in range(len(self.psyms))]
        self.funs = []           # Fun1D
        self.terms = []          # (label, fid, s, mode, weight)
        ch = model.channel
        if theory == "erm":
            loss = model.loss
            if loss is None:
                raise ValueError("erm: the model has no loss (give Model(..., loss=...))")
            sub = self._sub(loss)
            if ch.labels == "real":
                f = loss.residual_function()
                if f is None:
                    raise ValueError(f"erm: with real labels (linear channel) the loss must be a function of "
                                     f"y - h; {loss.name} = {loss.expr} is not")
                self.funs.append(self._fun(f.xreplace(sub), u, loss, "loss"))
                self.terms.append((0, 0, 1, MODE_MARGIN, 1.0))
            else:
                f = loss.margin_function()
                if f is not None:
                    self.funs.append(self._fun(f.xreplace(sub), u, loss, "loss"))
                    if ch.symmetric:
                        self.terms.append((1, 0, 1, MODE_MARGIN, 2.0))
                    else:
                        self.terms += [(1, 0, 1, MODE_MARGIN, 1.0), (-1, 0, -1, MODE_MARGIN, 1.0)]
                else:
                    t = sp.Symbol("t", real=True)
                    for lab in (1, -1):
                        g = loss.expr.subs(y, lab).subs(h, t).xreplace(sub).subs(t, u)
                        self.funs.append(self._fun(g, u, loss, f"loss at y = {lab}"))
                        self.terms.append((lab, len(self.funs) - 1, 1, MODE_H, 1.0))
            for k, f in enumerate(self.funs):
                if f.kind == "nonconvex":
                    raise ValueError(f"erm: the {f.what} {loss.expr} is not convex and not a step function: its "
                                     "proximal operator is not single-valued on intervals the solver can find; "
                                     "use glm.gibbs for non-convex costs")
            pen = model.penalty
            self.pen_fid = -1
            if pen.constraint == "spherical":
                self.pen_kind = PEN_SPHERE
            elif pen.constraint == "ising":
                self.pen_kind = PEN_ISING
            elif pen.is_ridge():
                self.pen_kind = PEN_RIDGE
            else:
                self.pen_kind = PEN_FUN
                self.funs.append(self._fun(pen.expr.xreplace(self._sub(pen)).subs(w, u), u, pen, "penalty"))
                self.pen_fid = len(self.funs) - 1
                if self.funs[-1].kind != "convex":
                    raise ValueError(f"erm: the penalty {pen.expr} must be convex")
        self.channel_kind = {"binary": CH_BINARY, "random": CH_RANDOM, "real": CH_REAL}[ch.labels]

    def _sub(self, comp):
        return {s: self.pg[i] for i, (c, s) in enumerate(self.psyms) if c is comp}

    def _fun(self, expr, var, comp, what):
        sub = self._sub(comp)
        vals = {self.pg[i]: comp.values[s] for i, (c, s) in enumerate(self.psyms) if c is comp}
        return Fun1D(expr, var, tuple(sub.values()), vals, what)

    # ---------------------------------------------------------------- run-time arrays
    def par(self):
        return np.array([c.values[s] for c, s in self.psyms], dtype=float)

    def cfg(self):
        lam_i = -1
        if self.theory == "erm" and self.pen_kind == PEN_RIDGE:
            s = self.model.penalty.param_symbols[0]
            lam_i = next(i for i, (c, t) in enumerate(self.psyms) if c is self.model.penalty and t is s)
        d_i = -1
        if self.model.channel.labels == "real":
            d_i = next(i for i, (c, t) in enumerate(self.psyms) if c is self.model.channel)
        layer = 1 if self.model.channel.labels == "binary" else 0
        return np.array([self.channel_kind, getattr(self, "pen_kind", 0), getattr(self, "pen_fid", -1),
                         len(self.terms), layer, lam_i, d_i, len(self.funs)], dtype=np.int64)

    def term_arrays(self):
        t = np.array([[a, b, c, d] for a, b, c, d, _ in self.terms], dtype=np.int64).reshape(-1, 4)
        wt = np.array([e for *_, e in self.terms], dtype=float)
        return t, wt

    # ---------------------------------------------------------------- kernel specs
    def specs(self):
        asm, counts = assembly_specs()
        specs = dict(asm)
        self.counts = counts
        pg = tuple(self.pg)
        t = sp.Symbol("t", real=True)
        a, V = sp.symbols("a V", real=True)
        lines = []
        for k, f in enumerate(self.funs):
            fa = tuple(f.params)
            for i, ex in enumerate(f.pieces):
                specs[f"f{k}_{i}"] = Scalar((t, *fa), tuple(e.subs(f.var, t) for e in (ex, f.d1[i], f.d2[i])))
                if f.closed[i] is not None:
                    specs[f"f{k}_c{i}"] = Scalar((a, V, *fa), (f.closed[i],))
            for j, b in enumerate(f.breaks):
                specs[f"f{k}_b{j}"] = Scalar(fa, (b,))
            rels = []
            for cond in f.conds:
                for rel in (cond.atoms(sp.core.relational.Relational) if cond is not sp.true else ()):
                    if rel not in rels:
                        rels.append(rel)
            for j, rel in enumerate(rels):
                specs[f"f{k}_r{j}"] = Scalar((t, *fa), ((rel.lhs - rel.rhs).subs(f.var, t),))
            f._rels = rels
        mu, v = sp.Symbol("mu", real=True), sp.Symbol("v", positive=True)
        ch = self.model.channel
        if ch.labels != "real":
            zs = ch.zstar
            if zs is None:
                raise ValueError(f"channel {ch.name}: no closed-form Gaussian smoothing (custom channels need "
                                 "zstar=...; the numerical smoothing is not implemented)")
            zs = sp.sympify(zs).subs({sp.Symbol("mu", real=True): mu, sp.Symbol("v", positive=True): v})
            zs = zs.xreplace(self._sub(ch))
            for lab, nm in ((1, "zs_p"), (-1, "zs_m")):
                e = zs.subs(y, lab)
                specs[nm] = Scalar((mu, v, *pg), (e, sp.diff(e, mu), sp.diff(e, v), sp.diff(e, mu, 2),
                                                  sp.diff(e, mu, v), sp.diff(e, v, 2)))
        specs["dispatch"] = Code(_dispatch(self))
        return specs


def _cond_code(cond, k, f, args):
    """numba text of a piece condition, relationals through the kernels ``f{k}_r{j}``."""
    if cond is sp.true or cond is True:
        return "True"
    if cond is sp.false or cond is False:
        return "False"
    if isinstance(cond, sp.And):
        return "(" + " and ".join(_cond_code(c, k, f, args) for c in cond.args) + ")"
    if isinstance(cond, sp.Or):
        return "(" + " or ".join(_cond_code(c, k, f, args) for c in cond.args) + ")"
    if isinstance(cond, sp.Not):
        return "(not " + _cond_code(cond.args[0], k, f, args) + ")"
    if isinstance(cond, sp.core.relational.Relational):
        j = f._rels.index(cond)
        op = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">", sp.GreaterThan: ">=",
              sp.Unequality: "!="}.get(type(cond))
        if op is None:
            raise ValueError(f"condition {cond} not supported")
        return f"(f{k}_r{j}(t{args}) {op} 0.0)"
    raise ValueError(f"condition {cond} not supported")


def _dispatch(layout):
    """Text of the dispatchers over function ids and pieces (see :mod:`statmech.glm._prox_nb`)."""
    idx = {s: i for i, s in enumerate(layout.pg)}
    out = ["import math", "import numba", ""]

    def pargs(f):
        return "".join(f", par[{idx[s]}]" for s in f.params)

    def head(sig):
        out.append("@numba.njit(cache=True)")
        out.append(f"def {sig}:")

    head("fn_nbreaks(k)")
    for k, f in enumerate(layout.funs):
        out.append(f"    if k == {k}:\n        return {len(f.breaks)}")
    out.append("    return 0\n")
    head("fn_kind(k)")
    for k, f in enumerate(layout.funs):
        out.append(f"    if k == {k}:\n        return {1 if f.kind == 'step' else 0}")
    out.append("    return 0\n")
    head("fn_breaks(k, par, out)")
    for k, f in enumerate(layout.funs):
        out.append(f"    if k == {k}:")
        for j in range(len(f.breaks)):
            pa = pargs(f).lstrip(", ")
            out.append(f"        out[{j}] = f{k}_b{j}({pa})")
        out.append(f"        return {len(f.breaks)}")
    out.append("    return 0\n")
    head("fn_which(k, t, par)")
    for k, f in enumerate(layout.funs):
        out.append(f"    if k == {k}:")
        for i, cond in enumerate(f.conds):
            out.append(f"        if {_cond_code(cond, k, f, pargs(f))}:\n            return {i}")
        out.append(f"        return {len(f.conds) - 1}")
    out.append("    return 0\n")
    head("fn_val(k, i, t, par)")
    for k, f in enumerate(layout.funs):
        for i in range(len(f.pieces)):
            out.append(f"    if k == {k} and i == {i}:\n        return f{k}_{i}(t{pargs(f)})")
    out.append("    return 0.0, 0.0, 0.0\n")
    head("fn_closed(k, i, a, V, par)")
    for k, f in enumerate(layout.funs):
        for i in range(len(f.pieces)):
            if f.closed[i] is not None:
                out.append(f"    if k == {k} and i == {i}:\n        return True, f{k}_c{i}(a, V{pargs(f)})")
    out.append("    return False, 0.0\n")
    if layout.model.channel.labels != "real":
        allp = "".join(f", par[{i}]" for i in range(len(layout.pg)))
        head("zstar(lab, mu, v, par)")
        out.append(f"    if lab > 0:\n        return zs_p(mu, v{allp})\n    return zs_m(mu, v{allp})\n")
    # the monomial sums of the assemblies: comb wrappers taking an array
    theta = {"cls": "m, q, V, rho", "reg": "m, q, V, rho, dl", "pen": "mh, qh, Vh, mu0, var0"}
    for name, n in layout.counts.items():
        out.append(f"NM_{name.upper()} = {n}\n")
        head(f"{name}_combine({theta[name]}, S)")
        out.append(f"    return {name}_comb({theta[name]}, " + ", ".join(f"S[{i}]" for i in range(n)) + ")\n")
    return "\n".join(out) + "\n"


_CACHE = {}
_lock = threading.Lock()


def kernels_for(model, theory):
    """``(KernelSet, ModelLayout)`` of ``model`` for ``theory`` (built once per process and key)."""
    layout = ModelLayout(model, theory)
    key = model.key(theory)
    with _lock:
        ks = _CACHE.get(key)
        if ks is None:
            def build(layout=layout):
                return layout.specs()
            build.__name__ = f"glm_{theory}_{key}"
            build.__qualname__ = build.__name__
            build.__module__ = __name__
            ks = KernelSet(build, include=_INCLUDE[theory], key=key + "\n" + "\n".join(
                f"{k}:{c.key()}" for k, c in (("loss", model.loss), ("penalty", model.penalty),
                                               ("channel", model.channel), ("prior", model.prior)) if c is not None))
            _CACHE[key] = ks
    return ks, layout
