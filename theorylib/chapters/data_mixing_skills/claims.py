"""The claims of chapter 'data-mixing-skills': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the
name first, then the measured data, then the wrong-theory hook ``theory=``.
Every tolerance and error budget of the chapter lives here.
"""

from __future__ import annotations

import math
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import optimize, stats

from theorylib.core.claims import (
    DEFAULT_ALPHA,
    Claim,
    check_absolute,
    check_interval,
    check_upper,
    z_critical,
)
from theorylib.core.rates import fit_loglog, ols_slope

from . import theory as _theory

Theory = ModuleType | SimpleNamespace

#: z of a one-sided test at the book's false-alarm level (3.09)
Z_ONE_SIDED = float(stats.norm.isf(DEFAULT_ALPHA))


def _se(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """Monte-Carlo standard error of the mean along ``axis``."""
    return np.std(x, axis=axis, ddof=1) / np.sqrt(x.shape[axis])


def claim_exact_law(name: str, excess: list[np.ndarray], allocations, M, m0: int, sigma, *,
                    theory: Theory = _theory) -> Claim:
    """Mean excess losses at every allocation and domain against the exact finite-sample law.

    excess[a]: (R, K) per-replicate L_k - sigma_k^2 at allocations[a]. Each mean is compared with
    the law by z = (mean - law) / SE; the claim holds when max |z| <= z_{1 - alpha / (2 A K)}
    (Bonferroni over the A K tests, family-wise false-alarm level alpha).
    """
    z, means, preds, ses = [], [], [], []
    for ex, n in zip(excess, allocations, strict=True):
        pred = theory.exact_excess(n, M, m0, sigma)
        mean, se = ex.mean(axis=0), _se(ex)
        z.append((mean - pred) / se)
        means.append(mean)
        preds.append(pred)
        ses.append(se)
    z = np.array(z)
    bound = z_critical(DEFAULT_ALPHA / z.size)
    measured = float(np.max(np.abs(z))) if np.all(np.isfinite(z)) else math.inf
    return check_upper(name, measured, bound,
                       f"max |z| over {z.size} CLT z-scores, Bonferroni at alpha = 1e-3").with_details(
        z=z, means=np.array(means), preds=np.array(preds), se=np.array(ses))


def claim_rate(name: str, excess: np.ndarray, D_grid, M, m0: int, sigma, pi,
               rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """Log-log slope of the pi-average excess over D (w = pi fixed) against the exact law's slope.

    excess: (R, G) per-replicate pi-average excess, independent replicates per D. The measured
    slope's 99.9% interval is a bootstrap over replicates; the predicted slope is the same
    least-squares slope taken of the exact law on the same D (finite-D curvature included).
    """
    D_grid = np.asarray(D_grid)
    pi = np.asarray(pi, dtype=float)
    fit = fit_loglog(D_grid, replicates=excess, paired=False, n_boot=4000, rng=rng)
    alloc = [np.rint(pi * D).astype(int) for D in D_grid]
    pred_curve = np.array([pi @ theory.exact_excess(n, M, m0, sigma) for n in alloc])
    pred_slope = float(ols_slope(np.log(D_grid), np.log(np.abs(pred_curve) + 1e-300))[0])
    return check_interval(name, fit.slope, pred_slope, fit.ci_low, fit.ci_high,
                          "bootstrap over replicates of the least-squares log-log slope").with_details(
        fit=fit, pred_curve=pred_curve)


def _selection_band(var: np.ndarray, n, N: int, z: float):
    """Skills that can trade places with the infinite-data learner's choice T_N(w).

    The empirical (1/D) sum_i x_is^2 has sd sd_s = sqrt(sum_k n_k 2 Var_k(x_s)^2) / D (Gaussian
    x). A selection error swaps a kept skill s (in T_N(w)) with a left-out skill t, which needs
    hat q_t > hat q_s although q_s >= q_t; the band holds both members of every pair with
    q_s - q_t <= z sqrt(sd_s^2 + sd_t^2). Its level z is per pair, with no correction for the
    many pairs: a heuristic budget, not a proved one. Returns the boolean band mask (P,).
    """
    n = np.asarray(n, dtype=float)
    D = n.sum()
    q = (n / D) @ var
    sd = np.sqrt((n * 2) @ var**2) / D
    kept = np.zeros(q.size, dtype=bool)
    kept[np.argsort(-q, kind="stable")[:N]] = True
    close = q[kept][:, None] - q[~kept][None, :] <= z * np.hypot(sd[kept][:, None],
                                                                 sd[~kept][None, :])
    band = np.zeros(q.size, dtype=bool)
    band[np.flatnonzero(kept)[close.any(axis=1)]] = True
    band[np.flatnonzero(~kept)[close.any(axis=0)]] = True
    return band


def claim_capacity_split(name: str, counts: np.ndarray, configs, var: np.ndarray, m0: int,
                         alpha: float, *, theory: Theory = _theory) -> Claim:
    """Selected specialized skills of domain 1 against the Zipf capacity law N_1(w).

    counts: (R, C, K) kept skills of each domain's own block. Budget per config: the proved
    integer rounding |count - N_1(w)| < 1 of the infinite-data learner, plus one per skill of
    block 1 in the swap band (skills that can trade places with T_N(w) at z_{1-alpha/2}).
    The claim holds when max_c |mean count - N_1| / (1 + band_c) <= 1.
    """
    configs = np.asarray(configs)
    K = configs.shape[1] - 1
    own1 = (var[0] > 0) & (np.sum(var > 0, axis=0) == 1)
    z = z_critical(DEFAULT_ALPHA)
    ratios, preds, bands = [], [], []
    for j, row in enumerate(configs):
        n, N = row[:K], int(row[K])
        w = n / n.sum()
        pred = float(theory.zipf_allocation(N, m0, w, alpha)[0])
        band = int(np.sum(_selection_band(var, n, N, z) & own1))
        ratios.append(abs(counts[:, j, 0].mean() - pred) / (1 + band))
        preds.append(pred)
        bands.append(band)
    measured = float(np.max(ratios)) if np.all(np.isfinite(ratios)) else math.inf
    return check_upper(name, measured, 1.0,
                       "integer rounding (< 1, proved) plus one per skill in the 3.29-sd "
                       "swap band").with_details(preds=np.array(preds), bands=np.array(bands),
                                                       ratios=np.array(ratios))


def _capacity_prediction(theory: Theory, row, var, sigma, m0: int):
    K = len(row) - 1
    n, N = np.asarray(row[:K]), int(row[K])
    D = int(n.sum())
    w = n / D
    counts, tails = theory.population_selection(var, w, N)
    noise = theory.noise_term(w, D, counts, tails, sigma, m0)
    return tails + noise, noise


def _allowances(row, var, sigma, noise, z: float):
    """Swap allowance sum_{s in band} Var_k(x_s) and the second-order allowance
    (N + 1) / min_k n_k of the noise term (cf. n / (n - p - 1) - 1 = (p + 1) / (n - p - 1))."""
    K = len(row) - 1
    n, N = np.asarray(row[:K]), int(row[K])
    band = _selection_band(var, n, N, z)
    swap = var[:, band].sum(axis=1)
    second = (N + 1) / n.min() * np.abs(noise)
    return swap, second


def claim_unlearned(name: str, unlearned: np.ndarray, configs, var: np.ndarray, *,
                    theory: Theory = _theory) -> Claim:
    """Loss from the skills the capacity-N learner leaves out against the infinite-data tails A_k.

    unlearned: (R, C, K) per-replicate sum_{s not kept} Var_k(x_s). Only skills in the swap
    band can be kept differently from T_N(w) (up to the band's level), each moving A_k by at most
    its variance: the budget of |mean - A_k| is the band's total variance on domain k (a worst
    case).
    An empty band adds the rounding bound P eps sum_s Var_k(x_s) of two sums of P positive terms
    taken in different orders. Holds when max |mean - A_k| / budget <= 1.
    """
    configs = np.asarray(configs)
    R, C, K = unlearned.shape
    z_band = z_critical(DEFAULT_ALPHA)
    ratios, preds = np.empty((C, K)), np.empty((C, K))
    for j, row in enumerate(configs):
        n, N = row[:K], int(row[K])
        _, tails = theory.population_selection(var, n / n.sum(), N)
        swap = var[:, _selection_band(var, n, N, z_band)].sum(axis=1)
        fp = var.shape[1] * np.finfo(float).eps * var.sum(axis=1)  # two summation orders
        ratios[j] = np.abs(unlearned[:, j].mean(axis=0) - tails) / (swap + fp)
        preds[j] = tails
    measured = float(np.max(ratios)) if np.all(np.isfinite(ratios)) else math.inf
    return check_upper(name, measured, 1.0, "variance of the skills in the 3.29-sd swap "
                       "band").with_details(ratios=ratios, preds=preds)


def claim_noise_term(name: str, excess: np.ndarray, unlearned: np.ndarray, counts: np.ndarray,
                     configs, sigma, m0: int, var: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """Estimation part of the capacity-N learner's loss against the leading-order noise term.

    Measured: the mean over replicates of L_k - sigma_k^2 - (unlearned part), at every config and
    domain. Predicted: ``theory.noise_term`` at the infinite-data selection. Budget: z SE (z
    Bonferroni over the C K tests; the SE is the replicates' and never below the analytic sd of a
    weighted chi^2, sqrt(2 (m0 a_0^2 + N_k a_k^2)), a_0 = sum_j w_j s_j / D, a_k = s_k / (w_k D),
    s_j = sigma_j^2 + unlearned_j, because R is small), plus the relative second-order term
    (N + 1) / min_k n_k of the noise term (cf. n / (n - p - 1) - 1 = (p + 1) / (n - p - 1)).
    Holds when max |mean - pred| / budget <= 1.
    """
    configs = np.asarray(configs)
    sigma = np.asarray(sigma, dtype=float)
    R, C, K = excess.shape
    z = z_critical(DEFAULT_ALPHA / (C * K))
    est = excess - unlearned
    ratios, preds = np.empty((C, K)), np.empty((C, K))
    for j, row in enumerate(configs):
        n, N = row[:K], int(row[K])
        D = int(n.sum())
        w = n / D
        pop_counts, tails = theory.population_selection(var, w, N)
        pred = theory.noise_term(w, D, pop_counts, tails, sigma, m0)
        s = sigma**2 + unlearned[:, j].mean(axis=0)
        a0, ak = np.sum(w * s) / D, s / (w * D)
        sd = np.sqrt(2 * (m0 * a0**2 + counts[:, j].mean(axis=0) * ak**2))
        se = np.maximum(np.std(est[:, j], axis=0, ddof=1), sd) / np.sqrt(R)
        budget = z * se + (N + 1) / n.min() * np.abs(pred)
        ratios[j] = np.abs(est[:, j].mean(axis=0) - pred) / budget
        preds[j] = pred
    measured = float(np.max(ratios)) if np.all(np.isfinite(ratios)) else math.inf
    return check_upper(name, measured, 1.0, "Bonferroni z SE (analytic floor) + second-order "
                       "term").with_details(ratios=ratios, preds=preds, means=est.mean(axis=0))


def claim_coupling(name: str, excess: np.ndarray, configs, base: int, raised: int,
                   var: np.ndarray, sigma, m0: int, *, theory: Theory = _theory) -> Claim:
    """Global coupling: the change of domain 2's loss when only domain 1's data grow.

    Measured: the paired mean of L_2(raised) - L_2(base) over replicates. Predicted: the change of
    L_2^inf + noise term. Tolerance: t_{R-1, 1-alpha/2} SE (Student, R replicates) plus both
    configs' swap and second-order allowances. The one-sided lower confidence bound of the change
    (t_{R-1, 1-alpha}) is returned in the details: positive when the rise is resolved.
    """
    configs = np.asarray(configs)
    R = excess.shape[0]
    diff = excess[:, raised, 1] - excess[:, base, 1]
    se = float(_se(diff))
    slack = 0.0
    preds = []
    for j in (base, raised):
        pred, noise = _capacity_prediction(theory, configs[j], var, sigma, m0)
        swap, second = _allowances(configs[j], var, sigma, noise, z_critical(DEFAULT_ALPHA))
        slack += float(swap[1] + second[1])
        preds.append(float(pred[1]))
    tol = float(stats.t.isf(DEFAULT_ALPHA / 2, R - 1)) * se + slack
    lower = float(diff.mean()) - float(stats.t.isf(DEFAULT_ALPHA, R - 1)) * se
    return check_absolute(name, float(diff.mean()), preds[1] - preds[0], tol,
                          "Student t over replicates (alpha = 1e-3) + swap and second-order "
                          "allowances").with_details(se=se, slack=slack, lower=lower)


def _gain_claim(name: str, curve: np.ndarray, grid, j_alt: int, j_opt: int, D: int, M, m0, sigma,
                pi, theory: Theory, what: str) -> Claim:
    diff = curve[:, j_alt] - curve[:, j_opt]
    se = float(_se(diff))
    pred = float(pi @ (theory.exact_excess([grid[j_alt], D - grid[j_alt]], M, m0, sigma)
                       - theory.exact_excess([grid[j_opt], D - grid[j_opt]], M, m0, sigma)))
    mean = float(diff.mean())
    z = z_critical(DEFAULT_ALPHA)
    strict = se > 0 and mean / se >= Z_ONE_SIDED
    ok = se > 0 and abs(mean - pred) <= z * se and strict
    tol = z * se
    return Claim(name, mean, pred, "zscore", tol, f"{z:.2f} SE = {tol:.3g}; m/SE >= 3.09",
                 f"paired (common random numbers) CLT; {what}", bool(ok), DEFAULT_ALPHA).with_details(
        se=se, n_opt=int(grid[j_opt]), n_alt=int(grid[j_alt]))


def claim_beats_pi(name: str, curve: np.ndarray, grid, D: int, M, m0: int, sigma, pi, *,
                   theory: Theory = _theory) -> Claim:
    """The predicted optimum n_1* beats the evaluation mixture n_1 = pi_1 D by the predicted gain.

    curve: (R, G) per-replicate pi-average excess on the grid (nested prefixes). Measured: the
    paired mean gain L(pi D) - L(n_1*); it must match the exact law's gain within 3.29 SE and be
    positive beyond 3.09 SE (one-sided).
    """
    grid = np.asarray(grid)
    pi = np.asarray(pi, dtype=float)
    n_opt = theory.grid_optimum(D, grid, M, m0, sigma, pi)
    j_opt = int(np.argmin(np.abs(grid - n_opt)))
    j_pi = int(np.argmin(np.abs(grid - pi[0] * D)))
    return _gain_claim(name, curve, grid, j_pi, j_opt, D, M, m0, sigma, pi, theory,
                       "gain over the evaluation mixture")


def claim_beats_mirror(name: str, curve: np.ndarray, grid, D: int, M, m0: int, sigma, pi, *,
                       theory: Theory = _theory) -> Claim:
    """The predicted optimum beats its mirror image D - n_1* (weight moved to the easier domain)."""
    grid = np.asarray(grid)
    pi = np.asarray(pi, dtype=float)
    n_opt = theory.grid_optimum(D, grid, M, m0, sigma, pi)
    j_opt = int(np.argmin(np.abs(grid - n_opt)))
    j_mirror = int(np.argmin(np.abs(grid - (D - n_opt))))
    return _gain_claim(name, curve, grid, j_mirror, j_opt, D, M, m0, sigma, pi, theory,
                       "gain over the mirror allocation")


# ---------------------------------------------------------------- C5: fit small, predict large
def _law_losses(theory: Theory, params, configs, m0: int, M_spec: int) -> np.ndarray:
    """(C, K) losses of ``theory.mixing_law`` with params (c, alpha, s2_1, ..., s2_K) at configs."""
    configs = np.asarray(configs)
    K = configs.shape[1] - 1
    out = np.empty((configs.shape[0], K))
    for j, row in enumerate(configs):
        n = row[:K].astype(float)
        out[j] = theory.mixing_law(n / n.sum(), int(row[K]), int(n.sum()), params[0], params[1],
                                   np.asarray(params[2:]), m0, M_spec)
    return out


def fit_mixing_law(losses: np.ndarray, configs, m0: int, M_spec: int, *,
                   theory: Theory = _theory):
    """Weighted least squares of the law's (c, alpha, sigma_k^2) on measured losses.

    losses: (R, C, K) per-replicate L_k at configs (rows (n_1, ..., n_K, N)); the weights are
    the inverse squared Monte-Carlo standard errors. Returns (params, cov, chi2_dof): cov is
    (J^T W J)^{-1}, the parameters' uncertainty from the Monte-Carlo noise of the losses. It is not
    scaled by chi2 / dof: a misfit of the law's shape must show in its prediction, not widen the
    tolerance (chi2_dof is returned for the record).
    """
    mean, se = losses.mean(axis=0), _se(losses)
    start = np.concatenate([[0.2, 0.5], mean.min(axis=0)])
    lower = np.concatenate([[1e-4, 0.05], np.zeros(mean.shape[1])])
    upper = np.concatenate([[10.0, 3.0], np.full(mean.shape[1], 10 * mean.max())])

    def resid(p):
        r = ((_law_losses(theory, p, configs, m0, M_spec) - mean) / se).ravel()
        return np.where(np.isfinite(r), r, 1e6)

    fit = optimize.least_squares(resid, start, bounds=(lower, upper), x_scale="jac")
    dof = max(mean.size - fit.x.size, 1)
    chi2_dof = float(np.sum(fit.fun**2) / dof)
    cov = np.linalg.pinv(fit.jac.T @ fit.jac)
    return fit.x, cov, chi2_dof


def quadratic_argmin(w, y) -> np.ndarray:
    """Minimizer -b / (2 a) of the least-squares parabola a w^2 + b w + c through (w, y).

    y: (G,) or (B, G); one argmin per row.
    """
    coef = np.polyfit(np.asarray(w, dtype=float), np.asarray(y, dtype=float).T, 2)
    return -coef[1] / (2 * coef[0])


def _predicted_argmin(theory: Theory, params, w_grid, N: int, D: int, m0: int, M_spec: int,
                      pi) -> float:
    configs = [[w, 1 - w, N] for w in w_grid]
    curve = _law_losses_w(theory, params, configs, D, m0, M_spec) @ pi
    return float(quadratic_argmin(w_grid, curve))


def _law_losses_w(theory: Theory, params, rows, D: int, m0: int, M_spec: int) -> np.ndarray:
    """(G, K) law losses at mixtures rows (w_1, ..., w_K, N) and total D."""
    return np.array([theory.mixing_law(np.asarray(r[:-1]), int(r[-1]), D, params[0], params[1],
                                       np.asarray(params[2:]), m0, M_spec) for r in rows])


def claim_extrapolated_optimum(name: str, small: np.ndarray, small_configs, curve: np.ndarray,
                               w_grid, N: int, D: int, m0: int, M_spec: int, pi,
                               rng: np.random.Generator, *, theory: Theory = _theory) -> Claim:
    """Fit small, predict large: the optimal mixture at an unseen scale from the law fitted on
    small scales, against the measured optimum.

    small: (R_s, C, K) measured L_k at small_configs; curve: (R, G) measured pi-average loss at
    the mixtures w_1 in w_grid, at capacity N and D samples (common random numbers across the
    grid). Measured: the argmin of the least-squares parabola through the mean curve; predicted:
    the same estimator applied to the fitted law's pi-average curve on the same grid. Tolerance:
    z_{1-alpha/2} sqrt(se_m^2 + se_p^2), se_m the bootstrap (over replicates) sd of the measured
    argmin, se_p the fitted parameters' covariance (Monte-Carlo noise of the small-scale losses)
    propagated by the delta method.
    """
    w_grid = np.asarray(w_grid, dtype=float)
    pi = np.asarray(pi, dtype=float)
    measured = float(quadratic_argmin(w_grid, curve.mean(axis=0)))
    boot = rng.integers(0, curve.shape[0], size=(2000, curve.shape[0]))
    se_m = float(np.std(quadratic_argmin(w_grid, curve[boot].mean(axis=1)), ddof=1))
    try:
        params, cov, chi2_dof = fit_mixing_law(small, small_configs, m0, M_spec, theory=theory)
        pred = _predicted_argmin(theory, params, w_grid, N, D, m0, M_spec, pi)
        grad = np.empty(params.size)
        for i in range(params.size):
            h = 1e-6 * max(abs(params[i]), 1e-3)
            q = params.copy()
            q[i] += h
            grad[i] = (_predicted_argmin(theory, q, w_grid, N, D, m0, M_spec, pi) - pred) / h
        se_p = float(np.sqrt(max(grad @ cov @ grad, 0.0)))
    except (ValueError, FloatingPointError, np.linalg.LinAlgError, ZeroDivisionError):
        params, chi2_dof, pred, se_p = np.full(2 + small.shape[2], np.nan), math.inf, math.nan, math.inf
    tol = z_critical(DEFAULT_ALPHA) * math.hypot(se_m, se_p) if math.isfinite(se_p) else 0.0
    return check_absolute(name, measured, pred, tol,
                          "3.29 SE: bootstrap of the measured argmin + fitted law's parameter "
                          "covariance (delta method)").with_details(
        params=params, chi2_dof=chi2_dof, se_m=se_m, se_p=se_p)
