"""The float64 measurements of chapter 'hellinger-tv-mixtures': general pairs, the random test bed, dilution.

TV and H of arbitrary finite Gaussian location mixtures by Gauss-Legendre quadrature split at the sign
changes of f_P - f_Q; the random pairs of the inequality test bed (C4); the measured ingredients of the
dilution sandwich (C6), the L^2/L^1 ratio of a polynomial under N(0, 1) (C5) and the tail moments
of Theorem 'upper' from their series (C4d). Never imports ``theory``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import optimize, special

from theorylib.core.validation import check_positive_int

from ._numerics import ArrayLike, check_M, check_measure, gauss_legendre_panels
from .model import HALF_LOG_2PI, LOG_2, FDMeasurement, Sweep, mixture_density


def tv_hellinger_float(atoms_P: ArrayLike, w_P: ArrayLike, atoms_Q: ArrayLike, w_Q: ArrayLike, *,
                       nodes: int = 20, width: float = 0.5, pad: float = 12.0) -> tuple[float, float]:
    """(TV, H) of two finite Gaussian location mixtures by float64 Gauss-Legendre quadrature.

    Panels of ``width`` on [min atom - pad, max atom + pad] are split at the sign changes of f_P - f_Q
    (located on a fine grid and refined by Brent's method), so |f_P - f_Q| is smooth on every panel.
    f_P - f_Q is summed from the signed measure P - Q (no subtraction of two rounded densities) and
    H^2 = (1/2) int (f_P - f_Q)^2 / (sqrt f_P + sqrt f_Q)^2. Accurate to ~1e-13 relative when TV >~ 1e-6.
    A root moved by rounding (Brent's stopping rule) moves a panel edge by <= 1e-15: the integrals, whose
    integrands are continuous there, move by rounding only.
    """
    aP, wP = check_measure(atoms_P, w_P, "P")
    aQ, wQ = check_measure(atoms_Q, w_Q, "Q")
    for nm, ww in (("P", wP), ("Q", wQ)):
        if abs(ww.sum() - 1) > 1e-12:
            raise ValueError(f"{nm}: weights must sum to 1 (got {ww.sum()!r})")
    lo = min(aP.min(), aQ.min()) - pad
    hi = max(aP.max(), aQ.max()) + pad
    a_nu = np.concatenate([aP, aQ])
    w_nu = np.concatenate([wP, -wQ])

    def diff(z):
        return mixture_density(z, a_nu, w_nu)

    fine = np.linspace(lo, hi, int(math.ceil((hi - lo) / 0.01)) + 1)
    hv = diff(fine)
    idx = np.nonzero(np.sign(hv[:-1]) * np.sign(hv[1:]) < 0)[0]
    roots = [optimize.brentq(diff, fine[i], fine[i + 1], xtol=1e-15) for i in idx]
    roots += list(fine[hv == 0])  # exact zeros on the grid are sign changes too
    edges = np.unique(np.concatenate([np.linspace(lo, hi, int(math.ceil((hi - lo) / width)) + 1), roots]))
    t, wt = np.polynomial.legendre.leggauss(nodes)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    x = (mid[:, None] + half[:, None] * t).ravel()
    w = (half[:, None] * wt).ravel()
    h = diff(x)
    fP = mixture_density(x, aP, wP)
    fQ = mixture_density(x, aQ, wQ)
    tv = 0.5 * float(w @ np.abs(h))
    h2 = 0.5 * float(w @ (h * h / (np.sqrt(fP) + np.sqrt(fQ)) ** 2))
    return tv, math.sqrt(h2)


def random_pair(rng: np.random.Generator, M: float, max_atoms: int = 6) -> tuple[np.ndarray, ...]:
    """Two random discrete measures on [-M, M]: 1..max_atoms uniform atoms each, Dirichlet(1) weights."""
    M = check_M(M)
    max_atoms = check_positive_int("max_atoms", max_atoms)
    out = []
    for _ in range(2):
        k = int(rng.integers(1, max_atoms + 1))
        out += [rng.uniform(-M, M, size=k), rng.dirichlet(np.ones(k))]
    return tuple(out)


def random_pairs_distances(rng: np.random.Generator, M: float, n_pairs: int, *, max_atoms: int = 6,
                           tv_min: float = 1e-6) -> np.ndarray:
    """(n_pairs, 2) array of (TV, H) of random pairs, resampling any pair with TV < tv_min."""
    n_pairs = check_positive_int("n_pairs", n_pairs)
    res = np.empty((n_pairs, 2))
    i = 0
    while i < n_pairs:
        tv, h = tv_hellinger_float(*random_pair(rng, M, max_atoms))
        if tv >= tv_min:
            res[i] = tv, h
            i += 1
    return res


def inequality_testbed(sweep: Sweep, random_pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(TV, H) of the inequality test bed: the tilted and untilted pairs of the sweep, then the random pairs."""
    rp = np.asarray(random_pairs, dtype=float)
    if rp.ndim != 2 or rp.shape[1] != 2:
        raise ValueError(f"random_pairs must have shape (k, 2); got {rp.shape}")
    tv = np.concatenate([np.exp(sweep.log_tv), np.exp(sweep.log_tv_u), rp[:, 0]])
    h = np.concatenate([np.exp(sweep.log_h), np.exp(sweep.log_h_u), rp[:, 1]])
    return tv, h


def dilution_measure(atoms_P: ArrayLike, w_P: ArrayLike, atoms_Q: ArrayLike, w_Q: ArrayLike,
                     alpha: float) -> dict[str, float]:
    """H^2 of the diluted pair P^a = (1-a) delta_0 + a P, Q^a = (1-a) delta_0 + a Q, and A, C of the pair (P, Q).

    With F = (f_P - f_Q)/phi: A = E F(Z)^2, C = E[F^2 (F_P + F_Q)](Z), by Gauss-Legendre on a wide interval.
    """
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha = {alpha!r} must lie in (0, 1)")
    aP, wP = check_measure(atoms_P, w_P, "P")
    aQ, wQ = check_measure(atoms_Q, w_Q, "Q")
    R = max(np.abs(aP).max(), np.abs(aQ).max())
    x, w = gauss_legendre_panels(-3 * R - 14, 3 * R + 14, 400, 20)
    logphi = -0.5 * x * x - HALF_LOG_2PI
    h = mixture_density(x, np.concatenate([aP, aQ]), np.concatenate([wP, -wQ]))
    s = mixture_density(x, aP, wP) + mixture_density(x, aQ, wQ)
    A = float(w @ (h * h * np.exp(-logphi)))
    C = float(w @ (h * h * s * np.exp(-2 * logphi)))
    tv, H = tv_hellinger_float(np.append(aP, 0.0), np.append(alpha * wP, 1 - alpha),
                               np.append(aQ, 0.0), np.append(alpha * wQ, 1 - alpha))
    return {"h2": H * H, "tv": tv, "A": A, "C": C}


def dilution_testbed(rng: np.random.Generator, M: float, n_pairs: int, alphas: tuple[float, ...] = (1e-3, 1e-4),
                     tv_min: float = 1e-3, ca_max: float = 100.0) -> np.ndarray:
    """Rows (alpha, H^2, TV, A, C) of the diluted pairs of ``n_pairs`` random pairs (:func:`random_pair`) at each
    alpha (:func:`dilution_measure`). Pairs with TV(P, Q) < tv_min or C/A > ca_max are redrawn: the sandwich is
    O(alpha (1 + C/A)) wide, and for large M a pair with atoms near the ends can have C/A in the thousands."""
    n_pairs = check_positive_int("n_pairs", n_pairs)
    rows = []
    while len(rows) < n_pairs * len(alphas):
        pair = random_pair(rng, M)
        if tv_hellinger_float(*pair)[0] < tv_min:
            continue
        ms = [dilution_measure(*pair, a) for a in alphas]
        if ms[0]["C"] > ca_max * ms[0]["A"]:
            continue
        rows += [(a, m["h2"], m["tv"], m["A"], m["C"]) for a, m in zip(alphas, ms, strict=True)]
    return np.array(rows)


def hypercontractive_ratio(coeffs: ArrayLike) -> float:
    """||p||_2 / ||p||_1 under N(0, 1) for p(x) = sum_k coeffs[k] x^k (monomial basis).

    ||p||_2^2 = sum_{j,k} c_j c_k E Z^{j+k} exactly; ||p||_1 by Gauss-Legendre split at the real roots of p.
    """
    c = np.atleast_1d(np.asarray(coeffs, dtype=float))
    if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)) or not np.any(c != 0):
        raise ValueError("coeffs must be a finite, non-zero 1-D array")
    c = np.trim_zeros(c, "b")
    deg = c.size - 1
    k = np.arange(2 * deg + 1)
    mom = np.where(k % 2 == 0, np.exp(special.gammaln(k + 1) - special.gammaln(k / 2 + 1) - (k / 2) * LOG_2), 0.0)
    G = mom[np.add.outer(np.arange(deg + 1), np.arange(deg + 1))]
    l2 = math.sqrt(float(c @ G @ c))
    R = math.sqrt(2.0 * deg + 2.0) + 14.0
    roots = np.roots(c[::-1]) if deg > 0 else np.array([])
    real = np.real(roots[np.abs(np.imag(roots)) < 1e-9])
    edges = np.unique(np.concatenate([np.linspace(-R, R, 2 * int(R) * 2 + 1), real[np.abs(real) < R], [0.0]]))
    t, wt = np.polynomial.legendre.leggauss(30)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    x = (mid[:, None] + half[:, None] * t).ravel()
    w = (half[:, None] * wt).ravel()
    l1 = float(w @ (np.abs(np.polynomial.polynomial.polyval(x, c)) * np.exp(-0.5 * x * x - HALF_LOG_2PI)))
    return l2 / l1


def tail_moments_series(M: float, L_top: int, extra: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """(log eta_L, log zeta_L) for L = 0..L_top from the moment series of their definition, in log space.

    rho_L(u) = sum_{j > L} u^j / j!, so eta_L = E rho_L(M|Z|) = sum_{j > L} M^j E|Z|^j / j! and
    zeta_L^2 = E rho_L(M|Z|)^2 = sum_{j, k > L} M^{j+k} E|Z|^{j+k} / (j! k!), E|Z|^s = 2^{s/2} Gamma((s+1)/2)/sqrt(pi).
    The terms decay like (e M^2 / j)^{j/2}; the series are cut at j, k <= L_top + ``extra``, where the neglected
    terms are below 1e-100 of the sums for M <= 2. Positive terms only: exact to rounding (~1e-14 relative).
    """
    M = check_M(M)
    L_top = check_positive_int("L_top", L_top)
    J = L_top + check_positive_int("extra", extra) + 1
    s = np.arange(2 * J + 1, dtype=float)
    log_mom = s * math.log(M) + 0.5 * s * LOG_2 + special.gammaln(0.5 * (s + 1)) - 0.5 * math.log(math.pi)
    j = np.arange(J + 1)
    log_fact = special.gammaln(j + 1.0)
    log_t = log_mom[: J + 1] - log_fact  # eta's terms
    log_eta = np.logaddexp.accumulate(log_t[::-1])[::-1]  # log sum_{j >= a}
    log_T = log_mom[np.add.outer(j, j)] - log_fact[:, None] - log_fact[None, :]  # zeta^2's terms (symmetric)
    row_tail = np.logaddexp.accumulate(log_T[:, ::-1], axis=1)[:, ::-1]  # row_tail[a, b] = log sum_{k >= b} T_ak
    # S(a) = sum_{j, k >= a} T_jk = S(a + 1) + T_aa + 2 sum_{k > a} T_ak, summed from the far corner down
    log_sq = np.empty(J + 1)
    log_sq[J] = log_T[J, J]
    for a in range(J - 1, 0, -1):
        log_sq[a] = np.logaddexp(np.logaddexp(log_sq[a + 1], log_T[a, a]), LOG_2 + row_tail[a, a + 1])
    return log_eta[1: L_top + 2], 0.5 * log_sq[1: L_top + 2]


def thm71_minimum_direct(tv: ArrayLike, M: float, log_eta: np.ndarray, log_zeta: np.ndarray,
                         T_span: float = 30.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """min over L' = 0..L_top and T in [M, M + T_span] of B(L', T) of Theorem 'upper', minimized over T in closed form.

    For each L', B(L', T) = f(T) = 2 Phibar(x) + c e^{MT} with x = T - M and c = 4 e^{M^2/2} A(L'),
    A(L') = e^{2L'} (tv + eta_L')^2 + zeta_L'^2. f'(T) = -2 phi(x) + c M e^{MT} has the sign of
    q(x) = x^2/2 + M x + K, K = log(c M) + M^2 - log(2/sqrt(2 pi)), which increases on x >= 0: f falls until the
    root x* = -M + sqrt(M^2 - 2K) and rises after it, so the minimum over x in [0, T_span] is at
    x* clipped to [0, T_span] (x* = 0 when M^2 - 2K <= 0). The minimum over L' is a scan of all L'
    (no monotonicity shortcut). ``log_eta``, ``log_zeta`` are the tail moments for L' = 0..L_top.

    Returns (log B_M, x* of the best L', log c of the best L'), each of the shape of ``tv``.
    """
    M = check_M(M)
    tvs = np.atleast_1d(np.asarray(tv, dtype=float))
    if np.any(~np.isfinite(tvs)) or np.any(tvs <= 0) or np.any(tvs > 1):
        raise ValueError("tv must lie in (0, 1]")
    le, lz = np.asarray(log_eta, dtype=float), np.asarray(log_zeta, dtype=float)
    if le.shape != lz.shape or le.ndim != 1 or le.size == 0:
        raise ValueError("log_eta and log_zeta must be equally long 1-D arrays (L' = 0..L_top)")
    Ls = np.arange(le.size)
    log_A = np.logaddexp(2.0 * Ls + 2.0 * np.logaddexp(np.log(tvs)[:, None], le[None, :]), 2.0 * lz[None, :])
    log_c = LOG_2 * 2 + 0.5 * M * M + log_A  # (tv, L')
    K = log_c + math.log(M) + M * M - (LOG_2 - HALF_LOG_2PI)
    disc = M * M - 2.0 * K
    x = np.clip(-M + np.sqrt(np.maximum(disc, 0.0)), 0.0, T_span)
    log_f = np.logaddexp(LOG_2 + special.log_ndtr(-x), log_c + M * (M + x))
    best = np.argmin(log_f, axis=1)
    rows = np.arange(tvs.size)
    shape = np.shape(tv)
    return (log_f[rows, best].reshape(shape), x[rows, best].reshape(shape), log_c[rows, best].reshape(shape))


def thm71_log_curvature_max(x: ArrayLike, log_c: ArrayLike, M: float, h: float, points: int = 41) -> np.ndarray:
    """An upper bound on (log f)'' over the cell [x - h, x + h] (cut to x >= 0), f(x) = 2 Phibar(x) + c e^{M(M + x)}.

    (log f)'' = f''/f - (f'/f)^2 <= f''/f, f'' = 2 x phi(x) + c M^2 e^{M(M + x)}; f''/f is taken at ``points``
    equally spaced points of the cell. It is smooth and varies by a few per cent over a cell of width 0.05, so
    its maximum between the points exceeds the sampled one by far less than the sampling spacing times its slope.
    """
    M = check_M(M)
    x, log_c = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(log_c, dtype=float))
    if not (h > 0 and points >= 2):
        raise ValueError(f"h = {h!r} must be > 0 and points = {points!r} >= 2")
    s = np.maximum(x[..., None] + np.linspace(-h, h, points), 0.0)
    lc = log_c[..., None]
    log_tail = LOG_2 + special.log_ndtr(-s)
    log_exp = lc + M * (M + s)
    log_fpp = np.logaddexp(LOG_2 + np.log(np.maximum(s, 1e-300)) - 0.5 * s * s - HALF_LOG_2PI,
                           log_exp + 2 * math.log(M))
    return np.exp(np.max(log_fpp - np.logaddexp(log_tail, log_exp), axis=-1))


def tilted_f_norms(meas: FDMeasurement) -> tuple[float, float]:
    """(log ||F||_1, log ||F||_2) in L^p(phi) of F = (f_P - f_Q)/phi, from a sweep measurement's mp values.

    ||F||_1 = int |f_P - f_Q| = 2 TV and ||F||_2^2 = int (f_P - f_Q)^2 / phi, both folded onto [0, X] (f_P - f_Q
    is odd for the finite-difference pairs) and summed on the measurement's own Gauss-Legendre rule, in log space.
    """
    _, w = gauss_legendre_panels(0.0, meas.X, meas.panels, meas.nodes)
    log_h = np.array([float(mpmath.log(abs(v))) if v != 0 else -math.inf for v in meas.diff])
    log_w = np.log(w)
    x = np.asarray(meas.x, dtype=float)
    log_l1 = LOG_2 + float(special.logsumexp(log_w + log_h))
    log_l2 = 0.5 * (LOG_2 + float(special.logsumexp(log_w + 2 * log_h + 0.5 * x * x + HALF_LOG_2PI)))
    return log_l1, log_l2
