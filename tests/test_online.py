"""Online learning in soft committee machines (statmech.scm.online*, statmech.simulate.online_sgd).

Reference values were produced by this code (``python -c "import statmech.scm as s;
print(s.online_plateau(2, 2, 'erf', 0.5))"`` and likewise, see each test) and agree with an
independent arbitrary-precision (mpmath) implementation of the same ODEs to <= 3e-12 (eigenvalues)
and <= 1e-13 (fixed points, lr_max, lr_opt, trajectories); docs/online.md lists the comparison.
"""
import json
import math

import numpy as np
import pytest

from statmech import ConvergenceError, scm
from statmech.scm import _online_integrals as I, _online_odes as O
from statmech.scm._online_common import pack


def _rand_cov(n, rng, d=None):
    A = rng.normal(size=(n, d or n + 2))
    return A @ A.T / A.shape[1]


# ------------------------------------------------------------------ integrals
def _ss_i4(C):
    """Saad & Solla's Lambda form of the erf I4 (1995, PRE 52, 4225, appendix)."""
    l4 = (1 + C[0, 0]) * (1 + C[1, 1]) - C[0, 1] ** 2
    l0 = (l4 * C[2, 3] - C[1, 2] * C[1, 3] * (1 + C[0, 0]) - C[0, 2] * C[0, 3] * (1 + C[1, 1])
          + C[0, 1] * C[0, 2] * C[1, 3] + C[0, 1] * C[0, 3] * C[1, 2])
    l1 = l4 * (1 + C[2, 2]) - C[1, 2] ** 2 * (1 + C[0, 0]) - C[0, 2] ** 2 * (1 + C[1, 1]) + 2 * C[0, 1] * C[0, 2] * C[1, 2]
    l2 = l4 * (1 + C[3, 3]) - C[1, 3] ** 2 * (1 + C[0, 0]) - C[0, 3] ** 2 * (1 + C[1, 1]) + 2 * C[0, 1] * C[0, 3] * C[1, 3]
    return 4 / math.pi ** 2 / math.sqrt(l4) * math.asin(l0 / math.sqrt(l1 * l2))


def test_erf_i4_reweighted_form_equals_saad_solla_lambda_form():
    rng = np.random.default_rng(0)
    for _ in range(20):
        C = _rand_cov(4, rng)
        v = I.i4_erf(C[0, 0], C[1, 1], C[2, 2], C[3, 3], C[0, 1], C[0, 2], C[0, 3], C[1, 2], C[1, 3], C[2, 3])
        assert v == pytest.approx(_ss_i4(C), abs=1e-15)


def test_erf_integrals_against_gauss_hermite_quadrature():
    """The closed forms against tensor Gauss-Hermite quadrature of the same expectations (n = 64 in 2-d, 40 in 3-d)."""
    from statmech.gaussian import gauss_hermite
    from scipy.special import erf
    rng = np.random.default_rng(1)
    g = lambda x: erf(x / math.sqrt(2))                                   # noqa: E731
    dg = lambda x: math.sqrt(2 / math.pi) * np.exp(-x * x / 2)            # noqa: E731
    for _ in range(3):
        C = 0.5 * _rand_cov(3, rng)
        L = np.linalg.cholesky(C)
        z, w = gauss_hermite(40)
        Z = np.stack(np.meshgrid(z, z, z, indexing="ij"), -1).reshape(-1, 3)
        W = np.einsum("i,j,k->ijk", w, w, w).ravel()
        U = Z @ L.T
        i2 = W @ (g(U[:, 0]) * g(U[:, 1]))
        i3 = W @ (dg(U[:, 0]) * U[:, 1] * g(U[:, 2]))
        assert I.i2_erf(C[0, 0], C[1, 1], C[0, 1]) == pytest.approx(i2, abs=1e-12)
        assert I.i3_erf(C[0, 0], C[0, 1], C[0, 2], C[1, 2], C[2, 2]) == pytest.approx(i3, abs=1e-12)


def test_orthant_probability_p4():
    R = np.full((4, 4), 0.5)
    np.fill_diagonal(R, 1.0)
    assert I.p4_corr(R) == pytest.approx(1 / 5, abs=1e-15)      # exchangeable rho = 1/2: 1/(n+1)
    assert I.p4_corr(np.eye(4)) == pytest.approx(1 / 16, abs=1e-16)
    R = np.eye(4)
    R[0, 1] = R[1, 0] = 0.3
    R[2, 3] = R[3, 2] = -0.6
    p2 = lambda r: 0.25 + math.asin(r) / (2 * math.pi)              # noqa: E731
    assert I.p4_corr(R) == pytest.approx(p2(0.3) * p2(-0.6), abs=1e-15)
    # a second exchangeable value: P4(rho) = 1/16 + 3 asin(rho)/(4 pi) + ... checked by sign symmetry:
    # P(all > 0) for rho and the complement identity sum over sign patterns = 1 (inclusion-exclusion)
    rng = np.random.default_rng(2)
    C = _rand_cov(4, rng)
    d = np.sqrt(np.diag(C))
    R = C / np.outer(d, d)
    tot = 0.0
    for signs in np.ndindex(2, 2, 2, 2):
        s = np.where(np.array(signs) == 0, 1.0, -1.0)
        tot += I.p4_corr(np.ascontiguousarray(R * np.outer(s, s)))
    assert tot == pytest.approx(1.0, abs=1e-14)


def test_relu_i4_sign_flip_sum_rule_and_factorisation():
    """Theta(u) + Theta(-u) = 1: I4 with field 0 negated plus I4 equals E[Theta_1 relu_2 relu_3] (another
    branch of the code); independent blocks factorise into P2 * I2."""
    rng = np.random.default_rng(3)
    w, w2 = np.empty((4, 4)), np.empty((4, 4))
    ids = np.arange(4)
    for _ in range(5):
        C = _rand_cov(4, rng)
        Cn = C.copy()
        Cn[0, :] *= -1
        Cn[:, 0] *= -1
        lhs = I.i4_relu(C.copy(), ids, w, w2) + I.i4_relu(Cn, ids, w, w2)
        # Theta_1 Theta_1 relu_2 relu_3 = Theta_1 relu_2 relu_3
        P = [1, 1, 2, 3]
        rhs = I.i4_relu(np.ascontiguousarray(C[np.ix_(P, P)]), np.array(P), w, w2)
        assert lhs == pytest.approx(rhs, abs=1e-14)
    C = np.zeros((4, 4))
    C[:2, :2] = [[1.0, 0.4], [0.4, 2.0]]
    C[2:, 2:] = [[1.5, -0.3], [-0.3, 0.7]]
    rho = 0.4 / math.sqrt(2.0)
    expect = (0.25 + math.asin(rho) / (2 * math.pi)) * I.i2_relu(1.5, 0.7, -0.3)
    assert I.i4_relu(C, ids, w, w2) == pytest.approx(expect, abs=1e-15)


def test_relu_i4_coincident_fields_are_continuous():
    """Repeated indices (exact reductions) agree with nearly coincident distinct fields."""
    rng = np.random.default_rng(4)
    w, w2 = np.empty((4, 4)), np.empty((4, 4))
    C3 = _rand_cov(3, rng)
    for pat in [(0, 0, 1, 2), (0, 1, 0, 2), (0, 1, 2, 2), (0, 0, 1, 1), (0, 1, 0, 1), (0, 0, 0, 0)]:
        C = C3[np.ix_(pat, pat)]
        exact = I.i4_relu(C.copy(), np.array(pat), w, w2)
        merged = I.i4_relu(C.copy(), np.arange(4), w, w2)          # proportional distinct fields
        assert merged == pytest.approx(exact, abs=1e-15)
        # perturb the repeated fields apart by 1e-6 (in an extra dimension): the change is O(1e-6)
        A = np.linalg.cholesky(C3 + 1e-300 * np.eye(3))
        B = np.zeros((4, 4))
        for k, p in enumerate(pat):
            B[k, :3] = A[p]
            B[k, 3] = 1e-6 * k
        near = I.i4_relu(B @ B.T, np.arange(4), w, w2)
        assert near == pytest.approx(exact, abs=1e-5)


@pytest.mark.slow
def test_relu_i4_against_owens_t_double_integral():
    """E[Theta_0 Theta_1 relu_2 relu_3] = int relu_2 relu_3 P(u_0 > 0, u_1 > 0 | u_2, u_3) (bivariate normal
    CDF) by dblquad: ~1e-13 (15 s per point)."""
    from scipy import integrate
    from scipy.stats import multivariate_normal
    rng = np.random.default_rng(1)
    w, w2 = np.empty((4, 4)), np.empty((4, 4))
    for _ in range(2):
        C = _rand_cov(4, rng)
        S = C[2:, 2:]
        A = C[:2, 2:] @ np.linalg.inv(S)
        V = C[:2, :2] - A @ C[:2, 2:].T
        s1, s2 = math.sqrt(V[0, 0]), math.sqrt(V[1, 1])
        mvn = multivariate_normal(mean=[0, 0], cov=[[1, V[0, 1] / (s1 * s2)], [V[0, 1] / (s1 * s2), 1]])
        Si, det = np.linalg.inv(S), np.linalg.det(S)

        def f(y, x):
            u = np.array([x, y])
            m = A @ u
            return x * y * math.exp(-0.5 * u @ Si @ u) / (2 * math.pi * math.sqrt(det)) * mvn.cdf([m[0] / s1, m[1] / s2])
        ref = integrate.dblquad(f, 0, np.inf, 0, np.inf, epsabs=1e-12, epsrel=1e-11)[0]
        assert I.i4_relu(C, np.arange(4), w, w2) == pytest.approx(ref, abs=1e-11)


# ------------------------------------------------------------------ right-hand sides
@pytest.mark.parametrize("code", [0, 1, 2])
def test_symmetric_pattern_sums_equal_the_full_right_hand_side(code):
    K = M = 3
    for mode, (q, c, r, s) in ((2, (0.6, 0.2, 0.3, 0.1)), (1, (0.6, 0.2, 0.25, 0.25))):
        Q = np.full((K, K), c)
        np.fill_diagonal(Q, q)
        R = np.full((K, M), s)
        np.fill_diagonal(R, r)
        y = pack(Q, R)
        out = np.empty(y.size)
        e_full = O.rhs(0, code, y, K, M, np.eye(M), 1.0, 1.0, 0.7, 0.3, out)
        x = np.array([q, c, r, s])[:4 if mode == 2 else 3]
        o2 = np.zeros(x.size)
        e_sym = O.rhs(mode, code, x, K, M, np.eye(M), 1.0, 1.0, 0.7, 0.3, o2)
        ref = np.array([out[O.qidx(K, 0, 0)], out[O.qidx(K, 0, 1)], out[6], out[7]])[:x.size]
        assert np.abs(o2 - ref).max() < 1e-14 and e_sym == pytest.approx(e_full, abs=1e-15)


def test_normalized_convention_is_saad_solla_at_lr_over_K_for_K_equal_M():
    """delta^norm = a^2 g'(x)((b/a) sum g(y) - sum g(x)): for K = M, normalized(lr) = saad-solla(lr/K)
    on the same time axis and eps_g^norm = eps_g^SS / K (docs/online.md)."""
    rng = np.random.default_rng(5)
    K = M = 3
    C = _rand_cov(K + M, rng)
    y = pack(C[:K, :K], C[:K, K:])
    T = C[K:, K:]
    for code in (0, 1, 2):
        o1, o2 = np.empty(y.size), np.empty(y.size)
        e1 = O.rhs(0, code, y, K, M, T, K ** -0.5, M ** -0.5, 0.9, 0.0, o1)
        e2 = O.rhs(0, code, y, K, M, T, 1.0, 1.0, 0.9 / K, 0.0, o2)
        assert np.abs(o1 - o2).max() < 1e-14 and e1 == pytest.approx(e2 / K, rel=1e-13)


def _linear_closed_form(al, Q0, R0, T, lr, a, b, s2):
    """The exact solution of the linear-g ODEs (docs/online.md): every student moves by the same vector."""
    K = R0.shape[0]
    lam = K * lr * a * a
    mu = lam * (2 - lam)
    phi = (lambda c: al if c == 0 else -math.expm1(-c * al) / c)
    rho0 = R0.sum(0)
    R = R0 + (b * T.sum(1) / a - rho0)[None, :] * lam * phi(lam) / K
    f0 = b * T.sum() - a * R0.sum()
    E0 = b * R0.sum() - a * Q0.sum()
    Einf = -lam * s2 / (a * (2 - lam))
    A1, A2, Vinf = E0 - Einf - (b / a) * f0, (b / a) * f0, 2 * s2 / (2 - lam)
    d0 = b * R0.sum(1) - a * Q0.sum(1) - E0 / K
    Q = (Q0 + lr * a * ((2 / K) * (Einf * al + A1 * phi(mu) + A2 * phi(lam)) + (d0[:, None] + d0[None, :]) * phi(lam))
         + lr * lr * a * a * (Vinf * al - a * A1 * phi(mu)))
    eps = 0.5 * (b * f0 * math.exp(-lam * al) - a * (Einf + A1 * math.exp(-mu * al) + A2 * math.exp(-lam * al)))
    return Q, R, eps


@pytest.mark.parametrize("convention", ["saad-solla", "normalized"])
def test_linear_activation_closed_form(convention):
    rng = np.random.default_rng(0)
    K, M = 3, 2
    C = _rand_cov(K + M, rng, 7)
    Q0, R0, T = C[:K, :K], C[:K, K:], C[K:, K:]
    a, b = (1.0, 1.0) if convention == "saad-solla" else (K ** -0.5, M ** -0.5)
    al = [0.5, 1.0, 5.0, 20.0, 100.0]
    tr = scm.online(K, M, "linear", 0.3, al, Q0=Q0, R0=R0, T=T, convention=convention, noise=math.sqrt(0.2),
                    rtol=1e-12, atol=1e-14, symmetric=False)
    for j, alpha in enumerate(al):
        Qc, Rc, ec = _linear_closed_form(alpha, Q0, R0, T, 0.3, a, b, 0.2)
        assert np.abs(tr.Q[j] - Qc).max() < 1e-12 and np.abs(tr.R[j] - Rc).max() < 1e-12
        assert abs(tr.eps_g[j] - ec) < 1e-12


# ------------------------------------------------------------------ plateau and asymptotics
# python -c "import statmech.scm as s; p = s.online_plateau(K, K, 'erf', 0.5, convention=c);
#            a = s.online_asymptotics(K, K, 'erf', convention=c); print(p.Q, p.C, p.R, p.eps_g, p.escape_rate,
#            a.lr_max, a.lr_opt, a.rate_opt)"
ERF = {
    (2, "saad-solla"): ((0.367719699077614, 0.32538554792402763, 0.41439415085248027, 0.01464484974386171,
                         0.031618162083376276), (2.3068276960833525, 2.1796322631804865, 0.0963065459919607)),
    (2, "normalized"): ((0.34816503203197285, 0.32985183536410356, 0.4109087740600178, 0.006451825331130673,
                         0.016152496876880966), (4.613655392166706, 4.359264526360974, 0.0963065459919607)),
    (3, "saad-solla"): ((0.3058455835675124, 0.18324483702206978, 0.2702182684166399, 0.03209979544716046,
                         0.020526307954412716), (1.6206745060940686, 1.5202291144109705, 0.0663350674826956)),
    (3, "normalized"): ((0.2256404041202054, 0.19589883972908936, 0.26117998236786305, 0.007699662478740876,
                         0.007463640322157075), (4.8620235182822045, 4.56068734323291, 0.0663350674826956)),
}


@pytest.mark.parametrize("K, convention", list(ERF))
def test_erf_plateau_and_asymptotics_reference_values(K, convention):
    (Q, C, R, eps, esc), (lmax, lopt, rate) = ERF[K, convention]
    p = scm.online_plateau(K, K, "erf", 0.5, convention=convention)
    assert p.kind == "unspecialized" and p.Q > p.C and p.residual < 1e-12 and p.converged
    assert max(abs(p.Q - Q), abs(p.C - C), abs(p.R - R), abs(p.eps_g - eps)) < 1e-10
    assert p.escape_rate == pytest.approx(esc, abs=1e-10) and p.escape_mode == "std_K x std_M"
    assert p.multiplicities[0] == (K - 1) ** 2 and int(p.multiplicities.sum()) == K * (K + 1) // 2 + K * K
    assert np.all(np.sort(p.stability) == p.stability) and p.stability[0] == pytest.approx(-esc, abs=1e-10)
    q = p.identical_students
    assert q.kind == "identical-students" and q.Q == q.C
    a = scm.online_asymptotics(K, K, "erf", convention=convention)
    assert a.lr_max == pytest.approx(lmax, rel=1e-12) and a.lr_opt == pytest.approx(lopt, rel=1e-12)
    assert a.rate_opt == pytest.approx(rate, rel=1e-12)


def test_plateau_full_jacobian_matches_the_symmetry_blocks():
    """The block eigenvalues (S_K x S_M components from a few directional derivatives) against the
    eigenvalues of the whole difference Jacobian of the full ODEs."""
    p = scm.online_plateau(3, 3, "erf", 0.7)
    Q = np.full((3, 3), p.C)
    np.fill_diagonal(Q, p.Q)
    y = pack(Q, np.full((3, 3), p.R))
    n = y.size

    def F(z):
        o = np.empty(n)
        O.rhs(0, 0, z, 3, 3, np.eye(3), 1.0, 1.0, 0.7, 0.0, o)
        return o

    def D(h):
        return np.column_stack([(F(y + h * e) - F(y - h * e)) / (2 * h) for e in np.eye(n)])
    J = (4 * D(5e-4) - D(1e-3)) / 3
    full = np.sort(np.linalg.eigvals(J).real)
    blocks = np.sort(np.repeat(p.eigenvalues.real, p.multiplicities))
    assert np.abs(full - blocks).max() < 1e-9


def test_lr_to_zero_limit_of_the_plateau():
    """Q = C = 1/(2K-1), R = 1/sqrt(K(2K-1)) (erf, K = M): an exact zero of the O(lr) part of the ODEs;
    the identical-students fixed point (the lr -> 0 limit of both branches) reaches it to 1e-12 at
    lr = 1e-13; the unspecialized branch approaches it linearly in lr."""
    for K in (2, 3, 5):
        x = np.array([1 / (2 * K - 1), 1 / (2 * K - 1), 1 / math.sqrt(K * (2 * K - 1))])
        out = np.zeros(3)
        O.rhs(1, 0, x, K, K, np.eye(K), 1.0, 1.0, 1e-30, 0.0, out)
        assert np.abs(out / 1e-30).max() < 1e-15
        q = scm.online_plateau(K, K, "erf", 1e-3).identical_students
        q13 = scm.online_plateau(K, K, "erf", 1e-2).identical_students
        assert abs(q.Q - x[0]) < 1e-3 and abs(q13.Q - x[0]) > abs(q.Q - x[0])
    from statmech.scm._online_fixed_points import _System, _identical
    from statmech.scm._online_common import resolve_activation
    for K in (2, 3):
        sys = _System(K, K, resolve_activation("erf", "t"), 1e-13, 1.0, 1.0, 0.0, np.eye(K))
        q = _identical(sys, np.array([0.3, 0.3, 0.3]), "saad-solla", 0.0, "test")
        assert abs(q.Q - 1 / (2 * K - 1)) < 1e-12 and abs(q.R - 1 / math.sqrt(K * (2 * K - 1))) < 1e-12
    d = [scm.online_plateau(2, 2, "erf", lr).Q - 1 / 3 for lr in (1e-3, 1e-4)]
    assert d[0] / d[1] == pytest.approx(10.0, rel=2e-3)


def test_relu_plateau_and_asymptotics():
    p = scm.online_plateau(2, 2, "relu", 0.2)
    assert p.Q > p.C and p.residual < 1e-12
    assert p.escape_rate == pytest.approx(0.044527781391881405, abs=1e-9)
    assert math.isinf(p.identical_students.escape_rate)       # not differentiable across Q = C
    a = scm.online_asymptotics(2, 2, "relu")
    assert a.lr_max == pytest.approx(3 - math.sqrt(3), rel=1e-13)


def test_linear_asymptotics_closed_form():
    """Linear g: lambda = K lr a^2, the rates are lambda and lambda (2 - lambda): lr_max = 2/(K a^2),
    lr_opt = 1/(K a^2), rate 1; the other directions are neutral (only sum_i w_i is determined)."""
    for K, conv in ((2, "saad-solla"), (3, "normalized")):
        a2 = 1.0 if conv == "saad-solla" else 1 / K
        r = scm.online_asymptotics(K, K, "linear", convention=conv)
        assert r.lr_max == pytest.approx(2 / (K * a2), rel=1e-12)
        assert r.lr_opt == pytest.approx(1 / (K * a2), rel=1e-9) and r.rate_opt == pytest.approx(1.0, rel=1e-9)
        assert r.n_neutral > 0


def test_asymptotic_eigenvalues_against_the_difference_jacobian():
    for K, conv, lr in ((2, "saad-solla", 0.8), (3, "normalized", 2.0)):
        a = scm.online_asymptotics(K, K, "erf", convention=conv)
        w = 1.0 if conv == "saad-solla" else K ** -0.5
        y = pack(np.eye(K), np.eye(K))
        n = y.size

        def F(z):
            o = np.empty(n)
            O.rhs(0, 0, z, K, K, np.eye(K), w, w, lr, 0.0, o)
            return o

        def D(h):
            return np.column_stack([(F(y + h * e) - F(y - h * e)) / (2 * h) for e in np.eye(n)])
        J = (4 * D(5e-4) - D(1e-3)) / 3
        assert np.abs(np.sort(np.linalg.eigvals(J).real) - a.eigenvalues(lr)).max() < 1e-10
        # the decay rates at lr_opt: the slowest is rate_opt; slightly off lr_opt it is slower
        assert a.stability[0] == pytest.approx(a.rate_opt, rel=1e-10)
        for f in (0.97, 1.03):
            assert min(a.rates(a.lr_opt * f)) < a.rate_opt
    assert scm.online_asymptotics(2, 2, "erf").limited_by in ("r-block", "s-block")


# ------------------------------------------------------------------ trajectories
def _init(K):
    Q0 = 0.2 * np.eye(K) + 0.05 * (np.ones((K, K)) - np.eye(K))
    R0 = np.array([[1e-4 * (1 + i + 2 * n) ** 2 for n in range(K)] for i in range(K)])
    return Q0, R0


def test_erf_trajectory_reference_values():
    """K = M = 2, lr = 0.5: python -c "import numpy as np, statmech.scm as s; ...online(2, 2, 'erf', 0.5,
    [10, 50, 100, 200, 500, 1000], Q0=0.2 I + 0.05 (J - I), R0 = 1e-4 (1 + i + 2n)^2, rtol=1e-12, atol=1e-15)"."""
    Q0, R0 = _init(2)
    tr = scm.online(2, 2, "erf", 0.5, [10, 50, 100, 200, 500, 1000], Q0=Q0, R0=R0)
    ref = [0.015464155416933245, 0.014778008468472548, 0.014713561356582083, 0.014534900787560145,
           7.283123191759167e-07, 2.220446049250313e-16]
    # the error estimate (difference to a 100x looser run) bounds the actual error from above
    assert np.abs(tr.eps_g - ref).max() < 1e-10 and np.abs(tr.eps_g - ref).max() < tr.error < 1e-7
    assert np.abs(tr.R[3] - [[0.44641176610939814, 0.38730600090587697],
                             [0.3874708746341003, 0.4465821027981017]]).max() < 1e-8
    p = tr.plateau
    assert p.height == pytest.approx(0.01464484974386171, rel=1e-10) and 30 < p.entry < 60 and 190 < p.exit < 220
    assert p.escape_rate == pytest.approx(0.031618162083376276, rel=1e-9)
    assert tr.method == "dop853 full" and tr.ansatz == "-" and len(repr(tr)) <= 2000
    json.dumps(tr.to_dict())


def test_symmetric_states_are_integrated_exactly_in_reduced_variables():
    K = 3
    Q0 = 0.3 * np.eye(K) + 0.02
    R0 = 0.01 * np.eye(K) + 0.004
    al = [1.0, 10.0, 60.0]
    red = scm.online(K, K, "erf", 0.5, al, Q0=Q0, R0=R0, estimate_error=False)
    full = scm.online(K, K, "erf", 0.5, al, Q0=Q0, R0=R0, symmetric=False, estimate_error=False)
    assert red.method.startswith("dop853 site-symmetric") and full.method == "dop853 full"
    assert np.abs(red.Q - full.Q).max() < 1e-9 and np.abs(red.eps_g - full.eps_g).max() < 1e-10


def test_k100_symmetric_trajectory_is_fast():
    """K = M = 100 erf to alpha = 1e4 from a site-symmetric start (the reduced ODEs; the speed is
    measured in benchmarks/bench_online.py)."""
    K = 100
    Q0 = 0.1 * np.eye(K)
    R0 = 1e-3 * np.eye(K) + 0.9e-3 * (np.ones((K, K)) - np.eye(K))
    tr = scm.online(K, K, "erf", 0.01, np.geomspace(1, 1e4, 30), Q0=Q0, R0=R0, estimate_error=False)
    assert tr.eps_g[-1] < tr.eps_g[0] and np.all(np.isfinite(tr.eps_g))


def test_checkpoint_resume_gives_the_same_trajectory(tmp_path, monkeypatch):
    from statmech.scm import _online_trajectory as OT
    Q0, R0 = _init(2)
    al = np.geomspace(1, 400, 20)
    ref = scm.online(2, 2, "erf", 0.5, al, Q0=Q0, R0=R0, estimate_error=False)
    path = tmp_path / "ck.json"
    real = OT.dop853
    calls = {"n": 0}

    def flaky(*a):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a[:16], 20, *a[17:])          # short chunks (max_steps = 20), so that there are several

    monkeypatch.setattr(OT, "dop853", flaky)
    with pytest.raises(KeyboardInterrupt):
        scm.online(2, 2, "erf", 0.5, al, Q0=Q0, R0=R0, estimate_error=False, checkpoint=path, checkpoint_every=0.0)
    assert path.exists()
    monkeypatch.setattr(OT, "dop853", real)
    res = scm.online(2, 2, "erf", 0.5, al, Q0=Q0, R0=R0, estimate_error=False, checkpoint=path)
    assert not path.exists()
    assert np.array_equal(res.eps_g, ref.eps_g) and np.array_equal(res.Q, ref.Q)


class _ErfGeneric:
    """erf as a generic activation object (with its derivative)."""
    name = "erf-generic"

    def __call__(self, x):
        from scipy.special import erf
        return erf(np.asarray(x) / math.sqrt(2))

    def derivative(self, x):
        return math.sqrt(2 / math.pi) * np.exp(-np.asarray(x) ** 2 / 2)


def test_generic_activation_matches_the_closed_form():
    """erf through the quadrature path: the K = M = 2 right-hand side to its stated accuracy (4-d rule of
    order 16: 4e-5 at these O(1) covariances), the asymptotics to 1e-12; ESP(inf) is ReLU exactly."""
    from statmech.scm._online_common import generic_rhs, resolve_activation
    act = resolve_activation(_ErfGeneric(), "test")
    rng = np.random.default_rng(6)
    C = _rand_cov(4, rng)
    y = pack(C[:2, :2], C[:2, 2:])
    out, eps, _ = generic_rhs(0, act, y, 2, 2, C[2:, 2:], 1.0, 1.0, 0.7, 0.0)
    ref = np.empty(y.size)
    e2 = O.rhs(0, 0, y, 2, 2, C[2:, 2:], 1.0, 1.0, 0.7, 0.0, ref)
    assert np.abs(out - ref).max() < 1e-4 and eps == pytest.approx(e2, abs=1e-10)
    a = scm.online_asymptotics(2, 2, _ErfGeneric())
    assert a.lr_max == pytest.approx(ERF[2, "saad-solla"][1][0], rel=1e-12)
    from statmech.activations import ESP
    assert scm.online_asymptotics(2, 2, ESP(math.inf)).lr_max == pytest.approx(3 - math.sqrt(3), rel=1e-12)


@pytest.mark.slow
def test_generic_activation_plateau():
    """online_plateau through the quadrature path (minutes): erf as a generic object."""
    p = scm.online_plateau(2, 2, _ErfGeneric(), 0.5)
    assert p.Q == pytest.approx(ERF[2, "saad-solla"][0][0], abs=1e-6)
    assert p.escape_rate == pytest.approx(ERF[2, "saad-solla"][0][4], abs=1e-5)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, name", [
    (lambda: scm.online(2, 2, "erf", 0.0, [1.0], Q0=np.eye(2), R0=np.zeros((2, 2))), "lr"),
    (lambda: scm.online(2, 2, "erf", 0.5, [1.0], Q0=np.eye(3), R0=np.zeros((2, 2))), "Q0"),
    (lambda: scm.online(2, 2, "erf", 0.5, [1.0], Q0=np.eye(2), R0=np.zeros((2, 3))), "R0"),
    (lambda: scm.online(2, 2, "erf", 0.5, [1.0], Q0=np.eye(2), R0=np.zeros((2, 2)), T=np.eye(3)), "T"),
    (lambda: scm.online(2, 2, "erf", 0.5, [1.0], Q0=[[1, 2], [2, 1]], R0=np.zeros((2, 2))), "Q0"),
    (lambda: scm.online(0, 2, "erf", 0.5, [1.0], Q0=np.eye(2), R0=np.zeros((2, 2))), "K"),
    (lambda: scm.online(2, 2, "erf", 0.5, [1.0], Q0=np.eye(2), R0=np.zeros((2, 2)), convention="other"), "convention"),
    (lambda: scm.online(2, 2, "erf", 0.5, [2.0, 1.0], Q0=np.eye(2), R0=np.zeros((2, 2))), "alphas"),
    (lambda: scm.online(2, 2, "erf", 0.5, [1.0], Q0=np.eye(2), R0=2 * np.eye(2)), "R0"),
    (lambda: scm.online_plateau(2, 0, "erf", 0.5), "M"),
    (lambda: scm.online_plateau(2, 2, "erf", -1.0), "lr"),
    (lambda: scm.online_plateau(2, 2, "erf", 0.5, convention="Saad"), "convention"),
    (lambda: scm.online_plateau(2, 2, "tanh", 0.5), "activation"),
    (lambda: scm.online_asymptotics(2, 3, "erf"), "K"),
    (lambda: scm.online_asymptotics(2, 2, "erf", convention="x"), "convention"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
    with pytest.raises(TypeError, match="lr"):
        scm.online_plateau(2, 2, "erf", "0.5")


def test_divergence_raises_convergence_error():
    """Linear g above lr_max = 2/(K a^2) = 1: the overlaps grow like exp(24 alpha) and overflow."""
    Q0, R0 = _init(2)
    with pytest.raises(ConvergenceError):
        scm.online(2, 2, "linear", 3.0, [200.0], Q0=Q0, R0=R0, estimate_error=False)


# ------------------------------------------------------------------ simulations
def test_overlap_chain_and_direct_sgd_agree_with_the_ode():
    """Paired comparison: each run against the ODE from its own initial overlaps; the mean difference
    is within 4 standard errors (N = 300, 24 seeds, before the plateau exit), and the exact overlap
    chain has the same statistics as the direct N-dimensional SGD."""
    from statmech.simulate import online_sgd
    al = [0.0, 5.0, 20.0, 40.0]
    res = {}
    for method in ("overlaps", "direct"):
        s = online_sgd(2, 2, "erf", 0.5, al, N=300, n_seeds=24, method=method, executor="serial", progress=False)
        ode = np.array([scm.online(2, 2, "erf", 0.5, al, Q0=s.Q0[j], R0=s.R0[j], estimate_error=False).eps_g
                        for j in range(s.n_seeds)])
        d = (s.eps_g - ode)[:, 1:]
        assert np.all(np.abs(d.mean(0)) <= 4 * d.std(0, ddof=1) / math.sqrt(s.n_seeds))
        res[method] = s
    a, b = res["overlaps"], res["direct"]
    assert np.all(np.abs(a.eps_g_mean - b.eps_g_mean)[1:] <= 4 * np.hypot(a.eps_g_err, b.eps_g_err)[1:])


def test_cli_online(capsys):
    from statmech.cli import main
    assert main(["scm", "online", "--K", "2", "--M", "2", "--activation", "erf", "--lr", "0.5", "--t-max", "400",
                 "--n", "5", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["plateau_height"] == pytest.approx(0.01464484974386171, rel=1e-10) and len(d["eps_g"]) == 6
    assert main(["scm", "online-plateau", "--K", "2", "--M", "2", "--lr", "0.5", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["escape_rate"] == pytest.approx(0.031618162083376276, rel=1e-9)
    assert main(["scm", "online-asymptotics", "--K", "2", "--M", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["lr_max"] == pytest.approx(2.3068276960833525, rel=1e-12)
