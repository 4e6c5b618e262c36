"""The claims of chapter 'dpo-choice-models': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the
measured data (from ``model``), then the wrong-theory hook ``theory=``, from which every prediction is read.
Tolerances and error models live here.
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import (
    Claim,
    check_absolute,
    check_chi2,
    check_exact,
    check_interval,
    check_upper,
    check_zscore,
    strict_max,
)
from theorylib.core.rates import fit_loglog

from . import theory as _theory
from .model import Curvature, Identification, LengthRun, RateRun, TwoItemRun

Theory = ModuleType | SimpleNamespace

FP_SLACK = 1e-12  # rounding of the O(1) quantities compared (values, gaps, log-probabilities)
ROUND_REL = 1e-14  # relative rounding of a population loss value (a mean of <= 56 O(1) terms, ~50 ulp)


def _uniform(pairs: np.ndarray) -> np.ndarray:
    return np.full(len(pairs), 1.0 / len(pairs))


def _complete(K: int) -> np.ndarray:
    return np.array([(i, j) for i in range(K) for j in range(i + 1, K)])


# ------------------------------------------------------------------------------------------------
# C1: identification


def predicted_identified(idn: Identification, *, theory: Theory = _theory) -> np.ndarray:
    """(n_data, n_loss) booleans: which combinations the theory says recover r*."""
    return np.array([[bool(theory.identifies(d, loss.score, loss.link, loss.margin)) for loss in idn.losses]
                     for d in idn.data_keys])


def claim_policy_recovered(name: str, idn: Identification, r: np.ndarray, pi_ref: np.ndarray, beta: float,
                           *, theory: Theory = _theory) -> Claim:
    """Where the theory predicts identification, every start's policy equals the Gibbs optimum.

    measured = max |log pi_hat - log pi*| over those combinations and all starts; tolerance 2/beta times
    the largest first-order error bound of those fits (|log pi_hat_i - log pi*_i| <= 2 ||h_hat - r*||_inf
    / beta), plus rounding."""
    pred = predicted_identified(idn, theory=theory)
    if not pred.any():
        return check_upper(name, np.inf, 0.0, "the theory predicts no identified combination")
    log_star = np.log(theory.gibbs_policy(pi_ref, r - r.mean(), beta))
    err = np.abs(np.log(idn.policies[pred]) - log_star).max()
    tol = 2 / beta * float(idn.bound[pred].max()) + FP_SLACK
    return check_upper(name, float(err), 0.0, tol=tol, fp=True,
                       why="first-order bound 2||grad||/mu_min of each fit, times 2/beta for log pi")


def claim_identification_set(name: str, idn: Identification, *, theory: Theory = _theory) -> Claim:
    """The number of combinations where 'every start reaches r* within its error bound' disagrees with
    the theory's prediction: exactly 0."""
    pred = predicted_identified(idn, theory=theory)
    meas = (idn.err <= idn.bound).all(axis=2)
    return check_exact(name, int((pred != meas).sum()), 0,
                       why="recovered = within the first-order bound; misspecified fits miss r* by >> bound")


def witness_tolerance(w: Curvature) -> float:
    """Error bound of the finite-difference curvature: the Richardson estimate's truncation error is below
    the change |lam(eps) - lam(2 eps)| of the plain estimates (whose own error is a third of it, and the
    extrapolated one's O(eps^4) far smaller), plus rounding: each loss value errs by at most
    ROUND_REL (1 + |L|), an entry of the Richardson Hessian by (5/3) of that over eps^2, and an
    eigenvalue by (K - 1) times the largest entry error."""
    k = w.h.size - 1
    rounding = k * (5 / 3) * ROUND_REL * (1 + abs(w.value)) / w.eps**2
    return abs(w.lam_eps - w.lam_2eps) + rounding


def claim_witness_curvature(name: str, w: Curvature, r: np.ndarray, data: str, score: str, link: str, *,
                            theory: Theory = _theory) -> Claim:
    """Smallest Hessian eigenvalue (sum-zero subspace) of the population loss at the witness point,
    measured by second differences of the loss values alone, against the closed form A(h)."""
    pairs = _complete(r.size)
    probs = theory.cdf(data, r[pairs[:, 0]] - r[pairs[:, 1]])
    A = theory.expected_hessian(w.h, pairs, _uniform(pairs), probs, score, link)
    Q, _ = np.linalg.qr(np.eye(r.size)[:, :-1] - 1.0 / r.size)
    pred = float(np.linalg.eigvalsh(Q.T @ A @ Q)[0])
    return check_absolute(name, w.lam, pred, witness_tolerance(w), fp=True,
                          why="Richardson second differences: truncation estimate plus rounding bound")


# ------------------------------------------------------------------------------------------------
# C2: closed forms


def claim_path_transfer(name: str, runs: list[tuple[str, str, np.ndarray, np.ndarray, float]], *,
                        theory: Theory = _theory) -> Claim:
    """Path design: learned edge gaps against G^{-1}(F(gap of r*)), for every (F, G) run.

    ``runs``: (data link, loss link, reward gaps, learned gaps, error bound of the fit)."""
    err = strict_max(np.abs(dh - theory.link_transfer(dr, f, g)) for f, g, dr, dh, _ in runs)
    tol = 2 * max(b for *_, b in runs) + FP_SLACK
    return check_upper(name, err, 0.0, tol=tol, fp=True,
                       why="a gap errs by at most twice the fit's first-order bound on h")


def claim_margin_gap(name: str, p_grid, gamma_grid, gaps: np.ndarray, bounds: np.ndarray, *,
                     theory: Theory = _theory) -> Claim:
    """K = 2 margin DPO: learned gaps against log a(p, gamma) on the grid, and F_gamma(learned gap) = p.

    F_gamma has slope <= 1/4, so its value errs by less than the gap does."""
    pred = np.array([[float(theory.margin_gap(p, g)) for g in gamma_grid] for p in p_grid])
    back = np.array([[float(theory.margin_cdf(gaps[a, b], g)) for b, g in enumerate(gamma_grid)]
                     for a in range(len(p_grid))])
    err = strict_max([np.abs(gaps - pred), np.abs(back - np.asarray(p_grid, dtype=float)[:, None])])
    return check_upper(name, err, 0.0, tol=2 * float(bounds.max()) + FP_SLACK, fp=True,
                       why="a gap errs by at most twice the fit's first-order bound on h")


def claim_length(name: str, run: LengthRun, r: np.ndarray, alpha: float, *,
                 theory: Theory = _theory) -> Claim:
    """Length-corrected DPO learns r*, plain DPO r* + alpha l (both centered)."""
    e1 = np.abs(run.h_corrected - theory.length_limit(r, run.lengths, alpha, True)).max()
    e2 = np.abs(run.h_plain - theory.length_limit(r, run.lengths, alpha, False)).max()
    return check_upper(name, strict_max([e1, e2]), 0.0, tol=run.bound + FP_SLACK, fp=True,
                       why="the fits' first-order error bound")


def two_item_z(run: TwoItemRun, *, theory: Theory = _theory) -> np.ndarray:
    """Standardized residuals of the learned gaps against logit(Phi(gap)), delta-method SE."""
    se = 1 / np.sqrt(run.N * run.p_hat * (1 - run.p_hat))
    return (run.gaps - theory.link_transfer(run.dr, "probit", "logistic")) / se


def claim_two_item(name: str, run: TwoItemRun, *, theory: Theory = _theory) -> Claim:
    """Finite N, K = 2: the learned gaps are logit(p_hat); chi^2 of the four z-scores."""
    return check_chi2(name, two_item_z(run, theory=theory),
                      why="delta method: SE of logit(p_hat) is 1/sqrt(N p_hat (1 - p_hat))")


# ------------------------------------------------------------------------------------------------
# C3: rates and constants


def squared_errors(run: RateRun, target: np.ndarray) -> np.ndarray:
    """(R, n_N) squared distances of the centered fits to ``target`` (dropped replicates removed)."""
    d = ((run.h_hat - (target - target.mean())) ** 2).sum(axis=2)
    if np.isnan(d).any():
        keep = ~np.isnan(d).any(axis=0)
        d = d[:, keep]
    return d.T


def extrapolate(N: np.ndarray, y: np.ndarray, se: np.ndarray) -> tuple[float, float, float]:
    """Weighted least squares y = c0 + c1 / N: (c0, SE of c0, c1); removes the O(1/N) finite-N term."""
    X = np.stack([np.ones_like(N), 1 / N], axis=1)
    W = 1 / se**2
    cov = np.linalg.inv(X.T @ (W[:, None] * X))
    c = cov @ X.T @ (W * y)
    return float(c[0]), float(np.sqrt(cov[0, 0])), float(c[1])


def scaled_mse(run: RateRun, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N, N * MSE and its Monte-Carlo SE at every N."""
    N = np.array(run.N_grid, dtype=float)
    sq = squared_errors(run, r)
    return N, N * sq.mean(axis=0), N * sq.std(axis=0, ddof=1) / np.sqrt(sq.shape[0])


def scaled_trace_cov(run: RateRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N, N tr Cov(h_hat) and its SE (delta method: the SE of the mean of ||h_hat - mean||^2)."""
    N = np.array(run.N_grid, dtype=float)
    ys, ses = [], []
    for m in range(len(N)):
        h = run.h_hat[m][~np.isnan(run.h_hat[m]).any(axis=1)]
        d = ((h - h.mean(axis=0)) ** 2).sum(axis=1)
        R = d.size
        ys.append(N[m] * d.mean() * R / (R - 1))
        ses.append(N[m] * d.std(ddof=1) / np.sqrt(R))
    return N, np.array(ys), np.array(ses)


def claim_rate(name: str, run: RateRun, r: np.ndarray, rng: np.random.Generator, *,
               theory: Theory = _theory) -> Claim:
    """Slope of log RMSE against log N (half the MSE slope), 99.9% bootstrap CI over replicates."""
    sq = squared_errors(run, r)
    fit = fit_loglog(np.array(run.N_grid, dtype=float), replicates=sq, rng=rng)
    return check_interval(name, fit.slope / 2, theory.rmse_exponent(), fit.ci_low / 2, fit.ci_high / 2,
                          why="percentile bootstrap over independent replicates at each N").with_details(fit=fit)


def claim_fisher_constant(name: str, run: RateRun, r: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """Well specified: N MSE extrapolated to N = infinity (fit c0 + c1/N) against tr(I_F^+)."""
    N, y, se = scaled_mse(run, r)
    c0, s0, c1 = extrapolate(N, y, se)
    pairs = _complete(r.size)
    pred = theory.fisher_trace(r, pairs, _uniform(pairs), run.data)
    return check_zscore(name, c0, pred, s0, why="WLS intercept, SE from the per-N Monte-Carlo SEs"
                        ).with_details(se=s0, c1=c1, y=y, y_se=se)


def claim_sandwich_constant(name: str, run: RateRun, r: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """Misspecified: N tr Cov(h_hat) extrapolated to N = infinity against tr(A^+ B A^+) at h_G."""
    N, y, se = scaled_trace_cov(run)
    c0, s0, c1 = extrapolate(N, y, se)
    pairs = _complete(r.size)
    pred = theory.sandwich_trace(run.h_pop, r, pairs, _uniform(pairs), run.data, run.loss.link,
                                 run.loss.margin)
    return check_zscore(name, c0, pred, s0, why="WLS intercept, SE from the per-N delta-method SEs"
                        ).with_details(se=s0, c1=c1, y=y, y_se=se)


def limit_fit(run: RateRun, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Extrapolated mean of h_hat, its estimated covariance, and the degrees of freedom of that estimate.

    Per N the mean has E = h_G + theta_1 / N + O(N^-2) and covariance Sigma_N / R_N, Sigma_N -> A^+BA^+;
    the fit c0 + c1 / N uses fixed weights N R_N (the leading precisions up to the common Sigma), so c0 is
    a fixed linear combination sum_m a_m mean_m, whose covariance sum_m a_m^2 Sigma_hat_m / R_m is
    estimated from the replicates themselves (no formula of the theory enters). Its Satterthwaite degrees
    of freedom, with Sigma_N ~ Sigma / N: nu = (sum v_m)^2 / sum v_m^2 / (R_m - 1), v_m = a_m^2 / (N_m R_m)."""
    K = r.size
    Q, _ = np.linalg.qr(np.eye(K)[:, :-1] - 1.0 / K)
    N = np.array(run.N_grid, dtype=float)
    means, covs, Rs = [], [], []
    for m in range(len(N)):
        h = run.h_hat[m][~np.isnan(run.h_hat[m]).any(axis=1)] @ Q
        means.append(h.mean(axis=0))
        covs.append(np.cov(h, rowvar=False) / h.shape[0])
        Rs.append(h.shape[0])
    R = np.array(Rs, dtype=float)
    X = np.stack([np.ones_like(N), 1 / N], axis=1)
    w = N * R
    a = np.linalg.solve(X.T @ (w[:, None] * X), X.T * w)[0]  # intercept weights, sum a = 1
    c0 = a @ np.array(means)
    cov = np.einsum("m,mij->ij", a**2, np.array(covs))
    v = a**2 / w
    nu = float(v.sum() ** 2 / (v**2 / (R - 1)).sum())
    return Q @ c0, Q @ cov @ Q.T, nu


def limit_z(run: RateRun, r: np.ndarray, *, theory: Theory = _theory) -> np.ndarray:
    """The extrapolated mean of h_hat minus the predicted limit, whitened by its estimated covariance.

    With an estimated covariance the squared norm T^2 is Hotelling's, nu p / (nu - p + 1) F(p, nu - p + 1);
    the residuals are rescaled so that their squared norm is the chi^2_p quantile of the same tail
    probability (a factor 1 + O(p / nu))."""
    K = r.size
    Q, _ = np.linalg.qr(np.eye(K)[:, :-1] - 1.0 / K)
    c0, cov, nu = limit_fit(run, r)
    L = np.linalg.cholesky(Q.T @ cov @ Q)
    z = np.linalg.solve(L, Q.T @ (c0 - theory.estimator_limit(run.h_pop, r)))
    k = K - 1
    t2 = float(z @ z)
    tail = stats.f.logsf(t2 * (nu - k + 1) / (nu * k), k, nu - k + 1)
    equiv = float(stats.chi2.isf(np.exp(tail), k)) if tail > -700 else t2
    return z * np.sqrt(equiv / t2) if t2 > 0 else z


def claim_limit(name: str, run: RateRun, r: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """Misspecified: the mean of h_hat, extrapolated to N = infinity (fit c0 + c1 / N), sits at the
    population minimizer h_G, not at r*."""
    return check_chi2(name, limit_z(run, r, theory=theory),
                      why="K-1 whitened coordinates of the WLS intercept (finite-N bias theta_1/N fitted), "
                      "Hotelling-corrected")
