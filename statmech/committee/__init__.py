r"""Tree committee machines (TCM): storage capacity of sign and ReLU networks, RS and 1RSB.

Model
-----
N inputs split into K disjoint receptive fields of N/K inputs; branch l has spherical
weights w_l (``|w_l|^2 = N/K``) and pre-activation lambda_l = w_l . xi_l / sqrt(N/K).
The output is sign(sum_l c_l g(lambda_l)):

* ``activation="sign"``: g = sign, c_l = 1, K odd (majority vote; thesis Eq. 3.2);
* ``activation="relu"``: g(x) = max(0, x), c_l = +1 for l <= K/2 and -1 for l > K/2,
  K even (the balanced second layer of Baldassi, Malatesta, Zecchina 2019).  An output of
  exactly 0 (all active units cancel, e.g. every unit inactive) counts as an error.

Storage of P = alpha N random patterns with random labels (alpha = P/N, N -> inf, K fixed).

Replica-symmetric theory (derived in docs/committee.md)
-------------------------------------------------------
Site-symmetric overlap q between two solutions in every branch; with x = sqrt(q/(1-q))
and t = (t_1..t_K) iid N(0, 1), the RS free entropy per weight is

    s(q) = 1/2 ln(1-q) + q/(2(1-q)) + alpha E_t ln Z(x t),                         (RS.1)
    Z(u) = P(majority of K independent units is +1),  P(unit l = +1) = H(-u_l),

(the Poisson-binomial upper tail; thesis Eq. 3.3 in replica form).  The saddle point
ds/dq = 0 is  q = alpha sqrt((1-q)/q) (-E_t[sum_l t_l d ln Z/du_l])              (RS.2)
and the replicon (AT) eigenvalue of the branch-symmetric (uniform) replicon mode is

    lambda_AT = 1 - alpha E_t ||d^2 ln Z / du du||_F^2      (stable iff > 0)    (RS.3)

(K = 1 reduces to Gardner--Derrida: 1 - alpha (1-q)^2 E (d^2_h ln H)^2).  As q -> 1,
ln Z ~ -x^2 C(t)/2 with C(t) the minimal squared displacement of the hidden fields that
makes the output correct, so  1/alpha_c^RS = E_t C(t).                             (RS.4)
For sign units C(t) = sum of t_l^2 over the (K+1)/2 - n_+ negative units of smallest
``|t_l|``; counting configurations gives the thesis's Eq. 3.5 (confirmed, no correction):

    1/alpha_c = K int_0^inf Dt t^2 I_{H(t)}((K-1)/2, (K+1)/2)                   (3.5)

(I = regularized incomplete beta = the binomial sum of Eq. 3.5).  For K -> inf
alpha_c^RS = sqrt(72/pi) sqrt(K) (1 + O(K^-1/2)),  sqrt(72/pi) = 4.7873...

One-step RSB at capacity (q_1 -> 1, m = y (1 - q_1), y fixed)
-------------------------------------------------------------
::

    2 (1-q_1) s_1RSB -> F(q0, y) = ln(1 + y(1-q0))/y + q0/(1 + y(1-q0))
                                   + (2 alpha / y) E_{t0} ln E_{t1} exp(-y C(h)/2),  (1RSB.1)
    h = sqrt(q0) t0 + sqrt(1-q0) t1;   alpha_c^1RSB = stationary value of -S/E over (q0, y)

(y -> 0 recovers Eq. RS.4).  The inner K-dimensional average is reduced to a 1-d integral
over the largest flipped ``|lambda|`` (order statistics, see docs/committee.md).

ReLU, K -> inf
--------------
CLT over branches gives an effective perceptron with output overlap
Q(q) = (k(q) - 1/(2 pi))/(1/2 - 1/(2 pi)),  k(q) = (sqrt(1-q^2) + (pi - arccos q) q)/(2 pi),
so alpha_c^RS(K = inf) = 2 Q'(1) = 2 pi/(pi - 1) = 2.93388... (finite, Baldassi et al. 2019).

Numerics
--------
Closed forms (entropic terms and their derivatives, the ReLU kernel Q(q), the effective-
perceptron 1RSB integrand) are sympy kernels in ``_eqs``; the K-unit combinatorics (log-space
Poisson binomial, leave-one/two-out derivatives, flip costs, the order-statistics reduction of
the 1RSB inner average) are numba kernels (cache=True, compiled on first use).  K-dimensional
Gaussian averages use permutation symmetry: sums over multisets of the nodes of a 1-d rule.

Public API (the questions)
--------------------------
``tcm_capacity(K, activation="sign", ansatz="rs")`` -> the capacity alpha_c (a float, or a
:class:`statmech.result.Estimate` carrying ``.error`` where the value has a quadrature or
Monte-Carlo error); ``tcm_capacity_point(K, activation="sign", ansatz="rs")`` -> the same as a
:class:`statmech.SaddlePoint` (Result protocol: ``error``, ``stability``, ``rs_stable``), any
activation (sign, relu; erf and quadratic at K = inf), ansatz (rs, 1rsb at finite K; 2rsb .. 6rsb
and frsb at K = inf) and K in the domain of each method (see :func:`tcm_capacity`);
``tcm_storage(alpha, K, activation="sign", ansatz="rs")`` -> SaddlePoint (q, q_hat, entropy,
replicon, rs_stable), any odd K <= 201 (multiset rules for K <= 7, randomized QMC for K >= 9), ReLU
K = 2; ``tcm_at_line(K)`` -> alpha_AT and ``tcm_at_line_point(K)`` (with error estimate);
``sign_capacity_large_K(K, ansatz)`` / ``sign_capacity_large_K_point`` (the sign committee at large
K, continuum theory).

Method-specific entry points (RQMC searches, the finite-alpha 1RSB branch, the 2RSB search at
K = 3, the K = inf ladder, flip costs, large-K coefficients) are in :mod:`statmech.committee.advanced`;
their old names here keep working with a ``DeprecationWarning``.

Files
-----
One file per theory; the questions above are re-exported here, the method-specific names in ``advanced.py``.

==========================  ===================================================================
``api.py``                  ``tcm_capacity``, ``tcm_storage``: dispatch over activation, ansatz, K
``sign_rs.py``              sign RS: capacity (Eq. 3.5), saddle point at finite alpha (RS.1-RS.3),
                            AT line
``sign_1rsb.py``            sign 1RSB at capacity (Eq. 1RSB.1): multiset rule (K <= 5), RQMC (K >= 7)
``sign_1rsb_finite.py``     sign 1RSB at finite alpha (q1 < 1, m free; Eqs. F.1-F.3), K = 3, 5, 7:
                            ``tcm_1rsb_point``
``sign_1rsb_branch.py``     the approach of that branch to capacity (Eqs. F.7-F.8), extrapolation,
                            ``tcm_1rsb_branch``
``sign_2rsb.py``            sign 2RSB at capacity (q2 -> 1, Eq. 2RSB.1), K = 3
``_rsb_avg.py``,            numba: the K-dimensional 1RSB averages (tensor rules; outer multisets),
``_rsb_sorted.py``,         the K = 3 inner average in sorted order, the any-K inner average in order
``_rsb_order.py``,          statistics (Eqs. F.9-F.11), and the K = 3 2RSB middle average in order
``_rsb2_order.py``          statistics (Eqs. M.1-M.3)
``large_k.py``              K -> inf: sign RS coefficient, continuum 1RSB (Eq. 1RSB.L),
                            Monasson--Zecchina; ReLU K = inf (kernel Q, effective perceptron)
``relu_rs.py``              ReLU RS capacity (Eq. RS.4): K = 2 exact, K >= 4 by RQMC
``relu_k2.py``              ReLU K = 2 in closed form: RS at finite alpha, AT line, 1RSB
``relu_1rsb.py``            ReLU 1RSB at K = 4, 6 (RQMC, importance-sampled inner average)
``large_k_rsb.py``          K = inf beyond RS: RS/1RSB/k-step/full-RSB SAT/UNSAT point (relu, erf,
                            quadratic; sign at large K) through the RSB core (``statmech.rsb.kernel``)
``relu_large_K.py``         ReLU from finite K to K = inf: the 1/sqrt(K) correction and the fit
``flip_cost.py``            the q -> 1 flip costs C(t), sign and ReLU (numba)
``_kernels.py``             sympy closed forms ``_eqs`` and the multiset quadrature (numba)
``_common.py``              argument checks, the 2-d stationary-point search, Sobol point sets
==========================  ===================================================================
"""

from ._common import ACTIVATIONS, ANSATZE
from .api import tcm_capacity, tcm_capacity_point, tcm_storage
from .large_k_rsb import sign_capacity_large_K, sign_capacity_large_K_point
from .sign_rs import tcm_at_line, tcm_at_line_point

__all__ = ["tcm_capacity", "tcm_capacity_point", "tcm_storage", "tcm_at_line", "tcm_at_line_point",
           "sign_capacity_large_K", "sign_capacity_large_K_point", "advanced"]

from . import advanced  # noqa: E402  (the method-specific entry points)
from .._deprecation import moved as _moved  # noqa: E402

__getattr__ = _moved(__name__, dict.fromkeys(advanced.__all__, "statmech.committee.advanced"), replacement={
    "tcm_capacity_1rsb_point": "statmech.committee.tcm_capacity_point(K, 'sign', '1rsb') "
                               "or statmech.committee.advanced.tcm_capacity_1rsb_point",
    "relu_capacity_1rsb_point": "statmech.committee.tcm_capacity_point(2, 'relu', '1rsb') "
                                "or statmech.committee.advanced.relu_capacity_1rsb_point",
    "relu_capacity_1rsb_rqmc": "statmech.committee.tcm_capacity_point(K, 'relu', '1rsb') "
                               "or statmech.committee.advanced.relu_capacity_1rsb_rqmc",
    "tcm_capacity_inf_point": "statmech.committee.tcm_capacity_point(math.inf, activation, ansatz) "
                              "or statmech.committee.advanced.tcm_capacity_inf_point"})
