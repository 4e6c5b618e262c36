"""The claims of chapter 'voting-margin-bounds': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then
the measured data, then the wrong-theory hook ``theory=``. Every tolerance and error budget is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import DEFAULT_ALPHA, Claim, check_upper, z_critical

from . import theory as _theory

Theory = ModuleType | SimpleNamespace

# The Theta-level allowance of the attainable-margin claims: theta* / sqrt(ln(N0/n)/n) is a constant
# up to lower-order terms that the theory does not quantify; we allow it to drift by 10% over a sweep.
DRIFT = 0.10


def pearson_merged(observed: np.ndarray, expected: np.ndarray, min_expected: float = 5.0) -> tuple[float, int]:
    """Pearson's X^2 after merging adjacent bins until each holds >= ``min_expected`` expected counts.

    Returns (X^2, degrees of freedom = merged bins - 1). A merged bin with zero expectation and a
    positive count gives X^2 = inf (the law is impossible).
    """
    o_bins, e_bins, o_acc, e_acc = [], [], 0.0, 0.0
    for o, e in zip(observed, expected, strict=True):
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= min_expected:
            o_bins.append(o_acc)
            e_bins.append(e_acc)
            o_acc, e_acc = 0.0, 0.0
    if o_bins:
        o_bins[-1] += o_acc
        e_bins[-1] += e_acc
    else:
        o_bins, e_bins = [o_acc], [e_acc]
    o, e = np.array(o_bins), np.array(e_bins)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(e > 0, (o - e) ** 2 / e, np.where(o > 0, np.inf, 0.0))
    return float(terms.sum()), len(o_bins) - 1


def claim_sparsification_law(name: str, counts: Sequence[np.ndarray], gammas: Sequence[float],
                             ks: Sequence[int], *, alpha: float = DEFAULT_ALPHA,
                             theory: Theory = _theory) -> Claim:
    """The histograms of B = k (y g + 1)/2 against ``theory.sparsified_margin_pmf`` (pooled Pearson test).

    Each cell (realized margin gamma, size k) gives X^2 with (merged bins - 1) degrees of freedom; the
    cells are independent, so the sum is chi^2 with the summed degrees of freedom; pass when its
    upper-tail probability is >= alpha.
    """
    stat, dof = 0.0, 0
    for c, g, k in zip(counts, gammas, ks, strict=True):
        c = np.asarray(c, dtype=float)
        pmf = np.asarray(theory.sparsified_margin_pmf(g, k), dtype=float)
        x2, d = pearson_merged(c, c.sum() * pmf)
        stat, dof = stat + x2, dof + d
    crit = float(stats.chi2.isf(alpha, max(dof, 1)))
    ok = bool(np.isfinite(stat) and stat <= crit)
    return Claim(name, stat, float(dof), "chi2", crit - dof, f"chi2_{dof} <= {crit:.3g}",
                 "Pearson goodness of fit, bins with expectation < 5 merged, cells pooled; "
                 f"false alarm {alpha:g}", ok, alpha).with_details(dof=dof, crit=crit)


def claim_hoeffding(name: str, margins: Sequence[np.ndarray], gammas: Sequence[float],
                    ks: Sequence[int], theta: float, *, alpha: float = DEFAULT_ALPHA,
                    theory: Theory = _theory) -> Claim:
    """The two tails of the sparsification lemma stay below ``theory.hoeffding_tail``.

    Cells with gamma > theta/2: P(y g <= theta/2) <= hoeffding_tail(gamma - theta/2, k); cells with
    gamma <= 0: P(y g > theta/2) <= hoeffding_tail(theta/2 - gamma, k). Measured: the largest
    standardized excess (freq - bound)/SE over the cells, SE = sqrt(b (1 - b)/R) at the bound b
    (floored at 1/R); it must stay below the one-sided Bonferroni critical value at level alpha.
    """
    z_ex, used = [], 0
    for m, g, k in zip(margins, gammas, ks, strict=True):
        m = np.asarray(m, dtype=float)
        if g > theta / 2:
            freq, b = float(np.mean(m <= theta / 2 + 1e-12)), float(theory.hoeffding_tail(g - theta / 2, k))
        elif g <= 0:
            freq, b = float(np.mean(m > theta / 2 + 1e-12)), float(theory.hoeffding_tail(theta / 2 - g, k))
        else:
            continue
        used += 1
        R = m.size
        se = np.sqrt(max(min(b, 1.0) * (1 - min(b, 1.0)), 1.0 / R) / R)
        z_ex.append((freq - b) / se)
    if not used:
        raise ValueError("no cell has gamma > theta/2 or gamma <= 0")
    crit = float(stats.norm.isf(alpha / used))
    worst = float(np.max(z_ex))
    return check_upper(name, worst, crit, f"largest (frequency - bound)/SE over {used} cells <= one-sided "
                       f"Bonferroni critical value at false alarm {alpha:g}").with_details(z=np.array(z_ex))


def claim_chernoff(name: str, t_star: np.ndarray, p: np.ndarray, n: np.ndarray, log_term: np.ndarray, *,
                   theory: Theory = _theory) -> Claim:
    """The exact binomial deviations t* never exceed ``theory.chernoff_deviation`` (ratio <= 1).

    t*(n, p, delta) is computed exactly from the binomial CDF (no sampling, no tolerance needed:
    the decision is ratio < 1 and the grid has no ratio within 1e-6 of 1 under the true bound).
    """
    dev = np.array([theory.chernoff_deviation(pp, nn, ll) for pp, nn, ll in zip(p, n, log_term, strict=True)],
                   dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.asarray(t_star, dtype=float) / dev
    worst = float(np.max(ratio)) if np.all(np.isfinite(ratio)) else float("inf")
    return check_upper(name, worst, 1.0, "exact binomial CDF: t* / deviation <= 1 everywhere on the grid"
                       ).with_details(ratio=ratio)


def claim_inversion(name: str, pmfs: Sequence[np.ndarray], p: np.ndarray, n: np.ndarray,
                    delta: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """The inverted bound p <= ``theory.relative_deviation_bound``(p_hat, n, ln 1/delta) fails w.p. <= delta.

    Exact: for each (n, p, delta) of the grid, the Bin(n, p) probability of the p_hat = j/n at which the
    bound lies below p, divided by delta; measured = its maximum over the grid, which must be <= 1 (no
    tolerance: exact computation, and no ratio within rounding of 1 under the true bound).
    """
    fail = []
    for pmf, pp, nn, dd in zip(pmfs, p, n, delta, strict=True):
        phat = np.arange(len(pmf)) / nn
        ucb = np.asarray(theory.relative_deviation_bound(phat, nn, np.log(1 / dd)), dtype=float)
        fail.append(float(np.sum(np.asarray(pmf, dtype=float)[~(ucb >= pp)])) / dd)
    ratio = np.array(fail)
    return check_upper(name, float(np.max(ratio)), 1.0, "exact binomial probability that the inverted "
                       "bound lies below p, over delta: <= 1 everywhere on the grid").with_details(ratio=ratio)


def claim_hoeffding_exact(name: str, tails: np.ndarray, gammas: np.ndarray, thetas: np.ndarray,
                          ks: np.ndarray, *, theory: Theory = _theory) -> Claim:
    """The exact binomial tails P(y g <= theta/2) never exceed ``theory.hoeffding_tail``(gamma - theta/2, k).

    ``tails`` are exact (binomial CDF at the realized threshold) on a grid with gamma > theta/2; the
    largest ratio tail/bound must be <= 1 (no tolerance: exact computation, no ratio near a tie).
    """
    bounds = np.array([theory.hoeffding_tail(g - t / 2, k) for g, t, k in zip(gammas, thetas, ks, strict=True)],
                      dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.asarray(tails, dtype=float) / bounds
    worst = float(np.max(ratio)) if np.all(np.isfinite(ratio)) else float("inf")
    return check_upper(name, worst, 1.0, "exact binomial CDF: tail / Hoeffding bound <= 1 on the grid"
                       ).with_details(ratio=ratio)


def margin_slope(theta: np.ndarray, scale: np.ndarray) -> tuple[float, float, float]:
    """OLS slope b of mean log theta* on log scale over the sweep, its SE from the seed-to-seed spread.

    ``theta`` has shape (points, seeds). The slope is linear in the per-point means of log theta*, so
    SE^2 = sum_i c_i^2 s_i^2 / R with c_i the OLS weights and s_i the sample sd at point i.
    Returns (slope, SE, intercept).
    """
    lt = np.log(np.asarray(theta, dtype=float))
    lx = np.log(np.asarray(scale, dtype=float))
    R = lt.shape[1]
    y = lt.mean(axis=1)
    xc = lx - lx.mean()
    c = xc / (xc @ xc)
    b = float(c @ y)
    se = float(np.sqrt(np.sum(c**2 * lt.var(axis=1, ddof=1)) / R))
    return b, se, float(y.mean() - b * lx.mean())


def claim_margin_rate(name: str, theta: np.ndarray, n: np.ndarray, N0: np.ndarray, *,
                      alpha: float = DEFAULT_ALPHA, theory: Theory = _theory) -> Claim:
    """theta* is proportional to ``theory.margin_scale(n, N0)`` along the sweep: log-log slope 1.

    Tolerance: z_{1-alpha/2} SE (seed-to-seed spread) + ln(1 + DRIFT) / (range of log scale), the slope
    error a drift of the Theta-constant by DRIFT over the sweep can cause.
    """
    scale = np.array([theory.margin_scale(nn, NN) for nn, NN in zip(n, N0, strict=True)], dtype=float)
    if not np.all(np.isfinite(scale) & (scale > 0)):
        return Claim(name, float("nan"), 1.0, "absolute", 0.0, "scale undefined", "the predicted scale "
                     "must be finite and positive", False)
    span = float(np.log(scale).max() - np.log(scale).min())
    if span <= 0:
        return Claim(name, float("nan"), 1.0, "absolute", 0.0, "scale constant", "the predicted scale "
                     "must vary along the sweep", False)
    b, se, a = margin_slope(theta, scale)
    tol = z_critical(alpha) * se + np.log1p(DRIFT) / span
    ok = bool(np.isfinite(b) and abs(b - 1) <= tol)
    return Claim(name, b, 1.0, "absolute", float(tol), f"|b-1| <= {tol:.3g}",
                 f"{z_critical(alpha):.2f} SE of the slope from the seed-to-seed spread (false alarm {alpha:g}) plus a "
                 f"{DRIFT:.0%} drift of the constant over the sweep", ok, alpha
                 ).with_details(se=se, intercept=a, scale=scale, span=span)


def claim_margin_constant(name: str, theta: dict, *, alpha: float = DEFAULT_ALPHA,
                          theory: Theory = _theory) -> Claim:
    """theta* / ``theory.margin_scale`` does not depend on the class size at a fixed n.

    ``theta[(n, N0)]`` = the theta* of the seeds at that setting. For every n and every pair of class
    sizes, |log c_1 - log c_2| - z SE must stay <= ln(1 + DRIFT), c the mean ratio; z is the
    Bonferroni critical value over the pairs (two-sided, level alpha), SE by the delta method.
    """
    by_n: dict[int, list] = {}
    for (nn, NN), th in theta.items():
        th = np.asarray(th, dtype=float)
        s = float(theory.margin_scale(nn, NN))
        r = th / s
        if not (np.isfinite(s) and s > 0):
            return Claim(name, float("nan"), float(np.log1p(DRIFT)), "upper", 0.0, "scale undefined",
                         "the predicted scale must be finite and positive", False)
        by_n.setdefault(nn, []).append((np.log(r.mean()), r.std(ddof=1) / np.sqrt(r.size) / r.mean()))
    pairs = [(u, v) for rows in by_n.values() for i, u in enumerate(rows) for v in rows[i + 1:]]
    z = float(stats.norm.isf(alpha / (2 * len(pairs))))
    excess = [abs(u[0] - v[0]) - z * np.hypot(u[1], v[1]) for u, v in pairs]
    worst = float(np.max(excess))
    return check_upper(name, worst, float(np.log1p(DRIFT)), f"largest |log ratio| - {z:.2f} SE over "
                       f"{len(pairs)} pairs <= ln(1 + {DRIFT:g}), the Theta-level drift allowance"
                       ).with_details(pairs=len(pairs), z=z)


def claim_bound_consistency(name: str, err: np.ndarray, se: np.ndarray, theta: np.ndarray, n: np.ndarray,
                            N0: np.ndarray, delta: float, *, alpha: float = DEFAULT_ALPHA,
                            theory: Theory = _theory) -> Claim:
    """On the random-label instances the bound ``theory.thm_bound``(0, theta*^-, n, 2 N0, delta) is valid.

    A violation is an instance with err - z SE > bound (z one-sided at alpha/2): for a valid bound
    each instance violates with probability <= delta + alpha/2 independently, so the count must stay
    below the (1 - alpha) quantile of Binomial(instances, delta + alpha/2).
    """
    err, se, theta = (np.asarray(v, dtype=float).ravel() for v in (err, se, theta))
    n, N0 = np.asarray(n).ravel(), np.asarray(N0).ravel()
    zc = float(stats.norm.isf(alpha / 2))
    bounds = np.array([theory.thm_bound(0.0, t * (1 - 1e-9), int(nn), int(2 * NN), delta)
                       for t, nn, NN in zip(theta, n, N0, strict=True)], dtype=float)
    viol = int(np.sum(~(err - zc * se <= bounds)))
    cap = int(stats.binom.ppf(1 - alpha, err.size, delta + alpha / 2))
    return check_upper(name, viol, cap, f"violations of a valid bound ~ Bin({err.size}, <= delta + "
                       f"alpha/2); (1 - alpha) quantile, false alarm {alpha:g}").with_details(bounds=bounds)


def claim_erm_bound(name: str, pmfs: Sequence[np.ndarray], p: np.ndarray, n: np.ndarray, N0: np.ndarray,
                    delta: float, *, theory: Theory = _theory) -> Claim:
    """The bound ``theory.thm_bound``(tau, theta -> 1, n, 2 N0, delta) fails with probability <= delta.

    Setting s: empirical risk minimization over N0 independent hypotheses of true error p_s; its
    training error tau has the exact law ``pmfs[s]`` (of n tau) and its true error is p_s, so the
    failure probability is the mass of the tau = j/n with p_s > bound(j/n). Exact (no sampling):
    measured = the largest failure probability over the settings divided by delta, which must be
    <= 1. A bound that ignores tau or the class size fails with probability near 1. Details: the
    failure probabilities and the smallest bound - p over the tau of probability > 1e-12.
    """
    fail, slack = [], []
    for pmf, pp, nn, NN in zip(pmfs, p, n, N0, strict=True):
        pmf = np.asarray(pmf, dtype=float)
        idx = np.nonzero(pmf > 0)[0]
        bounds = np.array([theory.thm_bound(j / nn, 1 - 1e-9, int(nn), int(2 * NN), delta) for j in idx],
                          dtype=float)
        fail.append(float(np.sum(pmf[idx][~(bounds >= pp)])))
        likely = pmf[idx] > 1e-12
        slack.append(float(np.min(bounds[likely] - pp)) if np.any(likely) else float("nan"))
    fail = np.array(fail)
    return check_upper(name, float(np.max(fail) / delta), 1.0, "exact law of the ERM training error: "
                       "P(true error > bound) / delta <= 1 in every setting").with_details(
                           fail=fail, slack=np.array(slack))


# ------------------------------------------------------------------------------------------------
# sharpness: the ingredients of the bound against their exact values, two-sidedly


def _binomial_log_slack(m: int, k: int, gap: float, u: float) -> float:
    """How far ln(1/P(Bin(k, .) <= m)) can exceed the Hoeffding exponent k gap^2/2 (a rigorous bound).

    P(B <= m) >= P(B = m) >= exp(-k KL(m/k || p)) / (k + 1) (m is a mode of Bin(k, m/k), so it has
    probability >= 1/(k + 1) there, and the likelihood ratio at m is exp(-k KL)), and
    KL <= gap^2 / (2 (1 - u^2)) for a deviation of ``gap`` in margin units (Taylor with the variance
    (1 - u^2)/4 at the largest margin |u| on the way). Hence
    ln(1/P) <= k gap^2/2 + k gap^2 u^2/(2 (1 - u^2)) + ln(k + 1). (``m`` is kept for the signature.)
    """
    return float(k * gap**2 * u**2 / (2 * (1 - u**2)) + np.log(k + 1))


def _band(name: str, measured: float, predicted: float, lo: float, hi: float, text: str, why: str,
          **details) -> Claim:
    """Pass iff lo <= predicted <= hi (a two-sided band from exact quantities; 1e-12 relative rounding)."""
    p = float(predicted)
    eps = 1e-12 * max(abs(lo), abs(hi))
    ok = bool(np.isfinite(p) and lo - eps <= p <= hi + eps)
    return Claim(name, float(measured), p, "band", float(hi - lo), text, why, ok).with_details(
        lo=lo, hi=hi, **details)


def claim_hoeffding_sharp(name: str, log_tail: float, gap: float, k: int, m: int, *,
                          theory: Theory = _theory) -> Claim:
    """Hoeffding's exponent is the exact one: ln(1/``theory.hoeffding_tail``(gap, k)) in [E - s, E].

    E = ln(1/P(y g <= -gap)) exactly at gamma = 0 (``log_tail`` = ln P, threshold count m = k (1 - gap)/2),
    s = :func:`_binomial_log_slack` with u = gap. The bound being valid puts the prediction below E; a
    constant other than 1/2 in the exponent, or another power of the gap, leaves the band.
    """
    E = -float(log_tail)
    with np.errstate(all="ignore"):
        pred = -float(np.log(theory.hoeffding_tail(gap, k)))
    s = _binomial_log_slack(m, k, gap, gap)
    return _band(name, E, pred, E - s, E, f"m - {s:.3g} <= p <= m", "exact binomial log tail at margin 0; "
                 "lower edge: P(B = m) >= exp(-k KL)/(k + 1) and the Taylor bound on KL", s=s)


def claim_eta_sharp(name: str, log_tail: float, theta: float, k: int, m: int, *,
                    theory: Theory = _theory) -> Claim:
    """The sparsification term of the theorem, read off its n -> infinity limit, is the exact tail's exponent.

    At fixed k the bound tends to tau + 2 eta_k as n -> infinity; with n = 1e300, tau = 0, |H| = 2 the
    sampling terms are below 1e-200, so eta_k = ``theory.thm_bound_at_k``(0, theta, 1e300, 2, 1/2, k)/2.
    Measured: E = ln(1/P(y g <= theta/2)) for a classifier of margin exactly theta (``log_tail`` = ln P,
    count m = k (1 + theta/2)/2), the worst case of the proof's step; ln(1/eta_k) must lie in [E - s, E],
    s = :func:`_binomial_log_slack` with gap theta/2 and u = theta.
    """
    E = -float(log_tail)
    with np.errstate(all="ignore"):
        eta = float(theory.thm_bound_at_k(0.0, theta, 1e300, 2, 0.5, k)) / 2
        pred = -float(np.log(eta)) if eta > 0 else float("inf")
    s = _binomial_log_slack(m, k, theta / 2, theta)
    return _band(name, E, pred, E - s, E, f"m - {s:.3g} <= p <= m", "exact binomial log tail at margin "
                 "theta, threshold theta/2; lower edge as in C6a", s=s, eta=eta)


def claim_chernoff_sharp(name: str, j_star: int, n: int, p: float, log_term: float, *,
                         theory: Theory = _theory) -> Claim:
    """The Chernoff deviation matches the exact one to first order: t* < dev <= (t* + 1/n) U.

    t* = p - j*/n is exact (``j_star`` from the binomial CDF at ln delta = -``log_term``);
    dev = ``theory.chernoff_deviation``(p, n, L). Lower edge: the bound is valid (dev <= t* would give
    P(p_hat <= p - dev) >= F(j*) > delta). Upper edge: F(j* - 1) <= delta and
    F(j* - 1) >= exp(-n KL(a || p)) / (n + 1), a = (j* - 1)/n, with KL(a || p) <= (p - a)^2 /
    (2 a (1 - p)), give p - a >= sqrt(2 a (1 - p) L'/n), L' = L - ln(n + 1), so
    U = sqrt(p L / (a (1 - p) L')).
    """
    a = (j_star - 1) / n
    t_star = p - j_star / n
    Lp = log_term - np.log(n + 1)
    U = float(np.sqrt(p * log_term / (a * (1 - p) * Lp)))
    with np.errstate(all="ignore"):
        dev = float(theory.chernoff_deviation(p, n, log_term))
    hi = (t_star + 1 / n) * U
    return _band(name, t_star, dev, t_star, hi, f"t* <= p <= {U:.4f} (t* + 1/n)", "exact binomial quantile; "
                 "upper edge from P(B = j* - 1) >= exp(-n KL)/(n + 1) and the Taylor bound on KL", U=U)


def claim_inversion_zero(name: str, p0: float, n: int, log_term: float, *, theory: Theory = _theory) -> Claim:
    """At p_hat = 0 the inverted bound is ``theory.zero_count_loss`` times the exact limit, to O(L/n).

    p0 = the exact upper limit at count 0, 1 - exp(-x), x = L/n. Predicted: the inverted bound at 0
    divided by the loss factor, which must equal x; x lies in [p0, p0 / (1 - x/2)] since
    x - x^2/2 <= 1 - exp(-x) <= x.
    """
    x = log_term / n
    with np.errstate(all="ignore"):
        # numpy zero, so that a formula dividing by p_hat gives inf (a failed claim), not an exception
        pred = float(theory.relative_deviation_bound(np.float64(0.0), n, log_term)) / float(
            theory.zero_count_loss())
    return _band(name, p0, pred, p0, p0 / (1 - x / 2), "p0 <= p <= p0/(1 - L/(2n))",
                 "exact: 1 - exp(-x) between x - x^2/2 and x")


def claim_inversion_sharp(name: str, p_cp: float, phat: float, n: int, log_term: float, *,
                          theory: Theory = _theory) -> Claim:
    """With many counts the inverted bound matches the exact upper limit: D_cp <= D <= D_cp U.

    D = ``theory.relative_deviation_bound``(p_hat, n, L) - p_hat, D_cp = p_cp - p_hat with p_cp the exact
    (Clopper-Pearson) limit at count j = n p_hat. Lower edge: a monotone bound with coverage 1 - delta is
    >= p_cp. Upper edge: delta = F(j; p_cp) >= exp(-n KL(p_hat || p_cp)) / (n + 1) and
    KL <= D_cp^2 / (2 p_hat (1 - p_cp)) give D_cp >= sqrt(2 p_hat (1 - p_cp) L'/n),
    L' = L - ln(n + 1), while the derived D = sqrt(2 p_hat L/n) + 2L/n:
    U = (1 + sqrt(2L/(n p_hat))) sqrt(L / ((1 - p_cp) L')).
    """
    Lp = log_term - np.log(n + 1)
    U = float((1 + np.sqrt(2 * log_term / (n * phat))) * np.sqrt(log_term / ((1 - p_cp) * Lp)))
    d_cp = p_cp - phat
    with np.errstate(all="ignore"):
        d = float(theory.relative_deviation_bound(phat, n, log_term)) - phat
    return _band(name, d_cp, d, d_cp, d_cp * U, f"D_cp <= p <= {U:.4f} D_cp", "exact Clopper-Pearson limit; "
                 "upper edge from P(B = j) >= exp(-n KL)/(n + 1) and the Taylor bound on KL", U=U)
