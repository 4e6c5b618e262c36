"""The claims of chapter 'lowrank-residual-coresets': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then
the measured data (from ``model``), then the wrong-theory hook ``theory=``, from which every
prediction is read. Tolerances and error models are here, not in the theory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import (
    DEFAULT_ALPHA,
    Claim,
    check_chi2,
    check_interval,
    check_upper,
    strict_max,
)
from theorylib.core.rates import fit_loglog, ols_slope

from . import theory as _theory
from .model import EstimatorRun

Theory = ModuleType | SimpleNamespace

ENUM_RTOL = 1e-10  # relative budget for enumeration vs closed form: <= 1001 terms of size O(10), rounding ~1e-14


# --------------------------------------------------------------------------------------------------
# volume sampling (enumeration)


def _max_rel_dev(measured: Sequence[float], predicted: Sequence[float]) -> float:
    m, p = np.asarray(measured, dtype=float), np.asarray(predicted, dtype=float)
    return float(np.max(np.abs(m / p - 1)))


def claim_volume_expectation(name: str, enum: dict[int, dict[str, float]], sig2: np.ndarray, *,
                             theory: Theory = _theory) -> Claim:
    """Enumerated volume-sampling mean of |A - pi_T A|^2 equals (k+1) e_{k+1}/e_k, to rounding, every k."""
    ks = sorted(enum)
    dev = _max_rel_dev([enum[k]["volume_mean"] for k in ks],
                       [theory.volume_sampling_expectation(sig2, k) for k in ks])
    return check_upper(name, dev, ENUM_RTOL, fp=True,
                       why="exact identity; enumeration and recursion round at ~1e-14 relative").with_details(
        dev=dev)


def claim_gram_sum(name: str, enum: dict[int, dict[str, float]], sig2: np.ndarray, *,
                   theory: Theory = _theory) -> Claim:
    """Cauchy-Binet: sum over k-subsets of det(A_T A_T^T) equals e_k(sigma^2), every k."""
    ks = sorted(enum)
    dev = _max_rel_dev([enum[k]["gram_sum"] for k in ks], [theory.elementary_symmetric(sig2, k) for k in ks])
    return check_upper(name, dev, ENUM_RTOL, fp=True,
                       why="exact identity; sums of <= 364 determinants round at ~1e-14 relative").with_details(
        dev=dev)


def claim_volume_bound(name: str, enum: dict[int, dict[str, float]], sig2: np.ndarray, *,
                       theory: Theory = _theory) -> Claim:
    """The volume-sampling mean is at most (k+1) Phi_k: the largest ratio over k is <= 1."""
    ks = sorted(enum)
    ratio = strict_max([enum[k]["volume_mean"] / theory.volume_sampling_bound(sig2, k) for k in ks])
    return check_upper(name, ratio, 1.0, tol=ENUM_RTOL,
                       why="a proved inequality, with the rounding budget of the enumeration").with_details(
        ratio=ratio)


# --------------------------------------------------------------------------------------------------
# the residual-sampling estimator: exact mean and variance


def mean_zscores(runs: Sequence[EstimatorRun], *, theory: Theory = _theory) -> np.ndarray:
    """(mean of the estimates - predicted mean) / (sample sd / sqrt(reps)), one per run."""
    z = []
    for r in runs:
        pred = theory.estimator_mean(r.interp_mean, float(np.mean(r.e)))
        z.append((float(np.mean(r.est)) - pred) / float(np.std(r.est, ddof=1) / np.sqrt(r.est.size)))
    return np.array(z)


def claim_unbiased(name: str, runs: Sequence[EstimatorRun], *, theory: Theory = _theory,
                   alpha: float = DEFAULT_ALPHA) -> Claim:
    """E mu_hat = mu for each loss: the sum of squared z-scores against chi^2 with one dof per loss."""
    z = mean_zscores(runs, theory=theory)
    return check_chi2(name, z, alpha=alpha,
                      why="CLT: a mean of reps bounded i.i.d. estimates, SE = sd/sqrt(reps)").with_details(z=z)


def sample_variance_and_se(est: np.ndarray) -> tuple[float, float]:
    """The sample variance s^2 of the estimates and its standard error sqrt((mu_4 - s^4) / reps)."""
    x = est - est.mean()
    R = x.size
    s2 = float(x @ x / (R - 1))
    m4 = float(np.mean(x**4))
    return s2, float(np.sqrt(max(m4 - s2**2, 0.0) / R))


def detectable_z(dof: int, alpha: float = DEFAULT_ALPHA) -> float:
    """The |z| that alone takes a chi^2 statistic with dof degrees of freedom past its 1 - alpha quantile."""
    return math.sqrt(float(stats.chi2.ppf(1 - alpha, dof)))


def variance_zscores(runs: Sequence[EstimatorRun], *, theory: Theory = _theory) -> np.ndarray:
    """(sample variance - predicted variance) / SE, SE from the sample fourth central moment."""
    z = []
    for r in runs:
        s2, se = sample_variance_and_se(r.est)
        z.append((s2 - theory.estimator_variance(r.e, r.p, r.m)) / se)
    return np.array(z)


def claim_variance(name: str, runs: Sequence[EstimatorRun], *, theory: Theory = _theory,
                   alpha: float = DEFAULT_ALPHA) -> Claim:
    """Var mu_hat = (1/m)[sum e^2/(n^2 p) - (sum e/n)^2] for each loss: chi^2 of the z-scores."""
    z = variance_zscores(runs, theory=theory)
    return check_chi2(name, z, alpha=alpha,
                      why="CLT for the sample variance, SE^2 = (mu_4 - s^4)/reps").with_details(z=z)


def mse_zscores(runs: Sequence[EstimatorRun], *, theory: Theory = _theory) -> np.ndarray:
    """(mean squared error about mu - predicted variance) / SE of the mean squared error, one per run."""
    z = []
    for r in runs:
        sq = r.err**2
        z.append((float(sq.mean()) - theory.estimator_variance(r.ell, r.p, r.m))
                 / float(sq.std(ddof=1) / np.sqrt(sq.size)))
    return np.array(z)


def claim_sensitivity_mse(name: str, runs: Sequence[EstimatorRun], *, theory: Theory = _theory,
                          alpha: float = DEFAULT_ALPHA) -> Claim:
    """Sensitivity sampling is unbiased with variance (1/m)[sum l^2/(n^2 p) - mu^2]: chi^2 over the settings."""
    z = mse_zscores(runs, theory=theory)
    return check_chi2(name, z, alpha=alpha,
                      why="CLT for the mean squared error about mu, SE = sd(err^2)/sqrt(reps)").with_details(z=z)


# --------------------------------------------------------------------------------------------------
# rates


def claim_rate_in_m(name: str, m_list: Sequence[int], sq_errors: np.ndarray, rng: np.random.Generator, *,
                    theory: Theory = _theory, alpha: float = DEFAULT_ALPHA) -> Claim:
    """The RMSE exponent in m: half the bootstrap slope of log MSE on log m contains the prediction."""
    fit = fit_loglog(np.asarray(m_list, dtype=float), replicates=sq_errors, paired=False, rng=rng, alpha=alpha)
    return check_interval(name, fit.slope / 2, theory.rmse_exponent_in_m(), fit.ci_low / 2, fit.ci_high / 2,
                          alpha=alpha,
                          why="bootstrap over replicates (independent per m) of the MSE slope, halved").with_details(
        fit=fit)


def claim_rate_in_phi(name: str, phis: Sequence[float], runs: Sequence[EstimatorRun], rng: np.random.Generator,
                      *, theory: Theory = _theory, alpha: float = DEFAULT_ALPHA) -> Claim:
    """RMSE against Phi: the measured log-log slope's bootstrap CI contains the slope of the exact curve.

    The prediction is the least-squares slope of log theory.residual_rmse(...) on log Phi at the
    realized row sets, so the finite-size curvature of the curve is not charged to the check.
    """
    phis = np.asarray(phis, dtype=float)
    sq = np.column_stack([r.err**2 for r in runs])
    fit = fit_loglog(phis, replicates=sq, paired=False, rng=rng, alpha=alpha)
    curve = np.array([theory.residual_rmse(r.ell, r.e, r.p, r.m) for r in runs])
    pred, _ = ols_slope(np.log(phis), np.log(curve))
    return check_interval(name, fit.slope / 2, float(pred), fit.ci_low / 2, fit.ci_high / 2, alpha=alpha,
                          why="bootstrap over replicates (independent per noise level) of the MSE slope, "
                              "halved").with_details(fit=fit, curve=curve)


# --------------------------------------------------------------------------------------------------
# high-probability guarantees


def hoeffding_deviation(half_width: float, m: int, delta: float) -> float:
    """Hoeffding's inequality: a mean of m i.i.d. variables in an interval of half-width h deviates from its
    mean by more than h sqrt(2 ln(2/delta) / m) with probability at most delta (the concentration tool that
    turns a predicted range into a radius).

    Kept here, outside the mutated theory, and named untested in the chapter's closing section: the radius
    is checked for validity only, so a larger radius, or one smaller by a constant factor, passes every
    claim (in theory.py nine of its ten mutants survive). Its formula is pinned by a unit test.
    """
    return half_width * math.sqrt(2 * math.log(2 / delta) / m)


def binomial_cap(reps: int, delta: float, cells: int, alpha: float = DEFAULT_ALPHA) -> int:
    """The (1 - alpha/cells) quantile of Binomial(reps, delta): at most this many failures per cell."""
    return int(stats.binom.ppf(1 - alpha / cells, reps, delta))


def radius(run: EstimatorRun, kind: str, delta: float, *, theory: Theory = _theory) -> float:
    """The proved radius: Hoeffding on [-R, R] ('additive') or on [0, mu + 2R] ('relative'), R from the theory."""
    if kind == "additive":
        return hoeffding_deviation(theory.summand_bound(run.lam, run.q), run.m, delta)
    if kind == "relative":
        return hoeffding_deviation(theory.sensitivity_range_bound(run.mu, run.lam, run.q) / 2, run.m, delta)
    raise ValueError(f"kind = {kind!r} must be 'additive' or 'relative'")


def failure_counts(runs: Sequence[EstimatorRun], delta: float, kinds: Sequence[str], *,
                   theory: Theory = _theory) -> np.ndarray:
    """How often |estimate - mu| exceeds the proved radius, per run."""
    return np.array([int(np.sum(np.abs(r.err) > radius(r, kind, delta, theory=theory)))
                     for r, kind in zip(runs, kinds, strict=True)])


def claim_guarantee(name: str, runs: Sequence[EstimatorRun], kinds: Sequence[str], delta: float, *,
                    theory: Theory = _theory, alpha: float = DEFAULT_ALPHA) -> Claim:
    """In every cell, failures of the radius stay within the Binomial(reps, delta) quantile (Bonferroni)."""
    fails = failure_counts(runs, delta, kinds, theory=theory)
    reps = min(r.est.size for r in runs)
    cap = binomial_cap(reps, delta, len(runs), alpha)
    return check_upper(name, int(fails.max()), cap,
                       why=f"P(fail) <= delta per replicate; Binomial quantile at 1 - alpha/{len(runs)} "
                           "(Bonferroni over the cells)").with_details(fails=fails, cap=cap)


def claim_sensitivity_range(name: str, runs: Sequence[EstimatorRun], *, theory: Theory = _theory) -> Claim:
    """The largest summand l_i / (n p_i) of sensitivity sampling (G/n, attained on T) is <= mu + 2R, every run.

    measured = the largest ratio of that summand to the bound over the runs; predicted 1.
    """
    ratios = []
    for r in runs:
        pos = r.p > 0
        top = float(np.max(r.ell[pos] / (r.ell.size * r.p[pos])))
        ratios.append(top / theory.sensitivity_range_bound(r.mu, r.lam, r.q))
    return check_upper(name, strict_max(ratios), 1.0, tol=1e-12,
                       why="a proved inequality, with room for rounding (~1e-15 relative)").with_details(
        ratios=np.array(ratios))
