"""The theory of chapter 'adversarial-vit-benign-overfitting': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. Model: f(X) = sum_p a_p <v, x_p>, a = softmax(s); data: patch 0 = y mu,
mu = ||mu|| e_1, patches p >= 1 ~ N(0, sigma^2 (I - e_1 e_1^T)), observed labels flipped with probability rho;
attack: ||Delta||_F <= eps on the whole input.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: Gauss-Legendre nodes and weights on [-1, 1] for the chi-square integral of the one-step law
_GL_X, _GL_W = np.polynomial.legendre.leggauss(256)


def attention(s: np.ndarray) -> np.ndarray:
    """a = softmax(s)."""
    s = np.asarray(s, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum()


def robust_margin(X: np.ndarray, y: np.ndarray, v: np.ndarray, s: np.ndarray, eps: float) -> np.ndarray:
    """Lemma (exact inner minimization): min_{||Delta||_F <= eps} y f(X + Delta) = y f(X) - eps ||v|| ||a||."""
    a = attention(s)
    f = (np.asarray(X, dtype=float) @ np.asarray(v, dtype=float)) @ a
    return np.asarray(y, dtype=float) * f - eps * np.linalg.norm(v) * np.linalg.norm(a)


def robust_test_error(v: np.ndarray, s: np.ndarray, mu_norm: float, sigma: float, eps: float) -> float:
    """Lemma (exact robust risk): R_eps = Phi(-(a_0 <v, mu> - eps ||v|| ||a||) /
    (sigma ||P_perp v|| sqrt(sum_{p >= 1} a_p^2)))."""
    v, a = np.asarray(v, dtype=float), attention(s)
    signal = a[0] * v[0] * mu_norm - eps * np.linalg.norm(v) * np.linalg.norm(a)
    spread = sigma * np.linalg.norm(v[1:]) * np.sqrt(np.sum(a[1:] ** 2))
    return float(stats.norm.cdf(-signal / spread))


def second_moment_A(N: int, rho: float) -> float:
    """E[A^2] for A = sum_i y~_i y_i = N - 2F, F ~ Bin(N, rho): N^2 (1 - 2 rho)^2 + 4 N rho (1 - rho)."""
    return N**2 * (1 - 2 * rho) ** 2 + 4 * N * rho * (1 - rho)


def one_step_conditional_error(A: float, W: np.ndarray, mu_norm: float, P: int, sigma: float,
                               eps: float) -> np.ndarray:
    """Theorem (one step): R_eps(v_1) = Phi(-[A ||mu||^2 - eps sqrt(P) sqrt(A^2 ||mu||^2 + W^2)] /
    (sigma W sqrt(P - 1))), given A and W = ||Xi||."""
    num = A * mu_norm**2 - eps * np.sqrt(P) * np.sqrt(A**2 * mu_norm**2 + W**2)
    return stats.norm.cdf(-num / (sigma * W * np.sqrt(P - 1)))


def one_step_robust_error(mu_norm: float, N: int, d: int, P: int, sigma: float, eps: float,
                          rho: float) -> float:
    """E R_eps(v_1) = sum_F Bin(F; N, rho) int R_eps | (A = N - 2F, W^2 = N (P-1) sigma^2 Q) dchi2_{d-1}(Q),
    the chi-square integral taken over its bulk [ppf(1e-13), isf(1e-13)] by 256-point Gauss-Legendre
    quadrature (the integrand is smooth there; the tails outside carry mass 2e-13)."""
    k = d - 1
    lo, hi = stats.chi2.ppf(1e-13, k), stats.chi2.isf(1e-13, k)
    q = 0.5 * (hi - lo) * _GL_X + 0.5 * (hi + lo)
    wq = 0.5 * (hi - lo) * _GL_W * stats.chi2.pdf(q, k)
    F = np.arange(N + 1)
    A = (N - 2 * F)[:, None]
    W = sigma * np.sqrt(N * (P - 1) * q)[None, :]
    cond = one_step_conditional_error(A, W, mu_norm, P, sigma, eps)
    return float(stats.binom.pmf(F, N, rho) @ (cond @ wq))


def expected_increment(mu_norm: float, N: int, d: int, P: int, sigma: float, rho: float) -> float:
    """Theorem (attention at step 2): E[Delta(s_0 - mean_{p>=1} s_p)] / (eta_v eta_s) =
    (E[A^2] ||mu||^2 / N - sigma^2 (d - 1)) / (4 N P^2), to first order in eta_v."""
    return (second_moment_A(N, rho) * mu_norm**2 / N - sigma**2 * (d - 1)) / (4 * N * P**2)


def attention_threshold(N: int, d: int, sigma: float, rho: float) -> float:
    """The zero of the expected step-2 increment: ||mu||* = sigma sqrt((d - 1) N / E[A^2])."""
    return float(sigma * np.sqrt((d - 1) * N / second_moment_A(N, rho)))


def boundary_exponent(attention: str) -> float:
    """The exponent a of the phase boundary ||mu||*(N) ~ N^a at rho = 0: learned attention follows the
    attention threshold sigma sqrt((d - 1) / N), a = -1/2 (Theorem, attention at step two); attention frozen
    at uniform is a pooling classifier: its one-step law at eps = 0, with W^2 ~ N (P - 1) sigma^2 d, puts the
    crossing of an error level Phi(-z) near ||mu||^4 = z^2 sigma^4 (P - 1)^2 d / N, a = -1/4 (Theorem, one
    step: exact at eps = 0 for every d, N, P, as the law depends on N and ||mu|| only through N ||mu||^4)."""
    return {"learned": -0.5, "frozen": -0.25}[attention]


def benign(mu_norm: float, N: int, d: int, sigma: float, rho: float) -> bool:
    """The regime the chapter checks: benign (robust test error near 0) above the attention threshold,
    harmful (robust test error at least near 1/2) below it."""
    return bool(mu_norm > attention_threshold(N, d, sigma, rho))


def robust_train_error_limit(rho: float) -> float:
    """Adversarial GD interpolates robustly: every training sample, flipped ones included, ends with a
    positive robust margin (robust training error 0, whatever rho)."""
    return 0.0


# ---- named wrong theories ------------------------------------------------------------------------------

def wrong_robust_margin(X: np.ndarray, y: np.ndarray, v: np.ndarray, s: np.ndarray, eps: float) -> np.ndarray:
    """Wrong: the penalty eps ||v|| without the factor ||a|| (off by sqrt(P) at uniform attention)."""
    a = attention(s)
    f = (np.asarray(X, dtype=float) @ np.asarray(v, dtype=float)) @ a
    return np.asarray(y, dtype=float) * f - eps * np.linalg.norm(v)


def wrong_robust_test_error(v: np.ndarray, s: np.ndarray, mu_norm: float, sigma: float, eps: float) -> float:
    """Wrong: the attacker perturbs only the signal patch (penalty eps ||v|| a_0)."""
    v, a = np.asarray(v, dtype=float), attention(s)
    signal = a[0] * v[0] * mu_norm - eps * np.linalg.norm(v) * a[0]
    spread = sigma * np.linalg.norm(v[1:]) * np.sqrt(np.sum(a[1:] ** 2))
    return float(stats.norm.cdf(-signal / spread))


def wrong_one_step_robust_error(mu_norm: float, N: int, d: int, P: int, sigma: float, eps: float,
                                rho: float) -> float:
    """Wrong: the low-dimensional law Phi(-sqrt(N) ||mu|| / sigma) (no accumulation of patch noise)."""
    return float(stats.norm.cdf(-np.sqrt(N) * mu_norm / sigma))


def wrong_attention_threshold(N: int, d: int, sigma: float, rho: float) -> float:
    """Wrong: label noise ignored, E[A^2] replaced by N^2: ||mu||* = sigma sqrt((d - 1) / N)."""
    return float(sigma * np.sqrt((d - 1) / N))


def wrong_expected_increment(mu_norm: float, N: int, d: int, P: int, sigma: float, rho: float) -> float:
    """Wrong: attention follows the signal only (no memorization term sigma^2 (d - 1))."""
    return second_moment_A(N, rho) * mu_norm**2 / N / (4 * N * P**2)


def wrong_boundary_exponent(attention: str) -> float:
    """Wrong: one universal exponent for both architectures, the N SNR^2 law a = -1/2 (attention changes
    nothing in the rate)."""
    return -0.5


def wrong_boundary_exponent_pooling(attention: str) -> float:
    """Wrong: one universal exponent for both architectures, the pooling law a = -1/4."""
    return -0.25


def wrong_expected_increment_mean_flips(mu_norm: float, N: int, d: int, P: int, sigma: float,
                                        rho: float) -> float:
    """Wrong: label noise only shrinks the mean of A = N - 2F, E[A^2] = N^2 (1 - 2 rho)^2 (the spread
    4 N rho (1 - rho) of the flip count forgotten)."""
    return (N**2 * (1 - 2 * rho) ** 2 * mu_norm**2 / N - sigma**2 * (d - 1)) / (4 * N * P**2)


def wrong_benign(mu_norm: float, N: int, d: int, sigma: float, rho: float) -> bool:
    """Wrong: interpolating noisy labels forces bad generalization (never benign)."""
    return False


def wrong_robust_train_error_limit(rho: float) -> float:
    """Wrong: adversarial training cannot robustly interpolate (robust training error stays at chance, 1/2,
    less the flipped fraction it fits by luck)."""
    return 0.5 - float(rho)
