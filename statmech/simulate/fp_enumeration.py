r"""Franz--Parisi entropy of the Ising perceptron by exhaustive enumeration (N <= 25).

For each random instance (``P = round(alpha N)`` patterns ``xi in {+-1}^N``, labels
``+-1``) all solutions are enumerated with
:func:`statmech.simulate.enumeration.solutions_bitmask`; ``n_refs`` reference solutions are
drawn *uniformly* among them (the equilibrium measure at zero temperature, i.e. typical
solutions), and the solutions at every Hamming distance ``k`` from each reference are
counted by popcount: ``N_k = #{w : popcount(w ^ w~) = k}`` (``N_0 = 1``).

The finite-N estimate of the Franz--Parisi entropy at ``d = k/N`` is the quenched average
``s_N(d) = E_xi E_{w~} (1/N) log N_k`` over the pairs with ``N_k > 0`` (the fraction of pairs
with ``N_k > 0`` is reported: below the zero crossing of the RS entropy it drops to ~0, which
is the finite-N signature of isolated solutions).  The leading finite-size correction is the
combinatorial one, ``(1/N) log C(N, k) = H2(d) - log(2 pi N d (1-d))/(2N) + ...``; the
*entropy deficit* ``s_N(d) - (1/N) log C(N, k)`` has it removed and is compared with the
theory's ``S_FP(d) - H2(d)`` (see tests and docs/franz_parisi.md).

Error bars: references within one instance are correlated, so the per-instance means are
averaged and the standard error is taken across instances.
"""
from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int, check_range
from ._result import Simulation
from .enumeration import popcount, random_patterns, solutions_bitmask

__all__ = ["fp_counts", "fp_enumeration", "FPEnumeration"]


def fp_counts(codes, references, N):
    """``counts[r, k]`` = number of solutions (bit codes ``codes``) at Hamming distance k from
    ``references[r]`` (popcount of the XOR), shape ``(len(references), N + 1)``."""
    N = check_int("N", N, lo=1)
    c = np.asarray(codes, dtype=np.int64)
    refs = np.atleast_1d(np.asarray(references, dtype=np.int64))
    out = np.empty((refs.size, N + 1), dtype=np.int64)
    for i, r in enumerate(refs):
        out[i] = np.bincount(popcount(c ^ r), minlength=N + 1)[: N + 1]
    return out


@dataclass(frozen=True, repr=False)
class FPEnumeration(Simulation):
    """Enumeration estimate of the Franz--Parisi entropy (see module docstring).

    Attributes
    ----------
    d : array
        Distances k/N, k = 0..N.
    entropy, entropy_err : array
        Quenched (1/N) <log N_k> over pairs with N_k > 0, and its standard error across
        instances (NaN-free: where no pair has N_k > 0 the entry is -inf and
        ``fraction_nonzero`` is 0).
    deficit, deficit_err : array
        entropy - (1/N) log C(N, k).
    fraction_nonzero : array
        Fraction of (instance, reference) pairs with N_k > 0.
    n_solutions_mean : float
        Mean log-number of solutions per weight, (1/N) <log #solutions> over the satisfiable
        instances (the headline).
    n_solutions_err : float
        Its standard error across instances (inf with a single satisfiable instance).
    N, alpha, P, n_instances, n_refs, n_sat
        Sizes (n_sat = instances with >= 1 solution).

    Protocol: ``error`` = ``n_solutions_err``; the counts are exact, so ``converged`` True and
    ``residual`` 0.0; ``iterations`` = ``n_instances`` (instances enumerated); ``ansatz`` ``"-"``.
    """
    N: int
    alpha: float
    P: int
    d: np.ndarray
    entropy: np.ndarray
    entropy_err: np.ndarray
    deficit: np.ndarray
    deficit_err: np.ndarray
    fraction_nonzero: np.ndarray
    n_solutions_mean: float
    n_instances: int
    n_refs: int
    n_sat: int
    n_solutions_err: float = math.inf

    headline = "n_solutions_mean"
    converged = True
    residual = 0.0

    @property
    def error(self):
        """The standard error of ``n_solutions_mean``."""
        return self.n_solutions_err

    @property
    def iterations(self):
        """The instances enumerated."""
        return int(self.n_instances)


def fp_enumeration(N, alpha, n_instances=20, n_refs=10, *, kappa=0.0, seed=0, dist="gaussian"):
    """Exhaustive-enumeration Franz--Parisi entropy of the Ising perceptron (N <= 25).

    Parameters
    ----------
    N : number of weights, 3..25 (odd for +-1 patterns so that fields never vanish at kappa = 0)
    alpha : load, P = round(alpha N) random +-1 patterns with random labels
    n_instances : number of pattern sets (instances without solutions are skipped)
    n_refs : reference solutions drawn uniformly (with replacement) per instance
    kappa : margin, seed : RNG seed (results are reproducible)
    dist : ``"gaussian"`` (default) or ``"binary"`` (+-1) pattern entries.  With +-1 patterns
        the fields live on a lattice and the counts oscillate between even and odd k; the
        N -> infinity theory is the same for both.
    """
    N = check_int("N", N, lo=3)
    if N > 25 or (N % 2 == 0 and dist == "binary"):
        raise ValueError(f"N must be an integer in [3, 25] (odd for binary patterns), got {N}")
    check_choice("dist", dist, ("gaussian", "binary"))
    alpha = float(check_range("alpha", alpha, 0.0, 2.0))
    n_instances = check_int("n_instances", n_instances, lo=1)
    n_refs = check_int("n_refs", n_refs, lo=1)
    kappa = float(check_range("kappa", kappa, 0.0))
    P = int(round(alpha * N))
    rng = np.random.default_rng(seed)
    per_inst_log = []
    per_inst_nz = []
    log_nsol = []
    n_sat = 0
    for _ in range(n_instances):
        xi = random_patterns(rng, P, N, dist)
        sigma = 2.0 * rng.integers(0, 2, size=P) - 1.0
        codes = solutions_bitmask(xi, sigma, kappa)
        if codes.size == 0:
            continue
        n_sat += 1
        log_nsol.append(math.log(codes.size) / N)
        refs = codes[rng.integers(0, codes.size, size=n_refs)]
        cnt = fp_counts(codes, refs, N)
        nz = cnt > 0
        with np.errstate(divide="ignore"):
            lg = np.where(nz, np.log(np.where(nz, cnt, 1)) / N, 0.0)
        s = lg.sum(axis=0)
        m = nz.sum(axis=0)
        per_inst_log.append(np.where(m > 0, s / np.maximum(m, 1), np.nan))
        per_inst_nz.append(m / n_refs)
    if n_sat == 0:
        raise ValueError(f"no instance had a solution at alpha={alpha}, N={N}: lower alpha or raise n_instances")
    L = np.array(per_inst_log)
    frac = np.mean(np.array(per_inst_nz), axis=0)
    ent = np.full(N + 1, -np.inf)
    err = np.full(N + 1, np.inf)
    for k in range(N + 1):
        col = L[:, k]
        col = col[np.isfinite(col)]
        if col.size:
            ent[k] = col.mean()
            err[k] = col.std(ddof=1) / math.sqrt(col.size) if col.size > 1 else np.inf
    logC = np.array([math.lgamma(N + 1) - math.lgamma(k + 1) - math.lgamma(N - k + 1) for k in range(N + 1)]) / N
    deficit = np.where(np.isfinite(ent), ent - logC, -np.inf)
    nsol_err = float(np.std(log_nsol, ddof=1) / math.sqrt(n_sat)) if n_sat > 1 else math.inf
    return FPEnumeration(N, alpha, P, np.arange(N + 1) / N, ent, err, deficit, err.copy(), frac,
                         float(np.mean(log_nsol)), n_instances, n_refs, n_sat, nsol_err)


class _CallableModule(types.ModuleType):
    """This module, callable as its function :func:`fp_enumeration`.

    Python binds an imported submodule to its package, so once this module is imported
    ``statmech.simulate.fp_enumeration`` is the module, whatever the package re-exports; calling
    it runs the function, so ``statmech.simulate.fp_enumeration(N, alpha, ...)`` works in every
    import order (and ``from statmech.simulate.fp_enumeration import ...`` keeps working).
    """

    def __call__(self, *args, **kwargs):
        return fp_enumeration(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
