"""Element-wise kernels of a model for finite-N algorithms (ERM objective, GAMP denoisers), inside numba.

Not imported for its functions: appended to a family's generated kernel module by
:mod:`statmech.glm._codegen`; the same primitives (``fn_*``, ``prox``, ``zstar``, ``mix_moments``)
as the replica averages, so the simulations use exactly the denoisers of the theory.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.glm._bayes_nb import mix_moments
    from statmech.glm._codegen import zstar
    from statmech.glm._prox_nb import fn_val, fn_which, prox


@numba.njit(cache=True)
def vec_loss(terms, mode, par, y, hv, out, grad):
    """``loss(y_i, h_i)`` and its derivative in h into ``out``, ``grad`` (``mode`` 0: a margin loss
    f(y h); 1: a residual loss f(y - h); 2: per label, ``terms[0, 1]``/``terms[1, 1]`` for y = +1/-1)."""
    for i in range(y.shape[0]):
        if mode == 0:
            fid = terms[0, 1]
            t = y[i] * hv[i]
            f, d1, _ = fn_val(fid, fn_which(fid, t, par), t, par)
            out[i] = f
            grad[i] = y[i] * d1
        elif mode == 1:
            fid = terms[0, 1]
            t = y[i] - hv[i]
            f, d1, _ = fn_val(fid, fn_which(fid, t, par), t, par)
            out[i] = f
            grad[i] = -d1
        else:
            fid = terms[0, 1] if y[i] > 0 else terms[1, 1]
            t = hv[i]
            f, d1, _ = fn_val(fid, fn_which(fid, t, par), t, par)
            out[i] = f
            grad[i] = d1


@numba.njit(cache=True)
def vec_erm_out(terms, mode, par, sts, y, om, V, g, dg):
    """GAMP output denoiser of ERM: ``g = (h* - omega)/V`` with ``h*`` the prox of ``V loss(y, .)``
    at ``omega``, and ``dg = d g/d omega``; returns False if a prox failed."""
    ok = True
    hint = math.nan
    for i in range(y.shape[0]):
        if mode == 0:
            fid = terms[0, 1]
            a = y[i] * om[i]
            P, f, d1, Pa, PV, okp = prox(fid, sts[fid], a, V, par, hint)
            g[i] = y[i] * (P - a) / V
        elif mode == 1:
            fid = terms[0, 1]
            a = y[i] - om[i]
            P, f, d1, Pa, PV, okp = prox(fid, sts[fid], a, V, par, hint)
            g[i] = (a - P) / V
        else:
            fid = terms[0, 1] if y[i] > 0 else terms[1, 1]
            a = om[i]
            P, f, d1, Pa, PV, okp = prox(fid, sts[fid], a, V, par, math.nan)
            g[i] = (P - a) / V
        dg[i] = (Pa - 1.0) / V
        ok = ok and okp
    return ok


@numba.njit(cache=True)
def vec_bayes_out(chcode, real, delta, par, y, om, V, g, dg):
    """GAMP output denoiser of Bayes-optimal inference: ``g = d_omega log Z``, ``dg = d^2_omega log Z``
    with ``Z(y, omega, V) = E_t P(y | omega + sqrt(V) t)``."""
    for i in range(y.shape[0]):
        if real:
            s = V + delta
            g[i] = (y[i] - om[i]) / s
            dg[i] = -1.0 / s
            continue
        lab = 1 if y[i] > 0 else -1
        Z, Zw, Zv, Zww, Zwv, Zvv = zstar(chcode, lab, om[i], V, par)
        if Z > 1e-300:
            r = Zw / Z
            g[i] = r
            dg[i] = Zww / Z - r * r
        else:
            # deep in the tail of a sign channel: log Z ~ log H(x), x = -lab om/sqrt V
            sv = math.sqrt(V)
            x = -lab * om[i] / sv
            g[i] = lab * x / sv
            dg[i] = -1.0 / V
    return True


@numba.njit(cache=True)
def vec_prior_in(tmix, B, A, mean, var):
    """Posterior mean and variance of a weight under the mixture prior ``tmix`` given the Gaussian
    field ``(B, A)`` (``P(w) e^{B w - A w^2/2}``)."""
    lw = np.empty(tmix.shape[0])
    for i in range(B.shape[0]):
        L, m1, v, dmA = mix_moments(B[i], A, tmix, lw)
        mean[i] = m1
        var[i] = v
