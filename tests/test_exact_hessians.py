"""The fast exact Hessians against the earlier implementations they replaced.

Both Hessians are exact, so a faster assembly must give the same numbers to round-off:
the references below are the previous implementations, kept here only as references
(per-pair block GEMMs for the tree committee; Pearlmutter's R-operator applied to every
unit direction for the small networks).
"""
import math

import numpy as np
import pytest

from statmech.simulate import small_networks as sn
from statmech.simulate import tcm_paths as T

RTOL = 1e-12          # max |H_new - H_ref| / max |H_ref|


# --------------------------------------------------------------------------- references
def _tcm_hessian_ref(W, patterns, labels, K, lam):
    X3 = np.asarray(patterns, float).reshape(len(labels), K, -1)
    y = np.asarray(labels, float)
    P, K, n = X3.shape
    th = np.tanh(np.einsum("pkn,kn->pk", X3, W) / math.sqrt(n))
    d1 = 1.0 - th * th
    d2 = -2.0 * th * d1
    t = y * lam * th.sum(axis=1)
    l1 = T._TCM.tcm_dell_v(t)
    l2 = T._TCM.tcm_ddell_v(t)
    Hm = np.empty((K * n, K * n))
    for j in range(K):
        for k in range(j, K):
            c = lam * lam * l2 * d1[:, j] * d1[:, k]
            if j == k:
                c = c + y * lam * l1 * d2[:, j]
            B = (X3[:, j, :].T * c) @ X3[:, k, :] / (P * n)
            Hm[j * n:(j + 1) * n, k * n:(k + 1) * n] = B
            Hm[k * n:(k + 1) * n, j * n:(j + 1) * n] = B.T
    return Hm


def _unit_dirs(net, start, stop):
    lay, _ = net._layout()
    out = []
    for ent in lay:
        d = {}
        for k, (a, b, s) in ent.items():
            lo, hi = max(a, start), min(b, stop)
            if lo >= hi:
                continue
            flat = np.arange(lo, hi) - a
            kk = np.arange(lo, hi) - start
            d[k] = (kk, flat // s[1], flat % s[1]) if k == "W" else (kk, flat)
        out.append(d)
    return out


def _net_hessian_ref(net, theta, task, block=128):
    """R-operator on every unit direction (the implementation before the layer-block assembly)."""
    layers, zs, hs, phis = net._forward(theta, task.X)
    lay, P = net._layout()
    m, L = task.m, len(layers)
    _, p = net._out(hs[-1], task.Y)
    deltas, epss = [None] * L, [None] * L
    deltas[L - 1] = (p - task.Y) / m
    for l in range(L - 1, 0, -1):
        epss[l - 1] = deltas[l] @ layers[l]["W"].T
        deltas[l - 1] = epss[l - 1] * phis[l - 1]["f_h"]
    Hm = np.empty((P, P))
    for start in range(0, P, block):
        stop = min(P, start + block)
        B = stop - start
        dirs = _unit_dirs(net, start, stop)
        Rzs, Rhs = [None], []
        for l in range(L):
            n_in, n_out = net.sizes[l], net.sizes[l + 1]
            Rh = (np.zeros((B, m, n_out)) if l == 0
                  else (Rzs[l].reshape(B * m, n_in) @ layers[l]["W"]).reshape(B, m, n_out))
            if "W" in dirs[l]:
                kk, i, j = dirs[l]["W"]
                Rh[kk, :, j] += zs[l][:, i].T
            if "b" in dirs[l]:
                kk, j = dirs[l]["b"]
                Rh[kk, :, j] += 1.0
            Rhs.append(Rh)
            if l < L - 1:
                Rz = phis[l]["f_h"] * Rh
                if "beta" in dirs[l]:
                    kk, j = dirs[l]["beta"]
                    Rz[kk, :, j] += phis[l]["f_b"][:, j].T
                Rzs.append(Rz)
        RhL = Rhs[-1]
        if net.sizes[-1] == 1:
            Rdelta = (p * (1.0 - p)) * RhL / m
        else:
            Rdelta = (p * RhL - p * (p * RhL).sum(axis=-1, keepdims=True)) / m
        out = np.zeros((B, P))
        for l in range(L - 1, -1, -1):
            n_in, n_out = net.sizes[l], net.sizes[l + 1]
            RgW = (zs[l].T @ Rdelta.transpose(1, 0, 2).reshape(m, B * n_out)).reshape(n_in, B, n_out)
            RgW = RgW.transpose(1, 0, 2)
            if l > 0:
                RgW = RgW + (Rzs[l].transpose(0, 2, 1).reshape(B * n_in, m) @ deltas[l]).reshape(B, n_in, n_out)
            a, b_, _ = lay[l]["W"]
            out[:, a:b_] = RgW.reshape(B, -1)
            a, b_, _ = lay[l]["b"]
            out[:, a:b_] = Rdelta.sum(axis=1)
            if l == 0:
                break
            Reps = (Rdelta.reshape(B * m, n_out) @ layers[l]["W"].T).reshape(B, m, n_in)
            if "W" in dirs[l]:
                kk, i, j = dirs[l]["W"]
                Reps[kk, :, i] += deltas[l][:, j].T
            ph, eps, Rh = phis[l - 1], epss[l - 1], Rhs[l - 1]
            Rdelta = Reps * ph["f_h"] + eps * (ph["f_hh"] * Rh)
            if "beta" in lay[l - 1]:
                Rgbeta = (Reps * ph["f_b"] + eps * (ph["f_hb"] * Rh)).sum(axis=1)
                if "beta" in dirs[l - 1]:
                    kk, j = dirs[l - 1]["beta"]
                    Rdelta[kk, :, j] += (eps[:, j] * ph["f_hb"][:, j]).T
                    Rgbeta[kk, j] += (eps[:, j] * ph["f_bb"][:, j]).sum(axis=0)
                a, b_, _ = lay[l - 1]["beta"]
                out[:, a:b_] = Rgbeta
        Hm[start:stop] = out
    return Hm


def _rel(H, ref):
    return float(np.max(np.abs(H - ref)) / np.max(np.abs(ref)))


# --------------------------------------------------------------------------- tree committee
@pytest.mark.parametrize("K,N,alpha", [(1, 21, 1.0), (3, 15, 1.0), (3, 303, 0.5), (5, 55, 2.0), (9, 45, 0.7)])
def test_tcm_hessian_matches_reference(K, N, alpha):
    rng = np.random.default_rng(N + K)
    for trial, lam in enumerate((0.5, 1.0, 2.5)):
        d = T.tcm_instance(N, K, alpha, seed=trial, teacher=bool(trial % 2))
        W = rng.standard_normal((K, N // K)) * rng.uniform(0.3, 3.0)
        Hm = T.tcm_hessian(W, d["patterns"], d["labels"], K, lam)
        assert _rel(Hm, _tcm_hessian_ref(W, d["patterns"], d["labels"], K, lam)) < RTOL
        np.testing.assert_array_equal(Hm, Hm.T)      # exact by construction: each block mirrored


# --------------------------------------------------------------------------- small networks
def _toy_softmax(m, d, k, seed):
    rng = np.random.default_rng(seed)
    return sn.Task("toy", rng.standard_normal((m, d)), np.eye(k)[rng.integers(0, k, m)])


@pytest.mark.parametrize("activation", sn.ACTIVATIONS)
@pytest.mark.parametrize("sizes,task", [
    ((2, 10, 1), sn.nonlinear_task(97, seed=4)),
    ((2, 8, 2, 1), sn.nonlinear_task(61, seed=5)),
    ((2, 3, 4, 2, 1), sn.linear_task(40, seed=6)),
    ((5, 4, 3), _toy_softmax(50, 5, 3, 7)),
    ((4, 6, 3, 5), _toy_softmax(33, 4, 5, 8)),
])
def test_network_hessian_matches_r_operator(activation, sizes, task):
    net = sn.Network(sizes, activation, 1.3)
    rng = np.random.default_rng(len(sizes) * 31 + sum(sizes))
    for trial in range(2):
        th = net.init(trial) + 0.3 * rng.standard_normal(net.n_params)
        Hm = net.hessian(th, task)
        assert _rel(Hm, _net_hessian_ref(net, th, task)) < RTOL
        np.testing.assert_array_equal(Hm, Hm.T)      # exact by construction: each block mirrored
        # chunks of examples change only the order of the sums
        assert _rel(net.hessian(th, task, block=7), Hm) < RTOL


def test_network_hessian_block_must_be_positive():
    net = sn.Network((2, 3, 1))
    with pytest.raises(ValueError, match="block"):
        net.hessian(net.init(0), sn.linear_task(10), block=0)
