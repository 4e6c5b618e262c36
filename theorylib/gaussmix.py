"""Hellinger versus total variation for one-dimensional Gaussian location mixtures.

Reference: J. Jung and C. Gao, *Sharp Inequalities between Total Variation and Hellinger Distances for
Gaussian Mixtures*, arXiv:2602.03202 (2026). Classical background: Le Cam's inequalities
H^2 <= TV <= H sqrt(2 - H^2) (L. Le Cam, *Asymptotic Methods in Statistical Decision Theory*, 1986) and
moment matching for Gaussian mixtures (Y. Wu and P. Yang, Ann. Statist. 48 (2020) 1981-2007).

Conventions. phi is the N(0,1) density, f_P = phi * P, TV(p, q) = (1/2) int |p - q| and
H(p, q)^2 = (1/2) int (sqrt p - sqrt q)^2 = 1 - int sqrt(p q), so that 0 <= H^2 <= TV <= H sqrt(2 - H^2) <= 1.

The *tilted finite-difference pair* (L even, n = L + 1, atoms theta_a = -M + 2 M a / n, a = 0..n):

    P_L = sum_{a odd}  s C(n, a) e^{theta_a^2/2} delta_{theta_a},
    Q_L = sum_{a even} s C(n, a) e^{theta_a^2/2} delta_{theta_a},   s = 2 / sum_a C(n, a) e^{theta_a^2/2}.

From phi(x - theta) e^{theta^2/2} = phi(x) e^{x theta} and the binomial theorem,

    f_P - f_Q = s phi(x) (2 sinh(M x / n))^n,     f_P + f_Q = s phi(x) (2 cosh(M x / n))^n,

so TV = (s/2) E|2 sinh U|^n and H^2 = (s/2) E[(2 cosh U)^n t / (1 + sqrt(1 - t))], t = tanh^{2n} U, U = M Z / n.
The *untilted* pair puts weights 2^{1-n} C(n, a) on the same atoms (odd a for P, even a for Q): its
ordinary moments agree up to degree L (standard moment matching).

"Measured" distances of the pairs are computed from the atoms (mpmath sums, Gauss-Legendre quadrature);
"predicted" ones from the closed forms above (float64, scipy.integrate.quad, in log space).
mpmath has the pure-Python backend here, so atom sums on equispaced atoms are evaluated as
phi(x) e^{x theta_0} sum_a c_a q^a with q = e^{x delta}, c_a = w_a e^{-theta_a^2/2} (the same finite sum,
one exponential per node and a Horner recurrence).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np
from scipy import integrate, optimize, special

from theorylib.core.claims import Claim, check_absolute, check_upper

LOG_2 = math.log(2.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
ArrayLike = np.ndarray | Sequence[float] | float

# --------------------------------------------------------------------------------------------------
# validation


def _check_M(M: float) -> float:
    if isinstance(M, bool) or not isinstance(M, (int, float, np.integer, np.floating)):
        raise ValueError(f"M = {M!r} must be a number")
    M = float(M)
    if not (math.isfinite(M) and M > 0):
        raise ValueError(f"M = {M!r} must be finite and > 0 (the support is [-M, M])")
    return M


def _check_L(L: int, *, even: bool = True) -> int:
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 0:
        raise ValueError(f"L = {L!r} must be a non-negative integer")
    if even and L % 2:
        raise ValueError(f"L = {L} must be even (the finite-difference pair needs n = L + 1 odd)")
    return int(L)


def _check_dps(dps: int) -> int:
    if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or dps < 15:
        raise ValueError(f"dps = {dps!r} must be an integer >= 15 (mpmath decimal digits)")
    return int(dps)


def _check_pos_int(name: str, v: int, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{name} = {v!r} must be an integer >= {low}")
    return int(v)


def _check_measure(atoms: ArrayLike, weights: ArrayLike, name: str = "mixing measure") -> tuple[np.ndarray, np.ndarray]:
    a = np.atleast_1d(np.asarray(atoms, dtype=float))
    w = np.atleast_1d(np.asarray(weights, dtype=float))
    if a.ndim != 1 or a.shape != w.shape or a.size == 0:
        raise ValueError(f"{name}: atoms and weights must be non-empty 1-D arrays of equal length, "
                         f"got shapes {a.shape} and {w.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(w))):
        raise ValueError(f"{name}: atoms and weights must be finite")
    if np.any(w < 0):
        raise ValueError(f"{name}: weights must be >= 0")
    return a, w


def l_grid(L_max: int, L_step: int = 4, L_min: int = 6) -> np.ndarray:
    """The sweep L_min, L_min + L_step, ..., <= L_max (all even); needs >= 5 values with L >= 10."""
    L_min = _check_L(L_min)
    L_step = _check_pos_int("L_step", L_step, 2)
    if L_step % 2:
        raise ValueError(f"L_step = {L_step} must be even (every L of the sweep must be even)")
    L_max = _check_L(L_max, even=False)
    grid = np.arange(L_min, L_max + 1, L_step)
    if np.sum(grid >= 10) < 5:
        raise ValueError(f"L_max = {L_max} with L_step = {L_step} leaves fewer than 5 values L >= 10; "
                         "the asymptotic fits need at least 5")
    return grid


# --------------------------------------------------------------------------------------------------
# mixtures: float64 and mpmath


def mixture_density(x: ArrayLike, atoms: ArrayLike, weights: ArrayLike) -> np.ndarray:
    """f(x) = sum_i w_i phi(x - theta_i), float64, vectorized over x (signed weights allowed)."""
    a = np.atleast_1d(np.asarray(atoms, dtype=float))
    w = np.atleast_1d(np.asarray(weights, dtype=float))
    if a.shape != w.shape or a.ndim != 1:
        raise ValueError(f"atoms and weights must be 1-D of equal length, got {a.shape} and {w.shape}")
    x = np.asarray(x, dtype=float)
    d = x[..., None] - a
    return np.exp(-0.5 * d * d - HALF_LOG_2PI) @ w


def mixture_density_mp(x: ArrayLike, atoms: Sequence, weights: Sequence, dps: int) -> list:
    """High-precision reference f(x) = sum_i w_i phi(x - theta_i): one mpmath exponential per term.

    ``atoms``/``weights`` may be mpf (exact construction) or floats; x values are converted exactly.
    """
    dps = _check_dps(dps)
    if len(atoms) != len(weights) or len(atoms) == 0:
        raise ValueError("atoms and weights must be non-empty and of equal length")
    xs = np.atleast_1d(np.asarray(x, dtype=float))
    with mpmath.workdps(dps):
        c = 1 / mpmath.sqrt(2 * mpmath.pi)
        th = [mpmath.mpf(t) for t in atoms]
        ws = [mpmath.mpf(v) for v in weights]
        out = []
        for xv in xs:
            X = mpmath.mpf(float(xv))
            out.append(c * mpmath.fsum(wi * mpmath.exp(-(X - ti) ** 2 / 2) for ti, wi in zip(th, ws, strict=True)))
        return [+v for v in out]


def _horner_sets(q, coeff_sets: list[list]) -> list:
    """sum_a c_a q^a for each coefficient list; zero-free arithmetic-progression supports use Horner in q^k."""
    out = []
    for cs in coeff_sets:
        idx = [i for i, c in enumerate(cs) if c != 0]
        if not idx:
            out.append(mpmath.mpf(0))
            continue
        step = idx[1] - idx[0] if len(idx) > 1 else 1
        if any(b - a != step for a, b in zip(idx, idx[1:], strict=False)):
            step, idx = 1, list(range(idx[0], idx[-1] + 1))
        qk = q**step
        acc = mpmath.mpf(0)
        for i in reversed(idx):
            acc = acc * qk + cs[i]
        out.append(acc * q ** idx[0])
    return out


def equispaced_mixtures_mp(x: ArrayLike, theta0, delta, weight_sets: Sequence[Sequence], dps: int) -> list[list]:
    """Densities f_k(x) = sum_a w^k_a phi(x - theta0 - a delta) of several measures on one equispaced grid.

    Evaluated from the atoms as phi(x) e^{x theta0} sum_a (w^k_a e^{-theta_a^2/2}) q^a with q = e^{x delta}:
    the same finite sums as :func:`mixture_density_mp`, with two exponentials per node instead of one per
    term. ``theta0``, ``delta`` and the weights should be mpf for an exact construction.
    Returns one list of mpf per weight set.
    """
    dps = _check_dps(dps)
    xs = np.atleast_1d(np.asarray(x, dtype=float))
    with mpmath.workdps(dps):
        t0, dl = mpmath.mpf(theta0), mpmath.mpf(delta)
        n_at = len(weight_sets[0])
        if any(len(ws) != n_at for ws in weight_sets):
            raise ValueError("every weight set must have one weight per grid atom")
        thetas = [t0 + a * dl for a in range(n_at)]
        damp = [mpmath.exp(-t * t / 2) for t in thetas]
        coeffs = [[mpmath.mpf(w) * d for w, d in zip(ws, damp, strict=True)] for ws in weight_sets]
        c = 1 / mpmath.sqrt(2 * mpmath.pi)
        res: list[list] = [[] for _ in weight_sets]
        for xv in xs:
            X = mpmath.mpf(float(xv))
            pre = c * mpmath.exp(-X * X / 2 + X * t0)
            sums = _horner_sets(mpmath.exp(X * dl), coeffs)
            for k, sm in enumerate(sums):
                res[k].append(pre * sm)
        return res


# --------------------------------------------------------------------------------------------------
# the finite-difference pairs


@dataclass(frozen=True)
class FDPairMP:
    """A finite-difference pair on the grid theta_a = theta0 + a delta, a = 0..n, in mpmath numbers."""

    L: int
    M: float
    tilted: bool
    theta0: object
    delta: object
    w_P: list  # noqa: N815
    w_Q: list  # noqa: N815
    s: object
    dps: int

    @property
    def n(self) -> int:
        return self.L + 1

    def atoms(self) -> list:
        with mpmath.workdps(self.dps):
            return [self.theta0 + a * self.delta for a in range(self.n + 1)]


def fd_pair_mp(L: int, M: float, *, tilted: bool = True, dps: int = 50) -> FDPairMP:
    """The (un)tilted finite-difference pair with exact atoms -M + 2 M a / n, in mpmath at ``dps`` digits."""
    L, M, dps = _check_L(L), _check_M(M), _check_dps(dps)
    n = L + 1
    with mpmath.workdps(dps):
        Mm = mpmath.mpf(M)
        t0, dl = -Mm, 2 * Mm / n
        binom = [mpmath.binomial(n, a) for a in range(n + 1)]
        if tilted:
            raw = [b * mpmath.exp((t0 + a * dl) ** 2 / 2) for a, b in enumerate(binom)]
            s = 2 / mpmath.fsum(raw)
        else:
            raw = binom
            s = mpmath.mpf(2) ** (1 - n)
        zero = mpmath.mpf(0)
        w_P = [s * r if a % 2 == 1 else zero for a, r in enumerate(raw)]
        w_Q = [s * r if a % 2 == 0 else zero for a, r in enumerate(raw)]
        return FDPairMP(L, M, tilted, t0, dl, w_P, w_Q, s, dps)


def _fd_pair_float(L: int, M: float, tilted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    L, M = _check_L(L), _check_M(M)
    n = L + 1
    a = np.arange(n + 1)
    theta = -M + 2.0 * M * a / n
    logw = special.gammaln(n + 1) - special.gammaln(a + 1) - special.gammaln(n - a + 1)
    if tilted:
        logw = logw + 0.5 * theta**2
        log_s = LOG_2 - special.logsumexp(logw)
    else:
        log_s = (1 - n) * LOG_2
    w = np.exp(logw + log_s)
    odd = a % 2 == 1
    return theta[odd], w[odd], theta[~odd], w[~odd], float(np.exp(log_s))


def tilted_fd_pair(L: int, M: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """(atoms_P, w_P, atoms_Q, w_Q, s) of the tilted pair in float64 (P on odd a, Q on even a)."""
    return _fd_pair_float(L, M, True)


def untilted_fd_pair(L: int, M: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """(atoms_P, w_P, atoms_Q, w_Q, s) of the untilted (ordinary moment-matching) pair, s = 2^{1-n}."""
    return _fd_pair_float(L, M, False)


# --------------------------------------------------------------------------------------------------
# closed forms and asymptotics of the tilted pair


def log_s_tilted(L: int, M: float) -> float:
    """log s = log 2 - log sum_a C(n, a) e^{theta_a^2/2} (a sum of positive terms: no cancellation)."""
    return math.log(_fd_pair_float(L, M, True)[4])


def log_abs_moment(n: float) -> float:
    """log E|Z|^n = (n/2) log 2 + lgamma((n+1)/2) - (1/2) log pi."""
    return 0.5 * n * LOG_2 + math.lgamma(0.5 * (n + 1)) - 0.5 * math.log(math.pi)


def _log_sinhc(u: np.ndarray) -> np.ndarray:
    """log(sinh u / u) for u >= 0, stable at 0 and for large u."""
    u = np.asarray(u, dtype=float)
    out = np.empty_like(u)
    small = u < 1e-3
    us = u[small]
    out[small] = us**2 / 6 - us**4 / 180
    ul = u[~small]
    out[~small] = ul + np.log1p(-np.exp(-2 * ul)) - LOG_2 - np.log(ul)
    return out


def _log_cosh(u: np.ndarray) -> np.ndarray:
    u = np.abs(np.asarray(u, dtype=float))
    return u + np.log1p(np.exp(-2 * u)) - LOG_2


def _log_quad(logf: Callable[[np.ndarray], np.ndarray], z_peak: float, z_hi: float) -> tuple[float, float]:
    """log int_0^z_hi exp(logf(z)) dz and its relative error estimate, integrand scaled by its peak value."""
    ref = float(logf(np.array([z_peak]))[0])

    def g(z: float) -> float:
        return float(np.exp(logf(np.array([z]))[0] - ref))

    pts = [p for p in (z_peak - 3.0, z_peak, z_peak + 3.0) if 0 < p < z_hi]
    val, err = integrate.quad(g, 0.0, z_hi, points=pts, epsabs=0.0, epsrel=1e-13, limit=400)
    return ref + math.log(val), err / val


def tilted_closed_forms(L: int, M: float) -> dict[str, float]:
    """TV and H of the tilted pair from the one-dimensional closed forms (float64, log space).

    log TV = log s + n log(2M/n) + log int_0^inf phi(z) z^n sinhc(Mz/n)^n dz,
    log H^2 = log s + n log 2 + 2n log(M/n)
              + log int_0^inf phi(z) z^{2n} sinhc(u)^{2n} cosh(u)^{-n} / (1 + sqrt(1 - tanh^{2n} u)) dz, u = Mz/n.
    Returns tv, h, log_tv, log_h and the quadrature's relative error estimates rel_err_tv, rel_err_h2.
    """
    L, M = _check_L(L), _check_M(M)
    n = L + 1
    log_s = log_s_tilted(L, M)
    z_hi = math.sqrt(2 * n) + M + 40.0

    def log_tv_int(z: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return n * np.log(z) - 0.5 * z * z - HALF_LOG_2PI + n * _log_sinhc(M * z / n)

    def log_h2_int(z: np.ndarray) -> np.ndarray:
        u = M * z / n
        t = np.tanh(u) ** (2 * n)
        with np.errstate(divide="ignore"):
            return (2 * n * np.log(z) - 0.5 * z * z - HALF_LOG_2PI + 2 * n * _log_sinhc(u) - n * _log_cosh(u)
                    - np.log1p(np.sqrt(1.0 - t)))

    li_tv, e_tv = _log_quad(log_tv_int, math.sqrt(n), z_hi)
    li_h2, e_h2 = _log_quad(log_h2_int, math.sqrt(2 * n), z_hi)
    log_tv = log_s + n * math.log(2 * M / n) + li_tv
    log_h2 = log_s + n * LOG_2 + 2 * n * math.log(M / n) + li_h2
    return {"tv": math.exp(log_tv), "h": math.exp(0.5 * log_h2), "log_tv": log_tv, "log_h": 0.5 * log_h2,
            "rel_err_tv": e_tv, "rel_err_h2": e_h2}


def _difference_mp(x: ArrayLike, L: int, M: float, dps: int, factor) -> list:
    """s phi(x) factor(M x / n)^n in mpmath, with s from the tilted pair's atoms."""
    pair = fd_pair_mp(L, M, tilted=True, dps=dps)
    xs = np.atleast_1d(np.asarray(x, dtype=float))
    with mpmath.workdps(dps):
        c = pair.s / mpmath.sqrt(2 * mpmath.pi)
        Mm, n = mpmath.mpf(M), pair.n
        return [+(c * mpmath.exp(-mpmath.mpf(float(v)) ** 2 / 2) * factor(Mm * float(v) / n) ** n) for v in xs]


def tilted_difference_mp(x: ArrayLike, L: int, M: float, dps: int) -> list:
    """The closed form s phi(x) (2 sinh(M x / n))^n of f_P - f_Q, in mpmath (s from the atoms' weights)."""
    return _difference_mp(x, L, M, dps, lambda u: 2 * mpmath.sinh(u))


def monomial_difference_mp(x: ArrayLike, L: int, M: float, dps: int) -> list:
    """WRONG THEORY (a), pointwise: f_P - f_Q ~ s phi(x) (2 M x / n)^n (sinh u replaced by u)."""
    return _difference_mp(x, L, M, dps, lambda u: 2 * u)


def c1(M: float) -> float:
    """The 1/n coefficient of log TV_L: c_1(M) = -M^2/3 + M^4/45."""
    M = _check_M(M)
    return -M**2 / 3 + M**4 / 45


def tv_leading(L: int, M: float) -> float:
    """n log(M/n) + log E|Z|^n + M^2/6: log TV_L up to O(1/n)."""
    L, M = _check_L(L), _check_M(M)
    n = L + 1
    return n * math.log(M / n) + log_abs_moment(n) + M**2 / 6


def tv_asymptotic(L: int, M: float, order: int = 1) -> float:
    """log TV_L = n log(M/n) + log E|Z|^n + M^2/6 + c_1(M)/n + O(n^-2) (order 0 drops the c_1 term)."""
    if order not in (0, 1):
        raise ValueError(f"order = {order!r} must be 0 or 1")
    return tv_leading(L, M) + (c1(M) / (L + 1) if order == 1 else 0.0)


def log_ratio_asymptotic(L: int, M: float, *, stirling: bool = False) -> float:
    """log(H_L/TV_L) = (1/2) log[(2n-1)!!/(2 (E|Z|^n)^2)] - M^2/3 + O(1/n).

    With ``stirling=True`` the Gamma functions are expanded: (n/2) log 2 - (3/4) log 2 - M^2/3.
    """
    L, M = _check_L(L), _check_M(M)
    n = L + 1
    if stirling:
        return 0.5 * n * LOG_2 - 0.75 * LOG_2 - M**2 / 3
    log_dfact = n * LOG_2 + math.lgamma(n + 0.5) - 0.5 * math.log(math.pi)  # (2n-1)!!
    return 0.5 * (log_dfact - LOG_2 - 2 * log_abs_moment(n)) - M**2 / 3


def monomial_tv_approx(L: int, M: float) -> float:
    """WRONG THEORY (a): TV ~ (s/2) (2M/n)^n E|Z|^n, i.e. sinh u ~ u (misses the factor ~ e^{M^2/6})."""
    L, M = _check_L(L), _check_M(M)
    n = L + 1
    return math.exp(log_s_tilted(L, M) - LOG_2 + n * math.log(2 * M / n) + log_abs_moment(n))


# --------------------------------------------------------------------------------------------------
# quadrature of the pairs' distances


def gauss_legendre_panels(a: float, b: float, panels: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of composite Gauss-Legendre on [a, b] (``panels`` equal panels, ``nodes`` each)."""
    panels, nodes = _check_pos_int("panels", panels), _check_pos_int("nodes", nodes, 2)
    if not (math.isfinite(a) and math.isfinite(b) and b > a):
        raise ValueError(f"need finite a < b, got [{a!r}, {b!r}]")
    t, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(a, b, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    return (mid[:, None] + half[:, None] * t).ravel(), (half[:, None] * w).ravel()


def default_dps(L: int, M: float) -> int:
    """Working digits: 30 + ceil(ell / ln 10), ell = -log TV_L from the closed form.

    The mp sums of f_P, f_Q are accurate to ~n ulps relative to f_P + f_Q, so the difference keeps
    ~30 - log10(n) significant digits even where it is e^{-ell} times smaller than the densities.
    """
    ell = -tilted_closed_forms(L, M)["log_tv"]
    return 30 + math.ceil(max(ell, 0.0) / math.log(10))


@dataclass(frozen=True)
class FDMeasurement:
    """TV and H of a finite-difference pair measured from its atoms (mpmath sums + Gauss-Legendre)."""

    L: int
    M: float
    tilted: bool
    log_tv: float
    log_h: float
    dps: int
    X: float
    panels: int
    nodes: int
    log_tail_bound: float  # log of 4 Phibar(X - M) >= the neglected mass of f_P + f_Q beyond |x| > X
    identity_digits: float  # tilted: max_x log10(|(f_P-f_Q) - closed form| / (f_P+f_Q)) + dps; nan otherwise
    identity_bound_digits: float  # log10 of the rounding bound 16 (n + 2) (in units of 10^-dps)

    @property
    def tv(self) -> float:
        return math.exp(self.log_tv)

    @property
    def h(self) -> float:
        return math.exp(self.log_h)


def measure_fd_pair(L: int, M: float, *, tilted: bool = True, panels: int = 40, nodes: int = 20,
                    dps: int | None = None, check_identity: bool = True,
                    closed_form: Callable[[ArrayLike, int, float, int], list] | None = None) -> FDMeasurement:
    """TV = int_0^X |f_P - f_Q| and H^2 = int_0^X (f_P - f_Q)^2 / (sqrt f_P + sqrt f_Q)^2 from the atoms.

    Symmetry f_P(-x) = f_Q(x) folds both integrals onto [0, X], X = M + sqrt(4 ell + 80), ell = -log TV
    from the closed form: the neglected mass 4 Phibar(X - M) <= 2 e^{-2 ell - 40} is < 1e-17 H^2 (H >= TV).
    For the tilted pair the mp difference is also compared with s phi(x) (2 sinh(Mx/n))^n at every node
    (``closed_form``, default :func:`tilted_difference_mp`; a mutation test swaps it).
    """
    L, M = _check_L(L), _check_M(M)
    ell = -tilted_closed_forms(L, M)["log_tv"]
    dps = default_dps(L, M) if dps is None else _check_dps(dps)
    X = M + math.sqrt(4 * max(ell, 0.0) + 80.0)
    x, w = gauss_legendre_panels(0.0, X, panels, nodes)
    pair = fd_pair_mp(L, M, tilted=tilted, dps=dps)
    fP, fQ = equispaced_mixtures_mp(x, pair.theta0, pair.delta, [pair.w_P, pair.w_Q], dps)
    ident = float("nan")
    n = L + 1
    with mpmath.workdps(dps):
        h = [p - q for p, q in zip(fP, fQ, strict=True)]
        tv = mpmath.fsum(mpmath.mpf(float(wi)) * abs(hi) for wi, hi in zip(w, h, strict=True))
        h2 = mpmath.fsum(mpmath.mpf(float(wi)) * hi * hi / (mpmath.sqrt(p) + mpmath.sqrt(q)) ** 2
                         for wi, hi, p, q in zip(w, h, fP, fQ, strict=True))
        if tilted and check_identity:
            closed = (closed_form or tilted_difference_mp)(x, L, M, dps)
            worst = max(abs(hi - ci) / (p + q) for hi, ci, p, q in zip(h, closed, fP, fQ, strict=True))
            ident = float(mpmath.log10(worst)) + dps if worst > 0 else -math.inf
        log_tv, log_h = float(mpmath.log(tv)), 0.5 * float(mpmath.log(h2))
    log_tail = math.log(4.0) + float(special.log_ndtr(-(X - M)))
    return FDMeasurement(L, M, tilted, log_tv, log_h, dps, X, panels, nodes, log_tail, ident,
                         math.log10(16 * (n + 2)))


# --------------------------------------------------------------------------------------------------
# general pairs in float64


def tv_hellinger_float(atoms_P: ArrayLike, w_P: ArrayLike, atoms_Q: ArrayLike, w_Q: ArrayLike, *,
                       nodes: int = 20, width: float = 0.5, pad: float = 12.0) -> tuple[float, float]:
    """(TV, H) of two finite Gaussian location mixtures by float64 Gauss-Legendre quadrature.

    Panels of ``width`` on [min atom - pad, max atom + pad] are split at the sign changes of f_P - f_Q
    (located on a fine grid and refined by Brent's method), so |f_P - f_Q| is smooth on every panel.
    f_P - f_Q is summed from the signed measure P - Q (no subtraction of two rounded densities) and
    H^2 = (1/2) int (f_P - f_Q)^2 / (sqrt f_P + sqrt f_Q)^2. Accurate to ~1e-13 relative when TV >~ 1e-6.
    """
    aP, wP = _check_measure(atoms_P, w_P, "P")
    aQ, wQ = _check_measure(atoms_Q, w_Q, "Q")
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
    M = _check_M(M)
    max_atoms = _check_pos_int("max_atoms", max_atoms)
    out = []
    for _ in range(2):
        k = int(rng.integers(1, max_atoms + 1))
        out += [rng.uniform(-M, M, size=k), rng.dirichlet(np.ones(k))]
    return tuple(out)


def random_pairs_distances(rng: np.random.Generator, M: float, n_pairs: int, *, max_atoms: int = 6,
                           tv_min: float = 1e-6) -> np.ndarray:
    """(n_pairs, 2) array of (TV, H) of random pairs, resampling any pair with TV < tv_min."""
    n_pairs = _check_pos_int("n_pairs", n_pairs)
    res = np.empty((n_pairs, 2))
    i = 0
    while i < n_pairs:
        tv, h = tv_hellinger_float(*random_pair(rng, M, max_atoms))
        if tv >= tv_min:
            res[i] = tv, h
            i += 1
    return res


# --------------------------------------------------------------------------------------------------
# Theorem 7.1: the explicit upper bound


def log_rho_tail(u: ArrayLike, L: int | np.ndarray) -> np.ndarray:
    """log rho_L(u), rho_L(u) = sum_{j > L} u^j / j! = e^u P(L + 1, u) (P: regularized lower gamma), u > 0.

    Broadcasts u against L. For u <= (L + 2)/2 the series u^{L+1}/(L+1)! sum_k u^k (L+1)!/(L+1+k)!
    (ratio <= 1/2, 60 terms) is used; otherwise u + log P(L + 1, u), which is then not small.
    """
    u = np.asarray(u, dtype=float)
    Lr = np.asarray(L)
    if np.any(Lr < 0) or not np.all(np.equal(np.mod(Lr, 1), 0)):
        raise ValueError("L must be a non-negative integer (array)")
    if np.any(u <= 0):
        raise ValueError("u must be > 0")
    u, Lb = np.broadcast_arrays(u, Lr.astype(float))
    out = np.empty(u.shape)
    ser = u <= 0.5 * (Lb + 2)
    us, Ls = u[ser], Lb[ser]
    term = np.ones_like(us)
    tot = np.ones_like(us)
    for k in range(1, 61):
        term = term * us / (Ls + 1 + k)
        tot = tot + term
    out[ser] = (Ls + 1) * np.log(us) - special.gammaln(Ls + 2) + np.log(tot)
    ug, Lg = u[~ser], Lb[~ser]
    out[~ser] = ug + np.log(special.gammainc(Lg + 1, ug))
    return out


@lru_cache(maxsize=16)
def _eta_zeta(M: float, L_top: int) -> tuple[np.ndarray, np.ndarray]:
    Ls = np.arange(L_top + 1)
    z, w = gauss_legendre_panels(0.0, math.sqrt(2 * L_top + 2) + 40.0, 120, 20)
    z = z[z > 0]
    w = w[-z.size:]
    lr = log_rho_tail(M * z[:, None], Ls[None, :])  # (nodes, L)
    lphi = (-0.5 * z * z - HALF_LOG_2PI + np.log(2.0 * w))[:, None]  # E g(|Z|) = 2 int_0^inf phi g
    log_eta = special.logsumexp(lr + lphi, axis=0)
    log_zeta = 0.5 * special.logsumexp(2 * lr + lphi, axis=0)
    return log_eta, log_zeta


def eta_zeta(M: float, L_top: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """(log eta_L, log zeta_L) for L = 0..L_top: eta_L = E rho_L(M|Z|), zeta_L^2 = E rho_L(M|Z|)^2."""
    return _eta_zeta(_check_M(M), _check_pos_int("L_top", L_top, 0))


def thm71_rhs(tv: float, M: float, L: int, T: float) -> float:
    """The right side 2 Phibar(T - M) + 4 e^{MT + M^2/2} [e^{2L} (tv + eta_L)^2 + zeta_L^2] of Theorem 7.1."""
    M, L = _check_M(M), _check_L(L, even=False)
    if not T >= M:
        raise ValueError(f"T = {T!r} must be >= M = {M}")
    log_eta, log_zeta = eta_zeta(M, max(L, 1))
    e, z = math.exp(log_eta[L]), math.exp(log_zeta[L])
    return 2 * special.ndtr(-(T - M)) + 4 * math.exp(M * T + M * M / 2) * (math.exp(2 * L) * (tv + e) ** 2 + z * z)


def thm71_bound(tv: ArrayLike, M: float, L_top: int = 300, T_span: float = 30.0,
                T_step: float = 0.05) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """B_M(tv) = min over L' in {0..L_top}, T in M + [0, T_span] (step T_step) of Theorem 7.1's right side.

    The L'-part A(L') = e^{2L'} (tv + eta_L')^2 + zeta_L'^2 enters monotonically, so it is minimized first.
    Returns (B, L_best, T_best), each of the shape of ``tv``; B may exceed 1 (then the bound is vacuous).
    """
    M = _check_M(M)
    tvs = np.atleast_1d(np.asarray(tv, dtype=float))
    if np.any(~np.isfinite(tvs)) or np.any(tvs <= 0) or np.any(tvs > 1):
        raise ValueError("tv must lie in (0, 1]")
    log_eta, log_zeta = eta_zeta(M, L_top)
    Ls = np.arange(L_top + 1)
    log_a = np.logaddexp(2 * Ls + 2 * np.logaddexp(np.log(tvs)[:, None], log_eta), 2 * log_zeta)
    best_L = np.argmin(log_a, axis=1)
    log_a_min = log_a[np.arange(tvs.size), best_L]
    T = M + np.arange(0.0, T_span + 1e-12, T_step)
    log_rhs = np.logaddexp(math.log(2.0) + special.log_ndtr(-(T - M))[None, :],
                           math.log(4.0) + M * T[None, :] + M * M / 2 + log_a_min[:, None])
    j = np.argmin(log_rhs, axis=1)
    B = np.exp(log_rhs[np.arange(tvs.size), j])
    shape = np.shape(tv)
    return B.reshape(shape), best_L.reshape(shape), T[j].reshape(shape)


# --------------------------------------------------------------------------------------------------
# hypercontractivity and dilution (unit-test helpers)


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


def dilution_sandwich(atoms_P: ArrayLike, w_P: ArrayLike, atoms_Q: ArrayLike, w_Q: ArrayLike,
                      alpha: float) -> dict[str, float]:
    """H^2 of the diluted pair P^a = (1-a) delta_0 + a P, Q^a = (1-a) delta_0 + a Q and its sandwich.

    With F = (f_P - f_Q)/phi, A = E F(Z)^2, C = E[F^2 (F_P + F_Q)](Z):
      upper          a^2 A / (8 (1 - a))                       [(sqrt f + sqrt g)^2 >= 4 (1 - a) phi]
      lower (tight)  a^2 A / 8 * (1 - a C / (2 A))             [(sqrt f + sqrt g)^2 <= 2 (f + g)]
      lower (spec)   a^2 A / 8 * (1 - a C / A)                 (weaker by the factor 2 in the correction)
    """
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha = {alpha!r} must lie in (0, 1)")
    aP, wP = _check_measure(atoms_P, w_P, "P")
    aQ, wQ = _check_measure(atoms_Q, w_Q, "Q")
    R = max(np.abs(aP).max(), np.abs(aQ).max())
    x, w = gauss_legendre_panels(-3 * R - 14, 3 * R + 14, 400, 20)
    logphi = -0.5 * x * x - HALF_LOG_2PI
    h = mixture_density(x, np.concatenate([aP, aQ]), np.concatenate([wP, -wQ]))
    s = mixture_density(x, aP, wP) + mixture_density(x, aQ, wQ)
    A = float(w @ (h * h * np.exp(-logphi)))
    C = float(w @ (h * h * s * np.exp(-2 * logphi)))
    _, H = tv_hellinger_float(np.append(aP, 0.0), np.append(alpha * wP, 1 - alpha),
                              np.append(aQ, 0.0), np.append(alpha * wQ, 1 - alpha))
    a2 = alpha * alpha
    return {"h2": H * H, "upper": a2 * A / (8 * (1 - alpha)), "lower_tight": a2 * A / 8 * (1 - alpha * C / (2 * A)),
            "lower_spec": a2 * A / 8 * (1 - alpha * C / A), "ratio_limit": A / 2}


# --------------------------------------------------------------------------------------------------
# the chapter's claims (shared by the notebook and the mutation tests)

C71_TOL = 1e-9  # relative agreement of measured and closed-form TV, H (quadrature + rounding budget)


def rate_tolerance(M: float) -> float:
    """1e-3 (1 + M^4): the envelope for the neglected O(n^-4) terms in the fits of C7.2 and C7.3."""
    return 1e-3 * (1 + _check_M(M) ** 4)


def claim_c71_identity(meas: Sequence[FDMeasurement]) -> Claim:
    """C7.1a: f_P - f_Q from the atoms equals s phi (2 sinh(Mx/n))^n at every node, to rounding.

    measured = max over L and nodes of log10(|difference| / (f_P + f_Q)) + dps (digits lost);
    bound = log10(16 (n_max + 2)): ~n roundings of relative size 10^-dps in each positive Horner sum.
    """
    worst = max(m.identity_digits for m in meas)
    bound = max(m.identity_bound_digits for m in meas)
    return check_upper("C7.1a identity f_P-f_Q (digits lost)", worst, bound,
                       why="mp sums of n+1 positive terms carry <= ~n ulps; bound log10(16(n+2)) digits")


def claim_c71_distance(name: str, measured_logs: Sequence[float], predicted_logs: Sequence[float],
                       tol: float = C71_TOL) -> Claim:
    """C7.1b/c: max over L of |measured/predicted - 1| <= tol (both in logs: |exp(dlog) - 1|)."""
    m = np.asarray(measured_logs, dtype=float)
    p = np.asarray(predicted_logs, dtype=float)
    dev = float(np.max(np.abs(np.expm1(m - p))))
    return check_absolute(name, dev, 0.0, tol,
                          why="Gauss-Legendre and quad errors (panel doubling, quad estimate) are <~1e-12")


def fit_increments(L: np.ndarray, log_ratio: np.ndarray, L_fit_min: int = 10,
                   powers: Sequence[int] = (2, 3)) -> tuple[float, np.ndarray, np.ndarray]:
    """Increments D_L = [r_{L+step} - r_L]/step of r_L = log(H/TV), fitted as b + sum_k c_k n^{-k} (L >= 10).

    The default powers (2, 3) follow from r_L = (n/2) log 2 + a_0 + a_1/n + a_2/n^2 + ...: a difference of a
    1/n series has no 1/n term. Returns (b, L of the increments, increments).
    """
    L = np.asarray(L)
    r = np.asarray(log_ratio, dtype=float)
    if L.size < 2 or r.shape != L.shape:
        raise ValueError("L and log_ratio must be equally long sweeps with at least 2 values")
    step = np.diff(L)
    if np.any(step != step[0]):
        raise ValueError("L must be an equally spaced sweep")
    D = np.diff(r) / step
    Li = L[:-1]
    sel = Li >= L_fit_min
    if sel.sum() < len(powers) + 2:
        raise ValueError(f"need at least {len(powers) + 2} increments with L >= {L_fit_min} for this fit")
    n = Li[sel] + 1.0
    A = np.column_stack([np.ones_like(n)] + [n ** (-float(k)) for k in powers])
    coef = np.linalg.lstsq(A, D[sel], rcond=None)[0]
    return float(coef[0]), Li, D


def claim_c72(L: np.ndarray, log_ratio: np.ndarray, M: float, predicted_b: float = 0.5 * LOG_2) -> Claim:
    """C7.2: the fitted asymptotic increment b of log(H/TV) per unit L equals (1/2) log 2."""
    b, _, _ = fit_increments(L, log_ratio)
    return check_absolute("C7.2 slope of log(H/TV) per L", b, predicted_b, rate_tolerance(M),
                          why="fit b + c/n^2 + e/n^3 exact to O(n^-4); envelope 1e-3(1+M^4) >> refit change")


def fit_tv_remainder(L: np.ndarray, log_tv: np.ndarray, M: float,
                     base: Callable[[int, float], float] = tv_leading, L_fit_min: int = 10,
                     powers: Sequence[int] = (1, 2)) -> float:
    """Intercept of y_L = n (log TV_L - base(L, M)) regressed on [1, n^-k for k in powers] over L >= 10."""
    L = np.asarray(L)
    lt = np.asarray(log_tv, dtype=float)
    if lt.shape != L.shape:
        raise ValueError("L and log_tv must have the same length")
    sel = L >= L_fit_min
    if sel.sum() < len(powers) + 2:
        raise ValueError(f"need at least {len(powers) + 2} values L >= {L_fit_min} for this fit")
    n = L[sel] + 1.0
    y = n * (lt[sel] - np.array([base(int(v), M) for v in L[sel]]))
    A = np.column_stack([np.ones_like(n)] + [n ** (-float(k)) for k in powers])
    return float(np.linalg.lstsq(A, y, rcond=None)[0][0])


def fit_sensitivity(fit: Callable[..., float], L: np.ndarray, y: np.ndarray, powers: Sequence[int],
                    extra_power: int, **kw) -> float:
    """Truncation-error estimate of an asymptotic fit: the largest change of the fitted constant when
    (i) the next power n^-extra_power is added, or (ii) the smallest L >= 10 is dropped from the fit (each
    only where enough points remain). nan if neither variant is feasible."""
    L = np.asarray(L)
    base = fit(L, y, powers=tuple(powers), **kw)
    first = int(L[L >= 10].min())
    changes = []
    for variant in ({"powers": (*powers, extra_power)}, {"powers": tuple(powers), "L_fit_min": first + 1}):
        try:
            changes.append(abs(fit(L, y, **variant, **kw) - base))
        except ValueError:
            continue
    return max(changes) if changes else float("nan")


def claim_c73(L: np.ndarray, log_tv: np.ndarray, M: float, c1_fn: Callable[[float], float] = c1,
              base: Callable[[int, float], float] = tv_leading) -> Claim:
    """C7.3: the 1/n coefficient of log TV_L equals c_1(M) = -M^2/3 + M^4/45."""
    c_hat = fit_tv_remainder(L, log_tv, M, base)
    return check_absolute("C7.3 1/n coefficient c1 of log TV", c_hat, c1_fn(M), rate_tolerance(M),
                          why="fit c1 + d/n + e/n^2 exact to O(n^-3); envelope 1e-3(1+M^4) >> refit change")


def lecam_lower(tv: np.ndarray) -> np.ndarray:
    """Le Cam: H^2 <= TV."""
    return np.asarray(tv, dtype=float)


def claim_c74_lower(tv: np.ndarray, h: np.ndarray, bound: Callable[[np.ndarray], np.ndarray] = lecam_lower,
                    name: str = "C7.4a Le Cam H^2 <= TV (max ratio)") -> Claim:
    """max over the test bed of H^2 / bound(TV) <= 1 (+ 1e-9 rounding slack)."""
    ratio = float(np.max(np.asarray(h) ** 2 / bound(np.asarray(tv))))
    return check_upper(name, ratio, 1.0, tol=1e-9,
                       why="a proved inequality; slack 1e-9 >> quadrature/rounding error (~1e-13 relative)")


def lecam_upper(h: np.ndarray) -> np.ndarray:
    """Le Cam: TV <= H sqrt(2 - H^2)."""
    h = np.asarray(h, dtype=float)
    return h * np.sqrt(2 - h * h)


def claim_c74_upper(tv: np.ndarray, h: np.ndarray, bound: Callable[[np.ndarray], np.ndarray] = lecam_upper) -> Claim:
    """max over the test bed of TV / bound(H) <= 1 (+ 1e-9 rounding slack)."""
    ratio = float(np.max(np.asarray(tv) / bound(np.asarray(h))))
    return check_upper("C7.4b Le Cam TV <= H sqrt(2-H^2) (max ratio)", ratio, 1.0, tol=1e-9,
                       why="a proved inequality; slack 1e-9 >> quadrature/rounding error (~1e-13 relative)")


def polylog_bound(tv: np.ndarray) -> np.ndarray:
    """WRONG THEORY ('polylog'): H^2 <= (TV max(1, log(1/TV)))^2."""
    tv = np.asarray(tv, dtype=float)
    return (tv * np.maximum(1.0, np.log(1 / tv))) ** 2


def claim_c74_thm71(tv: np.ndarray, h: np.ndarray, M: float,
                    bound: Callable[[np.ndarray], np.ndarray] | None = None) -> Claim:
    """C7.4c: max over the test bed of H^2 / B_M(TV) <= 1, B_M = min over (L', T) of Theorem 7.1's right side.

    ``bound`` maps TV to a claimed upper bound on H^2 (default: B_M); the polylog mutation swaps it.
    """
    M = _check_M(M)
    tv = np.asarray(tv, dtype=float)
    b = thm71_bound(tv, M)[0] if bound is None else bound(tv)
    ratio = float(np.max(np.asarray(h, dtype=float) ** 2 / b))
    return check_upper("C7.4c Thm 7.1: H^2 <= B_M(TV) (max ratio)", ratio, 1.0, tol=1e-9,
                       why="a proved inequality; slack 1e-9 >> quadrature/rounding error (~1e-13 relative)")
