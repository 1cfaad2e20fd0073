"""Compiled kernel modules for model specifications (generated from sympy, cached on disk).

A *family* is a list of components -- losses, penalties, channels -- compiled together into one
:class:`statmech.symbolic.KernelSet`, keyed by the canonical text of their expressions
(parameters renamed by position: parameter *values* are run-time arguments).  Every built-in
component belongs to the built-in family (:func:`builtin_family`), so all models made of built-in
parts share one compiled module; a model with a component of its own gets a family of its own
components (compiled once, then loaded from the cache in every later process).  The module holds

* the primitives as :class:`statmech.symbolic.Scalar` kernels: the pieces of every one-variable
  function (value, first and second derivative), its kink expressions, its conditions, its
  closed-form prox; the smoothed channels ``Z(y, mu, v)`` with their derivatives;
* the assembly kernels of :mod:`statmech.glm._assembly`;
* dispatchers over function ids and pieces (``fn_val(k, i, t, par)`` ...) and over channels
  (``zstar(c, y, mu, v, par)``), written by :func:`_dispatch`: generated text, one ``if`` per case;
* the hand-written numba drivers of the theory (``include=``), which call those names.

:class:`ModelLayout` maps a model onto a family: its function ids, channel code, the run-time
parameter vector ``par`` and the configuration integers ``cfg``.
"""
from __future__ import annotations

import threading

import numpy as np
import sympy as sp

from ..symbolic import Code, KernelSet, Scalar
from . import spec as S
from ._assembly import assembly_specs
from ._fun1d import Fun1D
from .spec import h, u, w, y

__all__ = ["kernels_for", "ModelLayout", "Family", "builtin_family"]

_INCLUDE = ("statmech.glm._prox_nb", "statmech.glm._quad_nb", "statmech.glm._erm_nb", "statmech.glm._bayes_nb",
            "statmech.glm._gibbs_nb", "statmech.glm._solve_nb", "statmech.glm._vector_nb")

# term modes of the binary-label ERM channel: the prox variable is the margin u, or h itself
MODE_MARGIN, MODE_H = 0, 1
# channel kinds
CH_BINARY, CH_RANDOM, CH_REAL = 0, 1, 2
# penalty kinds
PEN_RIDGE, PEN_SPHERE, PEN_ISING, PEN_FUN = 0, 1, 2, 3
# cfg layout
C_CHANNEL, C_PENALTY, C_PEN_FID, C_NTERMS, C_LAYER, C_LAM, C_DELTA, C_NFUN, C_CHCODE = range(9)


class Family:
    """Components compiled together: ``losses``, ``penalties`` (separable, with a prox),
    ``channels`` (binary labels, with a Gaussian smoothing) and ``params`` (other components that
    only contribute run-time parameters: ridge, the linear channel)."""

    def __init__(self, losses=(), penalties=(), channels=(), params=(), name="custom"):
        self.name = name
        self.losses = list(losses)
        self.penalties = list(penalties)
        self.channels = list(channels)
        self.others = list(params)
        self.slots = {}          # (component key, position) -> global slot
        self.pg = []
        for comp in self.losses + self.penalties + self.channels + self.others:
            for i, _ in enumerate(comp.param_symbols):
                k = (comp.key(), i)
                if k not in self.slots:
                    self.slots[k] = len(self.pg)
                    self.pg.append(sp.Symbol(f"_pg{len(self.pg)}", real=True))
        self.funs = []           # Fun1D
        self.fids = {}           # (component key, form) -> list of fids
        for loss in self.losses:
            sub = self._sub(loss)
            f = loss.margin_function()
            if f is not None:
                self._add(loss, "margin", [(f.xreplace(sub), "loss")])
            else:
                t = sp.Symbol("t", real=True)
                self._add(loss, "label", [(loss.expr.subs(y, lab).subs(h, t).xreplace(sub).subs(t, u),
                                           f"loss at y = {lab}") for lab in (1, -1)])
            r = loss.residual_function()
            if r is not None:
                self._add(loss, "residual", [(r.xreplace(sub), "loss")])
        for pen in self.penalties:
            self._add(pen, "penalty", [(pen.expr.xreplace(self._sub(pen)).subs(w, u), "penalty")])
        self.key = "\n".join([name] + [c.key() for c in self.losses + self.penalties + self.channels + self.others])
        self._keys = {c.key() for c in self.losses + self.penalties + self.channels + self.others}

    def _sub(self, comp):
        return {s: self.pg[self.slots[(comp.key(), i)]] for i, s in enumerate(comp.param_symbols)}

    def _add(self, comp, form, exprs):
        ids = []
        sub = self._sub(comp)
        vals = {sub[s]: comp.values[s] for s in comp.param_symbols}
        for e, what in exprs:
            self.funs.append(Fun1D(e, u, tuple(sub.values()), vals, what))
            ids.append(len(self.funs) - 1)
        self.fids[(comp.key(), form)] = ids

    def has(self, comp):
        return comp is None or comp.key() in self._keys

    # ---------------------------------------------------------------- kernel specs
    def specs(self):
        asm, counts = assembly_specs()
        specs = dict(asm)
        self.counts = counts
        t = sp.Symbol("t", real=True)
        a, V = sp.symbols("a V", real=True)
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
        for c, ch in enumerate(self.channels):
            zs = sp.sympify(ch.zstar).subs({sp.Symbol("mu", real=True): mu, sp.Symbol("v", positive=True): v})
            zs = zs.xreplace(self._sub(ch))
            for lab, nm in ((1, f"zs{c}_p"), (-1, f"zs{c}_m")):
                e = zs.subs(y, lab)
                specs[nm] = Scalar((mu, v, *self.pg), (e, sp.diff(e, mu), sp.diff(e, v), sp.diff(e, mu, 2),
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


def _dispatch(fam):
    """Text of the dispatchers over function ids, pieces and channels."""
    idx = {s: i for i, s in enumerate(fam.pg)}
    out = ["import math", "import numba", ""]

    def pargs(f):
        return "".join(f", par[{idx[s]}]" for s in f.params)

    def head(sig):
        out.append("@numba.njit(cache=True)")
        out.append(f"def {sig}:")

    head("fn_nbreaks(k)")
    for k, f in enumerate(fam.funs):
        out.append(f"    if k == {k}:\n        return {len(f.breaks)}")
    out.append("    return 0\n")
    head("fn_kind(k)")
    for k, f in enumerate(fam.funs):
        out.append(f"    if k == {k}:\n        return {1 if f.kind == 'step' else 0}")
    out.append("    return 0\n")
    head("fn_breaks(k, par, out)")
    for k, f in enumerate(fam.funs):
        out.append(f"    if k == {k}:")
        for j in range(len(f.breaks)):
            out.append(f"        out[{j}] = f{k}_b{j}({pargs(f).lstrip(', ')})")
        out.append(f"        return {len(f.breaks)}")
    out.append("    return 0\n")
    head("fn_which(k, t, par)")
    for k, f in enumerate(fam.funs):
        out.append(f"    if k == {k}:")
        for i, cond in enumerate(f.conds):
            out.append(f"        if {_cond_code(cond, k, f, pargs(f))}:\n            return {i}")
        out.append(f"        return {len(f.conds) - 1}")
    out.append("    return 0\n")
    head("fn_val(k, i, t, par)")
    for k, f in enumerate(fam.funs):
        for i in range(len(f.pieces)):
            out.append(f"    if k == {k} and i == {i}:\n        return f{k}_{i}(t{pargs(f)})")
    out.append("    return 0.0, 0.0, 0.0\n")
    head("fn_closed(k, i, a, V, par)")
    for k, f in enumerate(fam.funs):
        for i in range(len(f.pieces)):
            if f.closed[i] is not None:
                out.append(f"    if k == {k} and i == {i}:\n        return True, f{k}_c{i}(a, V{pargs(f)})")
    out.append("    return False, 0.0\n")
    allp = "".join(f", par[{i}]" for i in range(len(fam.pg)))
    head("zstar(c, lab, mu, v, par)")
    for c in range(len(fam.channels)):
        out.append(f"    if c == {c}:\n        if lab > 0:\n            return zs{c}_p(mu, v{allp})\n"
                   f"        return zs{c}_m(mu, v{allp})")
    out.append("    return 0.5, 0.0, 0.0, 0.0, 0.0, 0.0\n")
    theta = {"cls": "m, q, V, rho", "reg": "m, q, V, rho, dl", "pen": "mh, qh, Vh, mu0, var0", "gib": "m, q, rho"}
    for name, n in fam.counts.items():
        out.append(f"NM_{name.upper()} = {n}\n")
        head(f"{name}_combine({theta[name]}, S)")
        out.append(f"    return {name}_comb({theta[name]}, " + ", ".join(f"S[{i}]" for i in range(n)) + ")\n")
    return "\n".join(out) + "\n"


_FAMILIES = {}
_lock = threading.Lock()


def builtin_family():
    """The family of every built-in component (compiled once for all built-in models)."""
    with _lock:
        fam = _FAMILIES.get("builtin")
        if fam is None:
            fam = Family(losses=[S.square(), S.logistic(), S.hinge(), S.squared_hinge(), S.exponential(),
                                 S.margin_counting()],
                         penalties=[S.l1(), S.elastic_net()],
                         channels=[S.sign(), S.random_labels(), S.probit()],
                         params=[S.ridge(), S.linear()], name="builtin")
            _FAMILIES["builtin"] = fam
    return fam


def family_for(model):
    """The built-in family if it has every component of ``model``, else one of the model's own."""
    fam = builtin_family()
    pen = model.penalty
    pen_fun = pen is not None and pen.constraint is None and not pen.is_ridge()
    ch = model.channel
    if fam.has(model.loss) and (not pen_fun or fam.has(pen)) and fam.has(ch):
        return fam
    key = model.key("family")
    with _lock:
        f = _FAMILIES.get(key)
        if f is None:
            if ch.labels == "binary" and ch.zstar is None:
                raise ValueError(f"channel {ch.name}: a custom channel needs its Gaussian smoothing "
                                 "Z(y, mu, v) = E_t P(y | mu + sqrt(v) t) in closed form (zstar=...); "
                                 "the numerical smoothing is not implemented")
            f = Family(losses=[model.loss] if model.loss is not None else [],
                       penalties=[pen] if pen_fun else [],
                       channels=[ch] if ch.labels != "real" else [],
                       params=([pen] if pen is not None and pen.is_ridge() else [])
                       + ([ch] if ch.labels == "real" else []), name=f"model{key}")
            _FAMILIES[key] = f
    return f


class ModelLayout:
    """How a model maps onto its family's kernels: function ids, the channel terms, ``par``, ``cfg``."""

    def __init__(self, model, fam, theory):
        self.model = model
        self.fam = fam
        self.theory = theory
        ch = model.channel
        self.terms = []          # (label, fid, s, mode, weight)
        self.channel_kind = {"binary": CH_BINARY, "random": CH_RANDOM, "real": CH_REAL}[ch.labels]
        self.chcode = next((i for i, c in enumerate(fam.channels) if c.key() == ch.key()), -1)
        if theory in ("erm", "gibbs"):
            loss = model.loss
            if loss is None:
                raise ValueError(f"{theory}: the model has no loss (give Model(..., loss=...))")
            lk = loss.key()
            if ch.labels == "real":
                ids = fam.fids.get((lk, "residual"))
                if ids is None:
                    raise ValueError(f"erm: with real labels (linear channel) the loss must be a function of "
                                     f"y - h; {loss.name} = {loss.expr} is not")
                self.terms.append((0, ids[0], 1, MODE_MARGIN, 1.0))
            elif (lk, "margin") in fam.fids:
                fid = fam.fids[(lk, "margin")][0]
                if ch.symmetric:
                    self.terms.append((1, fid, 1, MODE_MARGIN, 2.0))
                else:
                    self.terms += [(1, fid, 1, MODE_MARGIN, 1.0), (-1, fid, -1, MODE_MARGIN, 1.0)]
            else:
                ids = fam.fids[(lk, "label")]
                self.terms += [(1, ids[0], 1, MODE_H, 1.0), (-1, ids[1], 1, MODE_H, 1.0)]
            for _, fid, *_ in self.terms:
                f = fam.funs[fid]
                if theory == "gibbs":
                    if f.kind != "step" and not all(f.constant):
                        raise ValueError(f"gibbs: the cost {loss.expr} must be a step function of the margin "
                                         "(e.g. the margin-counting cost): Gibbs learning with a smooth cost "
                                         "needs the Gaussian smoothing of exp(-beta loss), not implemented")
                    continue
                if f.kind == "nonconvex":
                    raise ValueError(f"erm: the {f.what} {loss.expr} is not convex and not a step function: its "
                                     "proximal operator is not single-valued on intervals the solver can find; "
                                     "use glm.gibbs for non-convex costs")
            pen = model.penalty
            self.pen_fid = -1
            if theory == "gibbs":
                if pen.constraint not in ("spherical", "ising"):
                    raise ValueError("gibbs: the student must be spherical (penalty='spherical') or Ising "
                                     f"(penalty='ising'), got {pen!r}")
                self.pen_kind = PEN_SPHERE if pen.constraint == "spherical" else PEN_ISING
                return
            if pen.constraint == "spherical":
                self.pen_kind = PEN_SPHERE
            elif pen.constraint == "ising":
                self.pen_kind = PEN_ISING
            elif pen.is_ridge():
                self.pen_kind = PEN_RIDGE
            else:
                self.pen_kind = PEN_FUN
                self.pen_fid = fam.fids[(pen.key(), "penalty")][0]
                if fam.funs[self.pen_fid].kind != "convex":
                    raise ValueError(f"erm: the penalty {pen.expr} must be convex")

    # ---------------------------------------------------------------- run-time arrays
    def par(self):
        par = np.zeros(max(len(self.fam.pg), 1))
        for comp in (self.model.loss, self.model.penalty, self.model.channel):
            if comp is None:
                continue
            for i, s in enumerate(comp.param_symbols):
                slot = self.fam.slots.get((comp.key(), i))
                if slot is not None:
                    par[slot] = comp.values[s]
        return par

    def _slot(self, comp, i=0):
        return self.fam.slots[(comp.key(), i)]

    def cfg(self):
        m = self.model
        lam_i = self._slot(m.penalty) if m.penalty is not None and m.penalty.is_ridge() else -1
        d_i = self._slot(m.channel) if m.channel.labels == "real" else -1
        layer = 1 if m.channel.labels == "binary" else 0
        return np.array([self.channel_kind, getattr(self, "pen_kind", 0), getattr(self, "pen_fid", -1),
                         len(self.terms), layer, lam_i, d_i, len(self.fam.funs), self.chcode], dtype=np.int64)

    def term_arrays(self):
        t = np.array([[a, b, c, d] for a, b, c, d, _ in self.terms], dtype=np.int64).reshape(-1, 4)
        wt = np.array([e for *_, e in self.terms], dtype=float)
        return t, wt


_KS = {}


def _SOURCES_KEY():
    """Hash of the Python files that shape the generated text besides this one (the analysis of the
    functions, the assembly, the built-in specs): part of every family's cache key."""
    import hashlib
    from pathlib import Path
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in ("_fun1d.py", "_assembly.py", "spec.py"):
        h.update((here / name).read_bytes())
    return "\n" + h.hexdigest()[:16]


def kernels_for(model, theory):
    """``(KernelSet, ModelLayout)`` of ``model`` for ``theory`` (the family's module, built once
    per process and family)."""
    fam = family_for(model)
    layout = ModelLayout(model, fam, theory)
    with _lock:
        ks = _KS.get(fam.key)
        if ks is None:
            def build(fam=fam):
                return fam.specs()
            tag = "builtin" if fam.name == "builtin" else fam.name
            build.__name__ = f"glm_{tag}"
            build.__qualname__ = build.__name__
            build.__module__ = __name__
            ks = KernelSet(build, include=_INCLUDE, key=fam.key + _SOURCES_KEY())
            _KS[fam.key] = ks
    if not hasattr(fam, "counts"):
        fam.counts = assembly_specs()[1]
    return ks, layout


class Prepared:
    """A model ready to solve: kernels, layout, the run-time arrays ``md`` (cfg, terms, term weights,
    par, function structures, teacher mixture), the quadrature rule, ``rho`` and a key naming the
    model and its parameter values (for the branch tables)."""
    __slots__ = ("ks", "lay", "md", "rule", "rho", "key")


_PREPARED = {}


def _sig(comp):
    return None if comp is None else (comp.key(), tuple(comp.values[s] for s in comp.param_symbols))


def prepared(model, theory, level):
    """The :class:`Prepared` form of ``model`` for ``theory`` (cached per expressions and parameter
    values: a single solve then costs its numba call and the result, not the setup).  Its arrays
    must not be modified (parameter paths build their own)."""
    from ._rules import quadrature_rule
    key = (theory, level, _sig(model.loss), _sig(model.penalty), _sig(model.channel), _sig(model.prior))
    p = _PREPARED.get(key)
    if p is None:
        ks, lay = kernels_for(model, theory)
        par, cfg = lay.par(), lay.cfg()
        terms, tw = lay.term_arrays() if lay.terms else (np.zeros((1, 4), dtype=np.int64), np.zeros(1))
        p = Prepared()
        p.ks, p.lay = ks, lay
        p.md = (cfg, terms, tw, par, ks.erm_structs(cfg, par), np.ascontiguousarray(model.prior.mixture, dtype=float))
        p.rule = quadrature_rule(level)
        p.rho = float(model.prior.rho)
        p.key = key
        if len(_PREPARED) > 512:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = p
    return p
