"""The theory of chapter 'asgd-on-average-stability': derived formulas, predictions and named wrong theories.

Pure functions, no random numbers. The exact formulas are those of the Gaussian-mean instance
f(w; z) = ||w - z||^2 / 2, z ~ N(mu, sigma^2 I_d), run by asynchronous SGD with a delay sequence
tau_t fixed in advance (the chapter's exact theorem); the bound is the general stability theorem for
convex L-smooth losses. Every claim reads its prediction from this module; a wrong theory ``wrong_...``
has the signature of the function it replaces.
"""

from __future__ import annotations

import numpy as np

from theorylib.core.validation import check_positive


def _check_delays(delays: np.ndarray) -> np.ndarray:
    dl = np.asarray(delays)
    t = np.arange(dl.size)
    if dl.ndim != 1 or dl.size == 0 or not np.issubdtype(dl.dtype, np.integer):
        raise ValueError("delays must be a non-empty 1-D integer array")
    if np.any(dl < 0) or np.any(dl > t):
        raise ValueError("delays must satisfy 0 <= tau_t <= t")
    return dl


def impulse_response(eta: float, delays: np.ndarray, average: bool = False) -> tuple[float, np.ndarray]:
    """(phi, psi) of x_{t+1} = x_t - eta x_{t - tau_t} + eta b_t: x_T = phi x_0 + eta sum_s psi_s b_s.

    The adjoint recursion lam_T = 1, lam_t = lam_{t+1} - eta sum_{s: s - tau_s = t} lam_{s+1} gives
    psi_s = lam_{s+1} and phi = lam_0. With ``average=True`` the same for the average (1/T) sum_{t<T} x_t:
    lam_T = 0 and a source 1/T at every t < T.
    """
    eta = check_positive("eta", eta)
    dl = _check_delays(delays)
    T = dl.size
    src = 1.0 / T if average else 0.0
    lam = np.zeros(T + 1)
    lam[T] = 0.0 if average else 1.0
    acc = np.zeros(T)
    for t in range(T - 1, -1, -1):
        acc[t - dl[t]] += lam[t + 1]
        lam[t] = src + lam[t + 1] - eta * acc[t]
    return float(lam[0]), lam[1:].copy()


def stability(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float) -> float:
    """Exact on-average model stability sum_k q_k E||w_T - w_T^(k)||^2 (Theorem, part a).

    = 2 d sigma^2 eta^2 [Q S2 + Q3 (S1^2 - S2)], S1 = sum psi, S2 = sum psi^2, Q = sum q^2, Q3 = sum q^3.
    """
    _, psi = impulse_response(eta, delays)
    q = np.asarray(q, dtype=float)
    S1, S2 = psi.sum(), np.sum(psi**2)
    return float(2 * d * sigma**2 * eta**2 * (np.sum(q**2) * S2 + np.sum(q**3) * (S1**2 - S2)))


def gap(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float) -> float:
    """Exact generalization gap E[F(w_T) - F_S^q(w_T)] = d sigma^2 Q (1 - phi_T) (Theorem, part b)."""
    phi, _ = impulse_response(eta, delays)
    return float(d * sigma**2 * np.sum(np.asarray(q, dtype=float) ** 2) * (1 - phi))


def excess(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float, r0sq: float,
           average: bool = False) -> float:
    """Exact excess risk E F(w) - F(mu) of w_T (or of the average), Theorem parts c, d:

    phi^2 r0sq / 2 + d sigma^2 [(1 - Q) eta^2 S2 + Q (eta S1)^2] / 2.
    """
    phi, psi = impulse_response(eta, delays, average)
    Q = np.sum(np.asarray(q, dtype=float) ** 2)
    return float(phi**2 * r0sq / 2 + d * sigma**2 * ((1 - Q) * eta**2 * np.sum(psi**2)
                                                      + Q * (eta * psi.sum()) ** 2) / 2)


def stability_bound(eta: float, L: float, tau: int, q_max: float, T: int, sum_emp_risk: float) -> float:
    """The stability theorem: 8 e L eta^2 q_max (1 + tau + q_max T) sum_{t<T} E F_S^q(w_{t - tau_t}).

    Valid for eta <= 2 / (L (1 + 2 tau)); raises otherwise.
    """
    if eta * L * (1 + 2 * tau) > 2:
        raise ValueError(f"the bound needs eta <= 2/(L(1+2tau)); got eta = {eta}, L = {L}, tau = {tau}")
    return float(8 * np.e * L * eta**2 * q_max * (1 + tau + q_max * T) * sum_emp_risk)


def ratio_range(tau: int, T: int, N: int, psi: np.ndarray, fbar: float, d: int, sigma: float
                ) -> tuple[float, float]:
    """The proposition's sandwich for r(N) = bound / exact stability (balanced, L = 1):

    (4e / (d sigma^2)) g(N) fbar [1 / psi_max^2, 1 / psi_min^2], g(N) = (1 + tau + T/N) / (1 + (T - 1)/N).
    """
    psi = np.asarray(psi, dtype=float)
    c = 4 * np.e / (d * sigma**2) * (1 + tau + T / N) / (1 + (T - 1) / N) * fbar
    return float(c / psi.max() ** 2), float(c / psi.min() ** 2)


# ---------------------------------------------------------------- named wrong theories


def wrong_stability_no_delay(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float) -> float:
    """Wrong: the delays ignored (the synchronous impulse response psi_s = (1 - eta)^(T-1-s))."""
    return stability(eta, np.zeros(np.asarray(delays).size, dtype=int), q, d, sigma)


def wrong_stability_blind(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float) -> float:
    """Wrong: participation ignored (q_k = 1/N for every sample)."""
    N = np.asarray(q).size
    return stability(eta, delays, np.full(N, 1.0 / N), d, sigma)


def wrong_stability_uniform(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float) -> float:
    """Wrong: a uniform-stability (Hardt-Recht-Singer) scaling, the square of the sensitivity eta S1 q_max."""
    _, psi = impulse_response(eta, delays)
    return float(2 * d * sigma**2 * (eta * psi.sum() * np.max(q)) ** 2)


def wrong_gap_blind(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float) -> float:
    """Wrong: the gap of a balanced run, d sigma^2 (1 - phi) / N, whatever the participation."""
    N = np.asarray(q).size
    return gap(eta, delays, np.full(N, 1.0 / N), d, sigma)


def wrong_stability_bound_no_tn(eta: float, L: float, tau: int, q_max: float, T: int,
                                sum_emp_risk: float) -> float:
    """Wrong: the bound without its q_max T (= T/N) factor, 8 e L eta^2 q_max (1 + tau) sum F."""
    return stability_bound(eta, L, tau, q_max, 0, sum_emp_risk)


def wrong_excess_fast(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float, r0sq: float,
                      average: bool = False) -> float:
    """Wrong: 'always the fast rate', the variance term eta^2 S2 dropped (only the 1/N term left)."""
    phi, psi = impulse_response(eta, delays, average)
    Q = np.sum(np.asarray(q, dtype=float) ** 2)
    return float(phi**2 * r0sq / 2 + d * sigma**2 * Q * (eta * psi.sum()) ** 2 / 2)


def wrong_excess_last(eta: float, delays: np.ndarray, q: np.ndarray, d: int, sigma: float, r0sq: float,
                      average: bool = False) -> float:
    """Wrong: 'the bound is tight', the average behaves like the last iterate (rate 1/sqrt(N))."""
    return excess(eta, delays, q, d, sigma, r0sq, False)
