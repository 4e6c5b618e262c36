"""The theory of chapter 'dpo-choice-models': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. The links are written here again from their definitions (the measured
side has its own, tail-stable versions), so that a mutant of a formula here never reaches a measurement.
A choice model is named by a key: a link name ('logistic', 'probit', 'cauchy') or 'margin:GAMMA'.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from theorylib.core.validation import check_positive, check_real

PROPER_SCORES = ("log", "brier", "matsushita")  # strictly proper; 'quartic' is improper
LINK_NAMES = ("logistic", "probit", "cauchy")


def cdf(link: str, t):
    """F(t) of a compliant link."""
    t = np.asarray(t, dtype=float)
    if link == "logistic":
        return special.expit(t)
    if link == "probit":
        return special.ndtr(t)
    if link == "cauchy":
        return 0.5 + np.arctan(t) / np.pi
    raise ValueError(f"unknown link {link!r}; known: {', '.join(LINK_NAMES)}")


def pdf(link: str, t):
    """The density f = F' and its derivative f' (a pair)."""
    t = np.asarray(t, dtype=float)
    if link == "logistic":
        f = special.expit(t) * special.expit(-t)
        return f, f * np.tanh(-t / 2)
    if link == "probit":
        f = np.exp(-t * t / 2) / np.sqrt(2 * np.pi)
        return f, -t * f
    if link == "cauchy":
        f = 1 / (np.pi * (1 + t * t))
        return f, -2 * t * np.pi * f * f
    raise ValueError(f"unknown link {link!r}; known: {', '.join(LINK_NAMES)}")


def inv_cdf(link: str, p):
    """F^{-1}(p), p in (0, 1)."""
    p = np.asarray(p, dtype=float)
    if link == "logistic":
        return special.logit(p)
    if link == "probit":
        return special.ndtri(p)
    if link == "cauchy":
        return np.tan(np.pi * (p - 0.5))
    raise ValueError(f"unknown link {link!r}; known: {', '.join(LINK_NAMES)}")


def gibbs_policy(pi_ref, r, beta: float):
    """The normative optimum argmax_pi E_pi r - beta KL(pi || pi_ref): pi_ref e^{r / beta} / Z."""
    beta = check_positive("beta", beta)
    pi_ref = np.asarray(pi_ref, dtype=float)
    if np.any(pi_ref <= 0) or abs(pi_ref.sum() - 1) > 1e-12:
        raise ValueError("pi_ref must have positive entries summing to 1")
    r = np.asarray(r, dtype=float)
    w = pi_ref * np.exp((r - r.max(axis=-1, keepdims=True)) / beta)
    return w / w.sum(axis=-1, keepdims=True)


def margin_cdf(delta, gamma: float):
    """The choice model F_gamma of margin-gamma logistic DPO: e^D (e^D + e^g) / (e^{2D} + 2 e^{D+g} + 1)."""
    a, b = np.exp(np.asarray(delta, dtype=float)), np.exp(gamma)
    return a * (a + b) / (a * a + 2 * a * b + 1)


def margin_gap(p, gamma: float):
    """The gap learned by margin-gamma DPO when P(win) = p: log a, the positive root of
    (1 - p) a^2 + (1 - 2p) e^gamma a - p = 0."""
    p = np.asarray(p, dtype=float)
    if np.any(p <= 0) or np.any(p >= 1):
        raise ValueError(f"p = {p} must lie in (0, 1)")
    b = np.exp(check_real("gamma", gamma))
    c = (1 - 2 * p) * b
    return np.log((-c + np.sqrt(c * c + 4 * p * (1 - p))) / (2 * (1 - p)))


def choice_model_of(link: str, margin: float = 0.0) -> str:
    """The human choice model for which the DPO loss with this link (and margin) is a proper score."""
    return f"margin:{float(margin)}" if margin > 0 else link


def identifies(data: str, score: str, link: str, margin: float = 0.0) -> bool:
    """Is r* the population minimizer (any design, any r*)? Iff the score is strictly proper and the
    loss's choice model is the annotators' one: convexity plays no role."""
    return score in PROPER_SCORES and choice_model_of(link, margin) == data


def link_transfer(delta, data: str, loss: str):
    """The gap G^{-1}(F(delta)) that the G-loss learns on an edge of a tree design from F-annotators."""
    return inv_cdf(loss, cdf(data, delta))


def length_limit(r, lengths, alpha: float, corrected: bool):
    """Population minimizer (centered) on length-biased annotator data: r* with the length-corrected loss,
    r* + alpha l with plain DPO."""
    h = np.asarray(r, dtype=float) + (0.0 if corrected else alpha * np.asarray(lengths, dtype=float))
    return h - h.mean()


def log_score_slope(link: str, s):
    """u'(s) of the log-score loss u = -log G(s) of one comparison at s = h_w - h_l."""
    return -pdf(link, s)[0] / cdf(link, s)


def score_curvature(score: str, link: str, s):
    """u''(s) of u = S(G(s)): (g/G)^2 - g'/G for the log score, 2 g^2 - 2 (1 - G) g' for the Brier score."""
    G = cdf(link, s)
    g, dg = pdf(link, s)
    if score == "log":
        return (g / G) ** 2 - dg / G
    if score == "brier":
        return 2 * g * g - 2 * (1 - G) * dg
    raise ValueError(f"no curvature for score {score!r}")


def _laplacian(pairs, weights, K: int):
    """sum_e w_e (e_i - e_j)(e_i - e_j)^T."""
    L = np.zeros((K, K))
    i, j = pairs[:, 0], pairs[:, 1]
    np.add.at(L, (i, i), weights)
    np.add.at(L, (j, j), weights)
    np.add.at(L, (i, j), -weights)
    np.add.at(L, (j, i), -weights)
    return L


def expected_hessian(h, pairs, q, probs, score: str, link: str, margin: float = 0.0):
    """A(h) = sum_e q_e E[l''] (e_i - e_j)(e_i - e_j)^T, E[l''] = p u''(D - g) + (1 - p) u''(-D - g),
    D = h_i - h_j, u = S o G, g the margin: the Hessian of the population loss at h."""
    h = np.asarray(h, dtype=float)
    pairs = np.asarray(pairs)
    d = h[pairs[:, 0]] - h[pairs[:, 1]]
    u2, u2m = score_curvature(score, link, d - margin), score_curvature(score, link, -d - margin)
    return _laplacian(pairs, q * (probs * u2 + (1 - probs) * u2m), h.size)


def sandwich_parts(h, r, pairs, q, data: str, link: str, margin: float = 0.0):
    """(A, B) for the log-score G-loss with margin g at h, F-annotators with reward r, pairs drawn from q:
    A the expected Hessian, B = sum_e q_e E[l'^2] (e_i - e_j)(e_i - e_j)^T with
    E[l'^2] = p u'(D - g)^2 + (1 - p) u'(-D - g)^2 (the second moment, not the variance: per pair the
    score has mean != 0 off a tree)."""
    h, r = np.asarray(h, dtype=float), np.asarray(r, dtype=float)
    pairs = np.asarray(pairs)
    probs = cdf(data, r[pairs[:, 0]] - r[pairs[:, 1]])
    d = h[pairs[:, 0]] - h[pairs[:, 1]]
    u1, u1m = log_score_slope(link, d - margin), log_score_slope(link, -d - margin)
    B = _laplacian(pairs, q * (probs * u1**2 + (1 - probs) * u1m**2), h.size)
    return expected_hessian(h, pairs, q, probs, "log", link, margin), B


def sandwich_cov(h, r, pairs, q, data: str, link: str, margin: float = 0.0):
    """A^+ B A^+ at the population minimizer h: the limit of N Cov(h_hat)."""
    A, B = sandwich_parts(h, r, pairs, q, data, link, margin)
    Ap = np.linalg.pinv(A)
    return Ap @ B @ Ap


def sandwich_trace(h, r, pairs, q, data: str, link: str, margin: float = 0.0) -> float:
    """lim N E||h_hat - h_G||^2 = tr(A^+ B A^+)."""
    return float(np.trace(sandwich_cov(h, r, pairs, q, data, link, margin)))


def fisher_weights(delta, link: str):
    """Fisher information of one comparison at gap delta: f^2 / (F (1 - F))."""
    F = cdf(link, delta)
    f, _ = pdf(link, delta)
    return f * f / (F * (1 - F))


def fisher_trace(r, pairs, q, link: str) -> float:
    """Well-specified: lim N E||h_hat - r*||^2 = tr(I_F^+), I_F the Fisher-weighted Laplacian."""
    r = np.asarray(r, dtype=float)
    pairs = np.asarray(pairs)
    w = q * fisher_weights(r[pairs[:, 0]] - r[pairs[:, 1]], link)
    return float(np.trace(np.linalg.pinv(_laplacian(pairs, w, r.size))))


def rmse_exponent() -> float:
    """RMSE of the well-specified DPO estimator ~ N^{-1/2}."""
    return -0.5


def estimator_limit(h_pop, r):
    """Where the DPO estimator converges: the population minimizer h_G of its own loss."""
    return np.asarray(h_pop, dtype=float)


# ------------------------------------------------------------------------------------------------
# named wrong theories


def wrong_gibbs_policy_beta(pi_ref, r, beta: float):
    """Wrong: the regularized optimum tilts by e^{beta r} (temperature inverted)."""
    w = np.asarray(pi_ref, dtype=float) * np.exp(beta * np.asarray(r, dtype=float))
    return w / w.sum(axis=-1, keepdims=True)


def wrong_identifies_link_agnostic(data: str, score: str, link: str, margin: float = 0.0) -> bool:
    """Wrong: any proper-score DPO without margin recovers r* whatever the annotators' link
    ('BT-DPO identifies r* on Thurstone data')."""
    return score in PROPER_SCORES and margin == 0 and not data.startswith("margin:")


def wrong_identifies_convex_only(data: str, score: str, link: str, margin: float = 0.0) -> bool:
    """Wrong: identification needs a loss convex in h (fails for Cauchy-log and Brier-logistic)."""
    convex = score == "log" and link != "cauchy" or score == "matsushita"
    return convex and choice_model_of(link, margin) == data


def wrong_identifies_margin_is_bt(data: str, score: str, link: str, margin: float = 0.0) -> bool:
    """Wrong: margin DPO is well specified for Bradley-Terry annotators."""
    return score in PROPER_SCORES and data == link


def wrong_expected_hessian_fisher(h, pairs, q, probs, score: str, link: str, margin: float = 0.0):
    """Wrong: the curvature of the DPO loss is its Fisher information everywhere (so the loss is convex)."""
    h = np.asarray(h, dtype=float)
    pairs = np.asarray(pairs)
    return _laplacian(pairs, q * fisher_weights(h[pairs[:, 0]] - h[pairs[:, 1]], link), h.size)


def wrong_link_transfer_agnostic(delta, data: str, loss: str):
    """Wrong: DPO is link-agnostic, the learned gap is the reward gap."""
    return np.asarray(delta, dtype=float)


def wrong_link_transfer_scale(delta, data: str, loss: str):
    """Wrong: probit and logit differ by a scale, the learned gap is 1.6 times the reward gap."""
    return 1.6 * np.asarray(delta, dtype=float)


def wrong_margin_gap_shift(p, gamma: float):
    """Wrong: the margin just shifts the learned gap, logit(p) + gamma."""
    return special.logit(np.asarray(p, dtype=float)) + gamma


def wrong_length_limit_unbiased(r, lengths, alpha: float, corrected: bool):
    """Wrong: plain DPO is unaffected by a length-biased annotator."""
    h = np.asarray(r, dtype=float)
    return h - h.mean()


def wrong_rmse_exponent() -> float:
    """Wrong: a fast rate N^{-1}."""
    return -1.0


def wrong_fisher_trace_local(r, pairs, q, link: str) -> float:
    """Wrong: every comparison carries the information of a tie, f(0)^2 / (F(0)(1 - F(0)))."""
    r = np.asarray(r, dtype=float)
    pairs = np.asarray(pairs)
    w = q * fisher_weights(np.zeros(len(pairs)), link)
    return float(np.trace(np.linalg.pinv(_laplacian(pairs, w, r.size))))


def wrong_sandwich_trace_fisher_at_truth(h, r, pairs, q, data: str, link: str, margin: float = 0.0) -> float:
    """Wrong: misspecification moves only the centre; the variance is the loss model's Fisher one at r*."""
    return fisher_trace(r, pairs, q, link)


def wrong_sandwich_trace_hessian(h, r, pairs, q, data: str, link: str, margin: float = 0.0) -> float:
    """Wrong: the covariance is the inverse curvature A^+, as if the model were well specified."""
    A, _ = sandwich_parts(h, r, pairs, q, data, link, margin)
    return float(np.trace(np.linalg.pinv(A)))


def wrong_sandwich_trace_score(h, r, pairs, q, data: str, link: str, margin: float = 0.0) -> float:
    """Wrong: the covariance is the inverse score second moment B^+ (the outer-product estimate)."""
    _, B = sandwich_parts(h, r, pairs, q, data, link, margin)
    return float(np.trace(np.linalg.pinv(B)))


def wrong_estimator_limit_consistent(h_pop, r):
    """Wrong: the misspecified DPO estimator is consistent for r*."""
    r = np.asarray(r, dtype=float)
    return r - r.mean()
