"""The claims of chapter 'attention-query-learning': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then what
:mod:`.model_runs` measured, then the wrong-theory hook ``theory=``, from which every prediction is read.
A named wrong theory is passed as ``theory=variant(theory, f=theory.wrong_f)``. The floating-point
tolerances are error analysis and come from :mod:`.tolerances`.

The recovery errors of the exact learners (C1), the first-order coefficient measured at tau = 1e-7 (C4a),
the excess of the random adversaries, measured in units of a second-order term (C4b), and the recovery
error of the rank-one-probe learner (C5a) are floating-point quantities: their claims are ``fp=True``, so the
table shows the bound they met, never their digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType, SimpleNamespace

import numpy as np

from theorylib.core.claims import Claim, check_absolute, check_exact, check_upper, check_zscore, strict_max, strict_min
from theorylib.core.rates import LogLogFit

from . import theory as _theory
from . import tolerances
from .model_runs import (
    AdversaryRun,
    CertificateRun,
    FullRun,
    HeadsRank,
    NoiseRun,
    ProbeCertificateRun,
    ProbeRun,
    SketchRun,
    TangentRank,
    TransformerRun,
)

Theory = ModuleType | SimpleNamespace


# ---- C1: exact recovery (the query counts are the learners' own design: unit tests) ----------------

def claim_full_recovery(name: str, runs: Sequence[FullRun], *, theory: Theory = _theory) -> Claim:
    """max over the runs of max_ab |A_hat - theory.recovered_matrix(A, u)| against 0, within the smallest
    of the runs' floating-point tolerances (``tolerances.fp_tolerance_full``)."""
    errors = [float(np.max(np.abs(run.A_hat - theory.recovered_matrix(run.A, run.u)))) for run in runs]
    tols = [tolerances.fp_tolerance_full(run.A, run.u, run.s) for run in runs]
    return check_absolute(name, strict_max(errors), 0.0, strict_min(tols),
                          "fp error model: 100 eps (max ||J_ab||_1 max(1,|f|) + max |D|)",
                          fp=True).with_details(errors=errors, tolerances=tols)




def claim_sketch_recovery(name: str, run: SketchRun, *, theory: Theory = _theory) -> Claim:
    """max_ab |A_hat - theory.recovered_matrix(A, u)| of one sketch against 0, within
    ``tolerances.sketch_tolerance`` (the entry bound x (1 + kappa_r)^2 max(1, max|A|))."""
    err = float(np.max(np.abs(run.A_hat - theory.recovered_matrix(run.A, run.u))))
    tol = tolerances.sketch_tolerance(run.A, run.u, run.info.K, run.info.Q, run.info.kappa)
    return check_absolute(name, err, 0.0, tol, "entry fp bound x (1 + s_1/s_r of Q^T Y1)^2 max(1, max|A|)",
                          fp=True).with_details(tolerance=tol)




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


def certificate_ratio(run: CertificateRun, *, theory: Theory = _theory) -> float:
    """max over adversaries and entries of |A_hat_ab - A_ab| / (E_ab + t_fp), E = theory.certified_bound(...)
    from what the learner saw, t_fp = tolerances.fp_tolerance_full(A, u, s) (0 where E is infinite)."""
    E = theory.certified_bound(run.u_hat, run.D, run.tau, run.s)
    fp_tol = tolerances.fp_tolerance_full(run.A, run.u, run.s)
    return float(np.max(np.abs(run.err) / (E + fp_tol)))


def claim_certificate(name: str, run: CertificateRun, *, theory: Theory = _theory) -> Claim:
    """Every adversary's error within the learner's finite-tau certificate (plus rounding): ratio <= 1."""
    return check_upper(name, certificate_ratio(run, theory=theory), 1.0,
                       "proved bound for every |xi| <= tau, at every tau; + the C1 fp bound")


def certificate_ratio_at(run: CertificateRun, tau: float, *, theory: Theory = _theory) -> float:
    """max over the adversaries at tolerance ``tau`` and the entries of |A_hat_ab - A_ab| / E_ab."""
    sel = run.tau == tau
    E = theory.certified_bound(run.u_hat[sel], run.D[sel], run.tau[sel], run.s)
    return float(np.max(np.abs(run.err[sel]) / E))


def claim_certificate_tightness(name: str, run: CertificateRun, *, theory: Theory = _theory) -> Claim:
    """The worst ratio |error| / certificate at the smallest tau against its tau -> 0 limit
    max_ab ||J_ab||_1 / c_ab, J = theory.first_order_jacobian(A, u, s=s), c = theory.certificate_coefficient(A,
    u, s=s) (attained by the adversaries +-tau sign(J_ab)). Tolerance: the O(tau) remainder, linear in tau, extrapolated
    from the two smallest tolerances (|r(tau_2) - r(tau_1)| tau_1 / (tau_2 - tau_1)), doubled, + 1e-9."""
    taus = np.unique(run.tau)
    if taus.size < 2:
        raise ValueError("the tightness check needs at least two tolerances")
    r1, r2 = (certificate_ratio_at(run, float(t), theory=theory) for t in taus[:2])
    tol = 2 * abs(r2 - r1) * taus[0] / (taus[1] - taus[0]) + 1e-9
    if not np.isfinite(tol):
        tol = 0.0
    limit = np.max(theory.first_order_jacobian(run.A, run.u, s=run.s).l1()
                   / theory.certificate_coefficient(run.A, run.u, s=run.s))
    return check_absolute(name, r1, float(limit), tol,
                          "O(tau) remainder extrapolated from the two smallest tau, x2")


def probe_certificate_ratio(run: ProbeCertificateRun, *, theory: Theory = _theory) -> float:
    """max over the adversaries of |D - logit p| / (L + t_fp) for the probe each one targets,
    L = theory.certified_logit_bound(...) from what the learner saw, t_fp = tolerances.fp_tolerance_full(A, u, s)."""
    L = theory.certified_logit_bound(run.u_hat, run.D, run.tau, run.s)
    L_t = L[np.arange(run.tau.size), run.probe[:, 0], run.probe[:, 1]]
    fp_tol = tolerances.fp_tolerance_full(run.A, run.u, run.s)
    return float(np.max(np.abs(run.err) / (L_t + fp_tol)))


def claim_probe_certificate(name: str, run: ProbeCertificateRun, *, theory: Theory = _theory) -> Claim:
    """Every probe's logit error under its own worst adversaries within its certificate L (plus rounding):
    ratio <= 1. The adversaries reach L up to its second-order slack, so a bound low at second order fails."""
    return check_upper(name, probe_certificate_ratio(run, theory=theory), 1.0,
                       "proved bound per probe for every |xi| <= tau; + the C1 fp bound")


# ---- C5: the paper's O(rd) learner -------------------------------------------------------------------

def probe_tolerance(run: ProbeRun) -> float:
    """The run's relative fp tolerance (``tolerances.probe_rel_tolerance`` at its measured tangent rank)."""
    return tolerances.probe_rel_tolerance(run.A, run.u, run.Q, run.W, run.tangent_sv, run.tangent_rank)


def claim_probe_recovery(name: str, run: ProbeRun, *, theory: Theory = _theory) -> Claim:
    """||A_hat - theory.recovered_matrix(A, u)||_F / ||A||_F of the O(rd) learner against 0, within the
    first-order fp tolerance :func:`probe_tolerance`."""
    err = float(np.linalg.norm(run.A_hat - theory.recovered_matrix(run.A, run.u)) / np.linalg.norm(run.A))
    tol = probe_tolerance(run)
    return check_absolute(name, err, 0.0, tol,
                          "probe rounding through the logit, over the smallest tangent singular value",
                          fp=True).with_details(tolerance=tol)




def claim_probe_tangent_ranks(name: str, runs: Sequence[ProbeRun], *, theory: Theory = _theory) -> Claim:
    """The measured ranks of the probes on the tangent space, one per run, against
    theory.probe_tangent_rank(d, r, m), exactly (the whole list)."""
    measured = [run.tangent_rank for run in runs]
    predicted = [theory.probe_tangent_rank(run.d, run.r, run.m) for run in runs]
    claim = check_exact(name, sum(measured), sum(predicted), "integers, summed over the runs; every run's rank "
                        "must equal its prediction")
    return replace(claim, passed=claim.passed and measured == predicted).with_details(
        measured=measured, predicted=predicted)


def recovered_below_bound(runs: Sequence[ProbeRun], *, theory: Theory = _theory) -> int:
    """How many runs with m < theory.probe_measurements_needed(d, r) recovered A within their tolerance."""
    return sum(1 for run in runs
               if run.m < theory.probe_measurements_needed(run.d, run.r) and run.rel_err <= probe_tolerance(run))


def claim_no_recovery_below_bound(name: str, runs: Sequence[ProbeRun], *, theory: Theory = _theory) -> Claim:
    """The number of runs with fewer than theory.probe_measurements_needed(d, r) probes that recovered A,
    against 0, exactly."""
    return check_exact(name, recovered_below_bound(runs, theory=theory), 0,
                       "a continuum of rank-r matrices answers like A below r(2d - r)")



# ---- C6: the one-layer Transformer reduction -----------------------------------------------------------

def relu_parameter_error(run: TransformerRun, *, theory: Theory = _theory) -> float:
    """max-entry |learnt - theory.relu_canonical(a, W, b)| over (a, W, b); inf if the unit counts differ."""
    a_c, W_c, b_c = theory.relu_canonical(run.a, run.W, run.b)
    r = run.fit.relu
    if r.a.shape != np.shape(a_c) or r.W.shape != np.shape(W_c):
        return float("inf")
    return float(max(np.max(np.abs(r.a - a_c)), np.max(np.abs(r.W - W_c)), np.max(np.abs(r.b - b_c))))


def claim_relu_parameters(name: str, run: TransformerRun, *, theory: Theory = _theory) -> Claim:
    """The FFN learner's hidden units against theory.relu_canonical(a, W, b) (the truth modulo the
    symmetries), max-entry, within ``tolerances.relu_tolerance`` (kink location and gradient jumps)."""
    tol = tolerances.relu_tolerance(run.fit.relu)
    return check_absolute(name, relu_parameter_error(run, theory=theory), 0.0, tol,
                          "fp: kink location 6 eps max(1,|f|)/|slope jump|, gradient jumps 4 eps max(1,|f|)/h",
                          fp=True).with_details(tolerance=tol, answer_err=run.answer_err)


def claim_transformer_attention(name: str, run: TransformerRun, *, theory: Theory = _theory) -> Claim:
    """max_ab |A_hat - theory.recovered_matrix(A, gamma)| of the reduction against 0, within
    ``tolerances.transformer_tolerance`` (the probes' rounding over rho'^2)."""
    err = float(np.max(np.abs(run.fit.A_hat - theory.recovered_matrix(run.A, run.fit.gamma))))
    tol = tolerances.transformer_tolerance(run.fit)
    return check_absolute(name, err, 0.0, tol, "fp: probe rounding through the logit, over rho'^2",
                          fp=True).with_details(tolerance=tol)


# ---- C7: two heads ---------------------------------------------------------------------------------------

def claim_heads_rank(name: str, run: HeadsRank, *, theory: Theory = _theory) -> Claim:
    """The numerical rank of the two-head answers' Jacobian against theory.multihead_jacobian_rank(d, shared),
    exactly. Details: the singular values on either side of the rank decision (``gap``) and their ratios to the
    threshold (``margins``)."""
    return check_exact(name, run.rank, theory.multihead_jacobian_rank(run.d, run.shared),
                       "integer; numerical rank at s_1 max(n, p) eps, above the rounding (about eps s_1) of J "
                       "and of its SVD (Weyl)").with_details(gap=run.gap, margins=run.margins)
