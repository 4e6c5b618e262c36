"""The measured side of chapter 'hellinger-tv-mixtures': the pairs, their densities and distances from the atoms.

Every measured TV and H of a finite-difference pair is computed here from its atoms (mpmath sums evaluated
at the nodes of a composite Gauss-Legendre rule), never from a closed form: this module never imports
``theory`` (or ``claims``). Even the working precision and the cut-off of the quadrature come from a
*measured* pilot value of TV (:func:`pilot_log_tv`), not from the formula under test. The float64 test bed
of general pairs, the dilution, hypercontractivity and tail-moment measurements are in :mod:`.model_float`;
the fit of the measured increments (C2) in :mod:`.model_fits` (fits against the theory's expansions are the
claims').

mpmath has the pure-Python backend here, so atom sums on equispaced atoms are evaluated as
phi(x) e^{x theta_0} sum_a c_a q^a with q = e^{x delta}, c_a = w_a e^{-theta_a^2/2} (the same finite sum,
one exponential per node and a Horner recurrence).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy import special

from theorylib.core.validation import check_int, check_positive

from ._numerics import ArrayLike, check_dps, check_L, check_M, gauss_legendre_panels

LOG_2 = math.log(2.0)
LOG_10 = math.log(10.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def l_grid(L_max: int, L_step: int = 4, L_min: int = 6) -> np.ndarray:
    """The sweep L_min, L_min + L_step, ..., <= L_max (all even); needs >= 5 values with L >= 10."""
    L_min = check_L(L_min)
    L_step = check_int("L_step", L_step, low=2)
    if L_step % 2:
        raise ValueError(f"L_step = {L_step} must be even (every L of the sweep must be even)")
    L_max = check_L(L_max, even=False)
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
    dps = check_dps(dps)
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
    dps = check_dps(dps)
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
    L, M, dps = check_L(L), check_M(M), check_dps(dps)
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
    L, M = check_L(L), check_M(M)
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
# measuring TV and H of a pair from its atoms


def working_dps(ell: float) -> int:
    """Working digits 30 + ceil(ell / ln 10) for a pair with TV = e^{-ell}.

    The mp sums of f_P, f_Q are accurate to ~n ulps relative to f_P + f_Q, so the difference keeps
    ~30 - log10(n) significant digits even where it is e^{-ell} times smaller than the densities.
    """
    return 30 + math.ceil(max(float(ell), 0.0) / LOG_10)


def cutoff(ell: float, M: float) -> float:
    """X = M + sqrt(4 ell + 80): the neglected mass 4 Phibar(X - M) <= 2 e^{-2 ell - 40} <= 4 e^{-40} H^2
    < 1.7e-17 H^2 for any pair, by Le Cam's H >= TV / sqrt(2) (2 e^{-40} H^2 < 1e-17 H^2 where H >= TV, as for
    the tilted pairs)."""
    return check_M(M) + math.sqrt(4 * max(float(ell), 0.0) + 80.0)


def _mp_densities(L: int, M: float, tilted: bool, x: np.ndarray, dps: int) -> tuple[list, list]:
    pair = fd_pair_mp(L, M, tilted=tilted, dps=dps)
    fP, fQ = equispaced_mixtures_mp(x, pair.theta0, pair.delta, [pair.w_P, pair.w_Q], dps)
    return fP, fQ


def pilot_log_tv(L: int, M: float, *, tilted: bool = True, panels: int = 10, nodes: int = 10,
                 dps0: int = 30, margin: int = 20, max_dps: int = 4000) -> float:
    """A coarse *measured* log TV of the pair, which sets the working precision and cut-off of the measurement.

    See :func:`pilot_log_tv_of`; the pair's f_P - f_Q is evaluated from its atoms.
    """
    L, M = check_L(L), check_M(M)

    def abs_diff(x: np.ndarray, dps: int) -> list:
        fP, fQ = _mp_densities(L, M, tilted, x, dps)
        return [abs(p - q) for p, q in zip(fP, fQ, strict=True)]

    return pilot_log_tv_of(abs_diff, M, f"the pair (L = {L}, M = {M})", panels=panels, nodes=nodes, dps0=dps0,
                           margin=margin, max_dps=max_dps)


def pilot_log_tv_of(abs_diff: Callable[[np.ndarray, int], list], M: float, what: str, *, panels: int = 10,
                    nodes: int = 10, dps0: int = 30, margin: int = 20, max_dps: int = 4000) -> float:
    """log TV = log int_0^X |f_P - f_Q| of a pair whose |f_P - f_Q| is even, measured coarsely from its atoms.

    ``abs_diff(x, dps)`` returns the mp values |f_P - f_Q| at the nodes x >= 0, computed at ``dps`` digits. At
    ``dps`` digits, TV is computed with a coarse rule on [0, X], X = cutoff(dps ln 10, M); it is accepted when
    TV >= 10^-(dps - margin) (resolved with ``margin`` digits to spare; an unresolved difference is rounding
    noise of size ~n 10^-dps, far below that), otherwise dps is doubled. The decision has a margin of many
    orders of magnitude, and mpmath's arithmetic is the same on every machine.
    """
    M = check_M(M)
    dps = check_dps(dps0)
    while dps <= max_dps:
        x, w = gauss_legendre_panels(0.0, cutoff(dps * LOG_10, M), panels, nodes)
        d = abs_diff(x, dps)
        with mpmath.workdps(dps):
            tv = mpmath.fsum(mpmath.mpf(float(wi)) * di for wi, di in zip(w, d, strict=True))
            log_tv = float(mpmath.log(tv)) if tv > 0 else -math.inf
        if log_tv >= -(dps - margin) * LOG_10:
            return log_tv
        dps *= 2
    raise ValueError(f"TV of {what} is not resolved at {max_dps} digits")


class LogDistances:
    """TV, H and log(H/TV) of a measurement that stores log TV and log H (the measured pairs' common face)."""

    log_tv: float
    log_h: float

    @property
    def tv(self) -> float:
        return math.exp(self.log_tv)

    @property
    def h(self) -> float:
        return math.exp(self.log_h)

    @property
    def log_ratio(self) -> float:
        return self.log_h - self.log_tv


@dataclass(frozen=True, eq=False)
class FDMeasurement(LogDistances):
    """TV and H of a finite-difference pair measured from its atoms (mpmath sums + Gauss-Legendre).

    ``x``, ``diff`` and ``total`` are the nodes and the mp values of f_P - f_Q and f_P + f_Q there (the data
    of the pointwise identity, claim C1a).
    """

    L: int
    M: float
    tilted: bool
    log_tv: float
    log_h: float
    ell0: float  # the pilot's -log TV, which set dps and X
    dps: int
    X: float
    panels: int
    nodes: int
    log_tail_bound: float  # log of 4 Phibar(X - M) >= the neglected mass of f_P + f_Q beyond |x| > X
    x: np.ndarray
    diff: tuple
    total: tuple

    @property
    def n(self) -> int:
        return self.L + 1


def measure_fd_pair(L: int, M: float, *, tilted: bool = True, panels: int = 40, nodes: int = 20,
                    ell: float | None = None, dps: int | None = None) -> FDMeasurement:
    """TV = int_0^X |f_P - f_Q| and H^2 = int_0^X (f_P - f_Q)^2 / (sqrt f_P + sqrt f_Q)^2 from the atoms.

    Symmetry f_P(-x) = f_Q(x) folds both integrals onto [0, X]. The cut-off X = cutoff(ell, M) and the
    precision working_dps(ell) come from ``ell`` = -log TV of the pilot measurement (:func:`pilot_log_tv`,
    run when ``ell`` is None; pass a previous measurement's ``ell0`` to refine the rule on the same [0, X]).
    """
    L, M = check_L(L), check_M(M)
    ell0 = -pilot_log_tv(L, M, tilted=tilted) if ell is None else check_positive("ell", ell)
    dps = working_dps(ell0) if dps is None else check_dps(dps)
    X = cutoff(ell0, M)
    x, w = gauss_legendre_panels(0.0, X, panels, nodes)
    fP, fQ = _mp_densities(L, M, tilted, x, dps)
    with mpmath.workdps(dps):
        h = [p - q for p, q in zip(fP, fQ, strict=True)]
        tot = [p + q for p, q in zip(fP, fQ, strict=True)]
        tv = mpmath.fsum(mpmath.mpf(float(wi)) * abs(hi) for wi, hi in zip(w, h, strict=True))
        h2 = mpmath.fsum(mpmath.mpf(float(wi)) * hi * hi / (mpmath.sqrt(p) + mpmath.sqrt(q)) ** 2
                         for wi, hi, p, q in zip(w, h, fP, fQ, strict=True))
        log_tv, log_h = float(mpmath.log(tv)), 0.5 * float(mpmath.log(h2))
    log_tail = math.log(4.0) + float(special.log_ndtr(-(X - M)))
    return FDMeasurement(L, M, tilted, log_tv, log_h, ell0, dps, X, panels, nodes, log_tail, x, tuple(h), tuple(tot))


@dataclass(frozen=True, eq=False)
class Sweep:
    """The tilted and untilted pairs of the L sweep, measured from their atoms."""

    M: float
    L: np.ndarray
    tilted: tuple[FDMeasurement, ...]
    untilted: tuple[FDMeasurement, ...]

    @property
    def log_tv(self) -> np.ndarray:
        return np.array([m.log_tv for m in self.tilted])

    @property
    def log_h(self) -> np.ndarray:
        return np.array([m.log_h for m in self.tilted])

    @property
    def log_tv_u(self) -> np.ndarray:
        return np.array([m.log_tv for m in self.untilted])

    @property
    def log_h_u(self) -> np.ndarray:
        return np.array([m.log_h for m in self.untilted])

    @property
    def r_t(self) -> np.ndarray:
        """log(H/TV) of the tilted pairs."""
        return self.log_h - self.log_tv

    @property
    def r_u(self) -> np.ndarray:
        """log(H/TV) of the untilted pairs."""
        return self.log_h_u - self.log_tv_u


def measure_sweep(M: float, L_grid: Sequence[int], *, panels: int = 40, nodes: int = 20) -> Sweep:
    """Both pairs at every L of the sweep (the notebook's and the tests' one data path).

    The tilted pair's pilot sets dps and X; the untilted pair at the same L is measured on the same rule.
    """
    M = check_M(M)
    L = np.asarray([check_L(int(v)) for v in L_grid])
    tilted = tuple(measure_fd_pair(int(v), M, panels=panels, nodes=nodes) for v in L)
    untilted = tuple(measure_fd_pair(m.L, M, tilted=False, panels=panels, nodes=nodes, ell=m.ell0, dps=m.dps)
                     for m in tilted)
    return Sweep(M, L, tilted, untilted)


def panel_doubling(meas: Sequence[FDMeasurement]) -> float:
    """Largest relative change of TV or H when the panels of each measurement are doubled (same X, same dps)."""
    worst = 0.0
    for m in meas:
        d = measure_fd_pair(m.L, m.M, tilted=m.tilted, panels=2 * m.panels, nodes=m.nodes, ell=m.ell0, dps=m.dps)
        worst = max(worst, abs(math.expm1(d.log_tv - m.log_tv)), abs(math.expm1(d.log_h - m.log_h)))
    return worst


def panel_doubling_tv(meas: FDMeasurement) -> float:
    """Relative change of TV alone when the panels are doubled (the untilted pair's kinks limit TV, not H)."""
    d = measure_fd_pair(meas.L, meas.M, tilted=meas.tilted, panels=2 * meas.panels, nodes=meas.nodes,
                        ell=meas.ell0, dps=meas.dps)
    return abs(math.expm1(d.log_tv - meas.log_tv))
