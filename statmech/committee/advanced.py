"""Method-specific entry points of the tree committee theories (the ``advanced`` namespace).

The questions a user asks are answered by :mod:`statmech.committee`: ``tcm_capacity`` /
``tcm_capacity_point`` (any activation, ansatz and K, dispatching to the method that holds there),
``tcm_storage`` (the RS saddle point at finite alpha), ``tcm_at_line`` / ``tcm_at_line_point`` (the AT
line) and ``sign_capacity_large_K`` / ``sign_capacity_large_K_point`` (the sign committee at large K).
This namespace holds the pieces those questions are built from, for those who study a method:

* sign 1RSB at capacity: :func:`tcm_capacity_1rsb_point` (multiset rule or RQMC by K) and
  :func:`tcm_capacity_1rsb_rqmc` (the RQMC search itself);
* sign 1RSB at finite alpha and its approach to capacity: :func:`tcm_1rsb_point` ->
  :class:`TCMRSBPoint` (quadrature :class:`Rule`), :func:`tcm_1rsb_branch` -> :class:`TCM1RSBBranch`;
* sign 2RSB at capacity, K = 3: :func:`tcm_2rsb_alpha` (R of Eq. 2RSB.1) and
  :func:`tcm_2rsb_search` -> :class:`TCM2RSBResult`;
* ReLU: :func:`relu_capacity_1rsb_point` (K = 2), :func:`relu_capacity_1rsb_rqmc` (K = 4 ... 12),
  :func:`relu_1rsb_alpha_rqmc` (alpha(q0, y) of Eq. 1RSB.1), :func:`relu_at_line` (K = 2),
  :func:`relu_rs_capacity_error`, :func:`relu_large_K_correction`, :func:`relu_large_K_fit`;
* K = inf: :func:`tcm_capacity_inf_point`, :func:`tcm_kstep_inf`, :func:`tcm_output_kernel`,
  :func:`relu_kernel_Q`;
* large-K sign laws: :func:`rs_large_K_coefficient`, :func:`one_rsb_large_K_coefficient`,
  :func:`tcm_1rsb_large_K`, :func:`monasson_zecchina`;
* the q -> 1 flip costs :func:`sign_flip_cost`, :func:`relu_flip_cost`.

Every name here was public in :mod:`statmech.committee` and keeps working there with a
``DeprecationWarning`` naming this module.
"""
from __future__ import annotations

from .flip_cost import relu_flip_cost, sign_flip_cost
from .large_k import monasson_zecchina, one_rsb_large_K_coefficient, relu_kernel_Q, rs_large_K_coefficient, tcm_1rsb_large_K
from .large_k_rsb import tcm_capacity_inf_point, tcm_kstep_inf, tcm_output_kernel
from .relu_1rsb import relu_1rsb_alpha_rqmc, relu_capacity_1rsb_rqmc
from .relu_k2 import relu_at_line, relu_capacity_1rsb_point
from .relu_large_K import relu_large_K_correction, relu_large_K_fit
from .relu_rs import relu_rs_capacity_error
from .sign_1rsb import tcm_capacity_1rsb_point, tcm_capacity_1rsb_rqmc
from .sign_1rsb_branch import TCM1RSBBranch, tcm_1rsb_branch
from .sign_1rsb_finite import Rule, TCMRSBPoint, tcm_1rsb_point
from .sign_2rsb import TCM2RSBResult, tcm_2rsb_alpha, tcm_2rsb_search

__all__ = ["tcm_capacity_1rsb_point", "tcm_capacity_1rsb_rqmc", "TCMRSBPoint", "tcm_1rsb_point", "Rule", "TCM1RSBBranch",
           "tcm_1rsb_branch", "TCM2RSBResult", "tcm_2rsb_alpha", "tcm_2rsb_search", "relu_capacity_1rsb_point",
           "relu_capacity_1rsb_rqmc", "relu_1rsb_alpha_rqmc", "relu_at_line", "relu_rs_capacity_error",
           "relu_large_K_correction", "relu_large_K_fit", "tcm_capacity_inf_point", "tcm_kstep_inf",
           "tcm_output_kernel", "relu_kernel_Q", "rs_large_K_coefficient", "one_rsb_large_K_coefficient",
           "tcm_1rsb_large_K", "monasson_zecchina", "sign_flip_cost", "relu_flip_cost"]
