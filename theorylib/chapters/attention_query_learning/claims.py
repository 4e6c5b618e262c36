"""The claims of chapter 'attention-query-learning': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then what
:mod:`.model_runs` measured, then the wrong-theory hook ``theory=``, from which every prediction is read.
A named wrong theory is passed as ``theory=variant(theory, f=theory.wrong_f)``. The floating-point
tolerances are error analysis and come from :mod:`.tolerances`.

The recovery errors of the exact learners (C1), the first-order coefficient measured at tau = 1e-7 (C4a),
the excess of the random adversaries, measured in units of a second-order term (C4b), and the two-head
comparisons (C5) are floating-point quantities: their claims are ``fp=True``, so the table shows the
bound they met, never their digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import Claim, check_absolute, check_exact, check_upper, check_zscore
from theorylib.core.rates import LogLogFit

from . import theory as _theory
from . import tolerances
from .model_runs import (
    AdversaryRun,
    FullRun,
    NoiseRun,
    SketchRun,
    TangentRank,
    TwoHeads,
    function_gap,
    param_distance_mod_perm,
)

Theory = ModuleType | SimpleNamespace


# ---- C1: exact recovery and exact query counts --------------------------------------------------------

def claim_full_recovery(name: str, runs: Sequence[FullRun], *, theory: Theory = _theory) -> Claim:
    """max over the runs of max_ab |A_hat - theory.recovered_matrix(A, u)| against 0, within the smallest
    of the runs' floating-point tolerances (``tolerances.fp_tolerance_full``)."""
    errors = [float(np.max(np.abs(run.A_hat - theory.recovered_matrix(run.A, run.u)))) for run in runs]
    tols = [tolerances.fp_tolerance_full(run.A, run.u, run.s) for run in runs]
    return check_absolute(name, max(errors), 0.0, min(tols),
                          "fp error model: 100 eps (max ||J_ab||_1 max(1,|f|) + max |D|)",
                          fp=True).with_details(errors=errors, tolerances=tols)


def claim_full_query_count(name: str, runs: Sequence[FullRun], *, theory: Theory = _theory) -> Claim:
    """The oracle's counters summed over the runs against sum_d theory.query_count_full(d), exactly."""
    return check_exact(name, sum(run.n_queries for run in runs), sum(theory.query_count_full(run.d) for run in runs),
                       "counts are integers")


def claim_sketch_recovery(name: str, run: SketchRun, *, theory: Theory = _theory) -> Claim:
    """max_ab |A_hat - theory.recovered_matrix(A, u)| of one sketch against 0, within
    ``tolerances.sketch_tolerance`` (the entry bound x (1 + kappa_r)^2 max(1, max|A|))."""
    err = float(np.max(np.abs(run.A_hat - theory.recovered_matrix(run.A, run.u))))
    tol = tolerances.sketch_tolerance(run.A, run.u, run.info.K, run.info.Q, run.info.kappa)
    return check_absolute(name, err, 0.0, tol, "entry fp bound x (1 + s_1/s_r of Q^T Y1)^2 max(1, max|A|)",
                          fp=True).with_details(tolerance=tol)


def claim_sketch_query_count(name: str, run: SketchRun, *, theory: Theory = _theory) -> Claim:
    """The oracle's counter of one sketch against theory.query_count_low_rank(d, k), exactly."""
    return check_exact(name, run.n_queries, theory.query_count_low_rank(run.d, run.k), "counts are integers")


def claim_parameter_dimension(name: str, tr: TangentRank, *, theory: Theory = _theory) -> Claim:
    """The measured rank of the tangent map (U, V, u) -> (U V^T, u) against theory.dof_lower_bound(d, r),
    exactly. Details: the singular values on either side of the rank decision (``gap``)."""
    return check_exact(name, tr.rank, theory.dof_lower_bound(tr.d, tr.r),
                       "integer; numerical rank, threshold s_1 max(shape) eps").with_details(gap=tr.gap)


# ---- C2: the sketch-size threshold ---------------------------------------------------------------------

def measured_threshold(runs: Sequence[SketchRun], rel_tols: Sequence[float]) -> int:
    """k* = the smallest k from which on every sketch recovers A within its relative tolerance."""
    order = sorted(range(len(runs)), key=lambda i: runs[i].k)
    kstar = runs[order[-1]].k + 1
    for i in reversed(order):
        if runs[i].rel_err <= rel_tols[i]:
            kstar = runs[i].k
        else:
            break
    return kstar


def claim_sketch_threshold(name: str, runs: Sequence[SketchRun], *, theory: Theory = _theory) -> Claim:
    """The measured threshold k* (each sketch judged against ``tolerances.sketch_rel_tolerance``) against
    theory.sketch_threshold(d, r), exactly. Details: ``kstar``, ``rel_tol`` and the Eckart-Young ``floor``
    (``theory.eckart_young_floor``) of every run."""
    rel_tols = [tolerances.sketch_rel_tolerance(run.A, run.u, run.info.K, run.info.Q, run.info.kappa) for run in runs]
    floors = [theory.eckart_young_floor(run.A, run.k) for run in runs]
    kstar = measured_threshold(runs, rel_tols)
    return check_exact(name, kstar, theory.sketch_threshold(runs[0].d, runs[0].r),
                       "integer; k >= r within fp tolerance, k < r above the Eckart-Young floor"
                       ).with_details(kstar=kstar, rel_tol=rel_tols, floor=floors)


# ---- C3: i.i.d. noise ----------------------------------------------------------------------------------

def claim_noise_mse(name: str, run: NoiseRun, i: int, *, theory: Theory = _theory) -> Claim:
    """Mean ||A_hat - A||_F^2 at n = n_list[i] against theory.predicted_mse(J, sigma, n), 3.29 SE, with
    J = theory.first_order_jacobian(A, u, s=s) at the run's value-query amplitude s."""
    n = run.n_list[i]
    J = theory.first_order_jacobian(run.A, run.u, s=run.s)
    pred = float(theory.predicted_mse(J, run.sigma, n))
    return check_zscore(name, float(run.mse()[i]), pred, float(run.mse_se()[i]),
                        f"Monte-Carlo SE of the mean over R = {run.R} replicates (n = {n} repeats per query)")


def claim_noise_mse_source(name: str, run: NoiseRun, *, theory: Theory = _theory) -> Claim:
    """Mean ||A_hat - A||_F^2 with noise on one kind of query only (``run.source``, one n) against that part
    of theory.predicted_mse_by_source(J, sigma, n), 3.29 SE."""
    n = run.n_list[0]
    J = theory.first_order_jacobian(run.A, run.u, s=run.s)
    pred = float(theory.predicted_mse_by_source(J, run.sigma, n)[run.source])
    return check_zscore(name, float(run.mse()[0]), pred, float(run.mse_se()[0]),
                        f"Monte-Carlo SE of the mean over R = {run.R} replicates (noise on the {run.source} only)")


def claim_noise_query_count(name: str, run: NoiseRun, *, theory: Theory = _theory) -> Claim:
    """The oracle's counter after all noisy runs against theory.noisy_query_count(d, n_list, R), exactly."""
    return check_exact(name, run.n_queries, theory.noisy_query_count(run.u.size, run.n_list, run.R),
                       "R (d^2 + 2d) sum(n): every repeat is a real call")


def claim_rms_rate(name: str, fit: LogLogFit, *, theory: Theory = _theory) -> Claim:
    """|slope_RMS - theory.rms_exponent()| <= 3.29 SE_boot, slope_RMS = slope_MSE / 2."""
    return check_zscore(name, fit.slope / 2, theory.rms_exponent(), fit.slope_se / 2,
                        "bootstrap SE of the RMS exponent over replicates (normal rule, alpha = 1e-3)"
                        ).with_details(slope=fit.slope / 2, slope_se=fit.slope_se / 2)


# ---- C4: adversarial noise -----------------------------------------------------------------------------

def claim_worst_coefficient(name: str, run: AdversaryRun, *, theory: Theory = _theory) -> Claim:
    """The worst adversary's first-order coefficient (err(+tau) - err(-tau))/(2 tau) at the smallest tau
    against theory.worst_coefficient(J, a, b), J = theory.first_order_jacobian(A, u, s=s), within the
    floating-point bound 2 fp_tol / (2 tau).

    Details: the theory's Jacobian ``J`` and ``rho`` = |err(+tau)| / (tau ||J_ab||_1) at every tau.
    """
    a, b = run.worst
    i = int(np.argmin(run.taus))
    J = theory.first_order_jacobian(run.A, run.u, s=run.s)
    tol = tolerances.fp_tolerance_full(run.A, run.u, run.s) / float(run.taus[i])
    rho = np.abs(run.err_plus) / (run.taus * float(J.l1()[a, b]))
    return check_absolute(name, float(run.odd_slope[i]), theory.worst_coefficient(J, a, b), tol,
                          "fp bound of two estimator runs over 2 tau; the O(tau^2) remainder is far smaller",
                          fp=True).with_details(J=J, rho=rho)


def random_adversary_excess(run: AdversaryRun, *, theory: Theory = _theory) -> float:
    """max over entries and random adversaries of (|err_ab| - tau B_ab) / (2 |kappa_ab| tau^2 B_ab + t_fp).

    B = theory.first_order_bound(J) is the theory's first-order bound per unit tau (||J_ab||_1 for
    Theorem 3(1)) and t_fp = tolerances.fp_tolerance_full(A, u, s); the value is <= 1 exactly when every error is
    within tau B_ab (1 + 2 |kappa_ab| tau) + t_fp. A negative value means every error is below the
    first-order bound.
    """
    t = run.tau_adv
    B = theory.first_order_bound(theory.first_order_jacobian(run.A, run.u, s=run.s))
    fp_tol = tolerances.fp_tolerance_full(run.A, run.u, run.s)
    excess = (np.abs(run.random_err) - t * B) / (2 * np.abs(run.kappa) * t**2 * B + fp_tol)
    return float(np.max(excess))


def claim_random_adversaries(name: str, run: AdversaryRun, *, theory: Theory = _theory) -> Claim:
    """Random-sign adversaries: every error within tau B_ab (1 + 2 |kappa_ab| tau) + t_fp
    (see :func:`random_adversary_excess`; the claim is excess <= 1)."""
    return check_upper(name, random_adversary_excess(run, theory=theory), 1.0,
                       "excess over the proved first-order bound, in units of 2x the measured 2nd-order term + fp",
                       fp=True)


# ---- C5: multi-head ------------------------------------------------------------------------------------

def claim_same_function(name: str, heads: TwoHeads, sequences: Sequence[np.ndarray], *,
                        theory: Theory = _theory) -> Claim:
    """max |f_theta - f_theta'| over the sequences, theta' = theory.equivalent_multihead(A, u1, u2, w),
    against 0 within the rounding bound 2 (d + L_max) eps max_X sum_h sum_i s_hi (|u_h| + |u'_h|)^T |x_i|
    (the attention weights are computed identically, the value dot products round). Details: ``max_f``."""
    theta2 = theory.equivalent_multihead(heads.A, heads.u1, heads.u2, heads.w)
    gap = function_gap(heads.theta, theta2, sequences)
    tol = tolerances.two_head_rounding(heads.u1.size, gap.L_max, gap.scale)
    return check_absolute(name, gap.max_diff, 0.0, tol,
                          "rounding bound of two evaluations: 2 (d + L) eps sum_i s_i |u|^T |x_i|",
                          fp=True).with_details(max_f=gap.max_f)


def claim_head_distance(name: str, heads: TwoHeads, *, theory: Theory = _theory) -> Claim:
    """The parameter distance between theta and theta' = theory.equivalent_multihead(...), minimised over
    head matchings, against theory.head_distance(w), within a few ulps of the norms."""
    theta = heads.theta
    theta2 = theory.equivalent_multihead(heads.A, heads.u1, heads.u2, heads.w)
    tol = tolerances.norm_rounding([float(np.linalg.norm(v)) for v in (*theta[1], *theta2[1])])
    return check_absolute(name, param_distance_mod_perm(theta, theta2), theory.head_distance(heads.w), tol,
                          "fp rounding of the norms", fp=True)
