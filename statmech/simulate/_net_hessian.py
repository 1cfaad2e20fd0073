r"""Exact Hessian of a small fully connected network, assembled from BLAS-3 sums over examples.

Used by :meth:`statmech.simulate.small_networks.Network.hessian`.  Layer ``k`` has inputs
``z_k`` (``z_0 = X``), pre-activations ``h_k = z_k W_k + b_k`` and, below the output,
``z_{k+1} = phi(h_k, beta_k)``.  Its *local variables* are ``u_k = (h_k, beta_k)`` (the betas
only when trainable), and every parameter of the layer enters them linearly: ``W_k[i, a]``
and ``b_k[a]`` feed ``h_k[a]`` through the inputs ``c = [z_k, 1]``, ``beta_k[a]`` is
``u_k[n + a]`` itself (input 1).  With the per-example second derivatives
``G_k = d^2 ell / du_k du_k`` from the backward recursion

    A_k = W_{k+1} G_{k+1}^{hh} W_{k+1}^T,
    G_k^{st} = J^s A_k J^t + diag(eps_k phi_{st}),   J^h = phi_h, J^b = phi_beta,

(``eps_k = d ell / dz_{k+1}``; ``G_{L-1}`` is the Hessian of the output loss), every block of
the Hessian is a sum over examples of Kronecker products, one GEMM each:

* within layer k:  ``H[c_r u_a, c'_r' u_a'] = sum_mu c_r c'_r' G_k[a', a]``;
* between layers k < q:  ``sum_mu c_r [c'_r' (G_q dh_q/du_k)[a', a] + delta_q[a'] dz_q[r']/du_k[a]]``,
  the second term only for ``[W_q; b_q]``, whose inputs ``z_q`` depend on ``u_k``
  (``dz_{k+1}/du_k`` is diagonal; ``dh_q/du_k = W_q^T dz_q/du_k``, ``dz_{q+1} = phi_h dh_q``).

The examples sit on the last axis of every per-example array, so elementwise products run
over them; they are processed in chunks (short-lived temporaries stay in the cache) and the
sums are kept in GEMM layout until the end, when each block is transposed into place once.
Only the upper blocks are formed: ``H = S + S^T`` with the diagonal blocks halved in S, so
the result is exactly symmetric.  Agrees with the R-operator on every unit direction to
round-off (tests/test_exact_hessians.py).
"""
from __future__ import annotations

import numpy as np

__all__ = ["network_hessian"]


def network_hessian(net, theta, task, block):
    """Exact (P, P) Hessian of ``net``'s mean loss on ``task`` at ``theta``, ``block`` examples per chunk."""
    layers, zs, hs, phis = net._forward(theta, task.X)
    lay, P = net._layout()
    m = task.m
    L = len(layers)
    _, p = net._out(hs[-1], task.Y)
    deltas = [None] * L
    epss = [None] * L
    deltas[L - 1] = (p - task.Y) / m
    for l in range(L - 1, 0, -1):
        epss[l - 1] = deltas[l] @ layers[l]["W"].T
        deltas[l - 1] = epss[l - 1] * phis[l - 1]["f_h"]
    sums = _KronSums()
    for lo in range(0, m, block):
        sl = slice(lo, min(m, lo + block))
        T = lambda a: None if a is None else np.ascontiguousarray(a[sl].T)   # noqa: E731
        ex = {"p": T(p), "delta": [T(d) for d in deltas], "eps": [T(e) for e in epss],
              "z": [T(z) for z in zs], "phi": [{k: T(v) for k, v in ph.items()} for ph in phis]}
        _chunk(sums, layers, lay, m, net.sizes[-1], ex)
    Hm = np.zeros((P, P))
    sums.place(Hm)
    return Hm + Hm.T


def _second_derivatives(layers, m, n_out, ex):
    """G[k][s, t] = d^2 ell / du_k^s du_k^t (n, n, c) for kinds s, t in "h", "b"; J[k][s] = dz_{k+1}/du_k^s."""
    L = len(layers)
    pc = ex["p"]
    c = pc.shape[-1]
    if n_out == 1:
        Ghh = (pc * (1.0 - pc))[:, None, :] / m
    else:
        Ghh = (np.eye(n_out)[:, :, None] * pc[:, None, :] - pc[:, None, :] * pc[None, :, :]) / m
    G = [None] * L
    J = [None] * L
    G[L - 1] = {("h", "h"): Ghh}
    for k in range(L - 2, -1, -1):
        W = layers[k + 1]["W"]
        n, n2 = W.shape
        V = (W @ Ghh.reshape(n2, n2 * c)).reshape(n, n2, c)
        A = (W @ V.transpose(1, 0, 2).reshape(n2, n * c)).reshape(n, n, c)     # W G W^T
        ph, eps = ex["phi"][k], ex["eps"][k]
        J[k] = {"h": ph["f_h"]}
        curv = {("h", "h"): ph["f_hh"]}
        if "f_b" in ph:
            J[k]["b"] = ph["f_b"]
            curv.update({("b", "h"): ph["f_hb"], ("b", "b"): ph["f_bb"]})
        G[k] = {}
        for (s, t), f in curv.items():
            g = J[k][s][:, None, :] * A
            g *= J[k][t][None, :, :]
            g[np.arange(n), np.arange(n)] += eps * f
            G[k][s, t] = g
        Ghh = G[k]["h", "h"]
    return G, J


def _groups(ent, z):
    """Parameter blocks of one layer: (theta offset, inputs (r, c), kind of u they feed)."""
    one = np.ones((1, z.shape[1]))
    g = [(ent["W"][0], np.concatenate([z, one]), "h")]      # [W; b] is contiguous in theta
    if "beta" in ent:
        g.append((ent["beta"][0], one, "b"))
    return g


def _chunk(sums, layers, lay, m, n_out, ex):
    """Add the sums over one chunk of examples (``ex``, examples on the last axis) to ``sums``."""
    L = len(layers)
    G, J = _second_derivatives(layers, m, n_out, ex)
    groups = [_groups(lay[k], ex["z"][k]) for k in range(L)]
    for k in range(L):
        gk = groups[k]
        for i, (o1, c1, s1) in enumerate(gk):                # within layer k ([W; b] before beta)
            for o2, c2, s2 in gk[i:]:
                sums.add((o1, o2, (0, 3, 1, 2), 0.5 if o1 == o2 else 1.0), c1, c2, G[k][s2, s1])
        if k == L - 1:
            continue
        # between layer k and the layers q > k; Dz[s] = dz_q / du_k^s, (n_q, n_{k+1}, c),
        # diagonal for q = k + 1 (kept as its diagonal)
        Dz = J[k]
        for q in range(k + 1, L):
            Wq = layers[q]["W"]
            nq, nq2 = Wq.shape
            if q == k + 1:
                Dh = {s: Wq.T[:, :, None] * f[None] for s, f in Dz.items()}
            else:
                Dh = {s: (Wq.T @ D.reshape(nq, -1)).reshape(nq2, D.shape[1], -1) for s, D in Dz.items()}
            for o1, c1, s1 in gk:
                for o2, c2, s2 in groups[q]:
                    M = np.einsum("acm,cbm->abm", G[q][s2, "h"], Dh[s1])          # G_q dh_q/du_k
                    sums.add((o1, o2, (0, 3, 1, 2), 1.0), c1, c2, M)
                    if s2 == "h":             # the inputs z_q of [W_q; b_q] depend on u_k
                        if q == k + 1:
                            sums.add((o1, o2, "diag", 1.0), c1, ex["delta"][q], Dz[s1][:, None, :])
                        else:
                            sums.add((o1, o2, (0, 3, 2, 1), 1.0), c1, ex["delta"][q], Dz[s1])
            if q < L - 1:
                Dz = {s: D * ex["phi"][q]["f_h"][:, None, :] for s, D in Dh.items()}


class _KronSums(dict):
    """Sums over examples ``S[(i, j), (k, l)] = sum_mu x[i] y[j] Z[k, l]`` kept in GEMM layout.

    Key ``(o1, o2, axes, w)``: at the end, ``w S`` is added to the block of H at rows ``o1``,
    columns ``o2``, with ``axes`` ordering (i, j, k, l) as (row, row, column, column);
    ``axes = "diag"`` puts ``S[(r, a'), (a, 0)]`` at row (r, a), column (a, a').
    """

    def add(self, key, x, y, Z):
        c = Z.shape[-1]
        S = (x[:, None, :] * y[None, :, :]).reshape(-1, c) @ Z.reshape(-1, c).T
        if key in self:
            self[key][0] += S
        else:
            self[key] = [S, (x.shape[0], y.shape[0]) + Z.shape[:2]]

    def place(self, Hm):
        for (o1, o2, axes, w), (S, shape) in self.items():
            S = S.reshape(shape)
            if axes == "diag":            # shape (r, a', a, 1): row (r, a), column (a, a')
                r, a2, a1, _ = shape
                blk = Hm[o1:o1 + r * a1, o2:o2 + a1 * a2].reshape(r, a1, a1, a2)
                blk[:, np.arange(a1), np.arange(a1), :] += w * S[..., 0].transpose(0, 2, 1)
            else:
                S = S.transpose(axes)
                rows, cols = S.shape[0] * S.shape[1], S.shape[2] * S.shape[3]
                Hm[o1:o1 + rows, o2:o2 + cols] += w * S.reshape(rows, cols)
