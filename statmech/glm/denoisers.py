"""The element-wise kernels of a model for finite-N algorithms: the ERM objective with its exact
gradient, and the output and input denoisers of GAMP -- the same compiled primitives (prox,
smoothed channel, posterior moments) as the replica averages (:mod:`statmech.glm._vector_nb`)."""
from __future__ import annotations

import math

import numpy as np

from ._codegen import CH_REAL, MODE_MARGIN, kernels_for
from .spec import Model

__all__ = ["Denoisers"]


class Denoisers:
    """Vectorized kernels of ``model`` (arrays in, arrays out).

    ``loss(y, h)`` -> (values, d/dh); ``erm_output(y, omega, V)`` -> (g, dg/domega) with
    ``g = (prox_{V loss(y, .)}(omega) - omega)/V`` (GAMP's output function for ERM: its fixed point
    is the ERM minimiser); ``bayes_output(y, omega, V)`` -> ``(d log Z, d^2 log Z)`` of the teacher's
    smoothed channel; ``prior_input(B, A)`` -> posterior mean and variance under the teacher's
    prior (Bayes-optimal GAMP).
    """

    def __init__(self, model):
        if not isinstance(model, Model):
            raise TypeError(f"Denoisers: model must be a glm.Model, got {type(model).__name__}")
        self.model = model
        theory = "erm" if model.loss is not None else "bayes"
        self.ks, self.lay = kernels_for(model, theory)
        self.par = self.lay.par()
        self.cfg = self.lay.cfg()
        self.terms, _ = self.lay.term_arrays() if theory == "erm" else (np.zeros((1, 4), dtype=np.int64), None)
        self.sts = self.ks.erm_structs(self.cfg, self.par)
        self.real = model.channel.labels == "real"
        if theory == "erm":
            self.mode = 1 if self.real else (0 if self.lay.terms[0][3] == MODE_MARGIN else 2)
        self.tmix = np.ascontiguousarray(model.prior.mixture, dtype=float)
        self.delta = float(model.channel.params["Delta"]) if self.real else 0.0

    def loss(self, y, h):
        y = np.ascontiguousarray(y, dtype=float)
        h = np.ascontiguousarray(h, dtype=float)
        out, grad = np.empty_like(h), np.empty_like(h)
        self.ks.vec_loss(self.terms, self.mode, self.par, y, h, out, grad)
        return out, grad

    def erm_output(self, y, omega, V):
        y = np.ascontiguousarray(y, dtype=float)
        om = np.ascontiguousarray(omega, dtype=float)
        g, dg = np.empty_like(om), np.empty_like(om)
        if not self.ks.vec_erm_out(self.terms, self.mode, self.par, self.sts, y, om, float(V), g, dg):
            raise ArithmeticError("Denoisers.erm_output: a proximal operator did not converge")
        return g, dg

    def bayes_output(self, y, omega, V):
        y = np.ascontiguousarray(y, dtype=float)
        om = np.ascontiguousarray(omega, dtype=float)
        g, dg = np.empty_like(om), np.empty_like(om)
        self.ks.vec_bayes_out(int(self.lay.chcode), self.real, self.delta, self.par, y, om, float(V), g, dg)
        return g, dg

    def prior_input(self, B, A):
        B = np.ascontiguousarray(B, dtype=float)
        mean, var = np.empty_like(B), np.empty_like(B)
        self.ks.vec_prior_in(self.tmix, B, float(A), mean, var)
        return mean, var
