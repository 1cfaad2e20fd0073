"""numba kernels of the finite-N GLM simulations (:mod:`statmech.simulate.glm`)."""
import math

import numba
import numpy as np


@numba.njit(cache=True)
def hinge_dual_cd(A, lam, margin, a, w, tol, max_epochs):
    """Exact minimiser of ``sum_mu max(0, margin - A_mu.w) + (lam/2)|w|^2`` by dual coordinate descent
    (Hsieh et al. 2008, ICML, Algorithm 1 for the L1-loss SVM without bias): the dual
    ``max_a sum_mu margin a_mu - |A^T a|^2/(2 lam)``, ``0 <= a_mu <= 1``, ``w = A^T a/lam``, each
    coordinate maximised exactly in turn (a random order every epoch).  ``A`` = rows ``y_mu x_mu/sqrt N``.
    Stops when the duality gap is below ``tol`` times the primal value (or 1e-300); returns
    (gap, epochs).  ``a``, ``w`` are updated in place (warm starts)."""
    P, N = A.shape
    qd = np.empty(P)
    for mu in range(P):
        s = 0.0
        for i in range(N):
            s += A[mu, i] * A[mu, i]
        qd[mu] = s / lam
    gap = math.inf
    ep = 0
    order = np.arange(P)
    state = np.uint64(88172645463325252)
    for ep in range(1, max_epochs + 1):
        # a new random order every epoch (Hsieh et al.: much faster than cyclic), from a fixed
        # xorshift generator so that a run is reproducible
        for i in range(P - 1, 0, -1):
            state ^= state << np.uint64(13)
            state ^= state >> np.uint64(7)
            state ^= state << np.uint64(17)
            j = int(state % np.uint64(i + 1))
            order[i], order[j] = order[j], order[i]
        for k in range(P):
            mu = order[k]
            h = 0.0
            for i in range(N):
                h += A[mu, i] * w[i]
            g = h - margin                  # minus the gradient of the dual objective in a_mu
            an = a[mu] - g / qd[mu]
            if an < 0.0:
                an = 0.0
            elif an > 1.0:
                an = 1.0
            d = an - a[mu]
            if d != 0.0:
                a[mu] = an
                c = d / lam
                for i in range(N):
                    w[i] += c * A[mu, i]
        # duality gap
        primal = 0.0
        dual = 0.0
        ww = 0.0
        for i in range(N):
            ww += w[i] * w[i]
        for mu in range(P):
            h = 0.0
            for i in range(N):
                h += A[mu, i] * w[i]
            if margin - h > 0.0:
                primal += margin - h
            dual += margin * a[mu]
        primal += 0.5 * lam * ww
        dual -= 0.5 * lam * ww
        gap = primal - dual
        if gap <= tol * max(abs(primal), 1e-300):
            break
    return gap, ep
