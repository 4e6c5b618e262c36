"""SGD of one quadratic readout on iid uniform slots: the measurements of C1 and C2.

* :func:`sgd_readout_runs` (and :class:`_ReadoutRuns`, which advances the same runs on demand): R
  independent online mini-batch SGD runs of a quadratic readout fitting one pair feature from ``w = 0``.
* **C1.** :func:`law_configs` (three step sizes and batch sizes) and :func:`law_experiment`: a pilot set
  of runs fixes each configuration's horizon T (the first step at which the pilot mean of ``||e_t||^2``
  is at most 1e-3), then fresh runs are measured at the checkpoints T/4, T/2 and T.
* **C2.** :func:`rate_study`: the first-passage time of the mean ``||e_t||^2`` below eps at B = 1,
  eta = 1/p, simulated until every curve has crossed, with a bootstrap of each time and of its slope on log p.
* **C3d.** :func:`budget_study`: the same first passage for each block of the C3 stack, below delta/(d-1).

No horizon, checkpoint or run length here is computed from the law under test (rho of Thm A): they come
from pilot runs or from simulating until a curve has crossed. Never imports ``theory``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.rates import ols_slope
from theorylib.core.repro import rng_for
from theorylib.core.validation import check_int, check_positive_int, check_real

from .model import (
    check_sgd,
    n_quad_features,
    pair_index,
    projection_step,
    quad_features,
    random_signs,
    stack_shapes,
    tree_depth,
)


class _ReadoutRuns:
    """R independent online SGD runs of a quadratic readout of m iid uniform ±1 slots, advanced on demand.

    The target is the single feature ``target_col`` (realizable, ``w* = e_target``), ``w_0 = 0``, so
    ``e_0 = -e_target``. Each step draws a fresh mini-batch of B inputs per run from ``rng`` and applies
    ``e <- e - (eta/B) sum_b (e^T phi_b) phi_b``; the draws do not depend on how the steps are grouped.
    """

    def __init__(self, m: int, target_col: int, eta: float, B: int, R: int, rng: np.random.Generator) -> None:
        self.m, self.p = m, n_quad_features(m)
        self.eta, self.B = check_sgd(eta, B)
        self.R = check_positive_int("R", R)
        if not 0 <= target_col < self.p:
            raise ValueError(f"target_col = {target_col} must lie in [0, {self.p})")
        self.rng = rng
        self.E = np.zeros((self.R, self.p))
        self.E[:, target_col] = -1.0

    def sq_norms(self) -> np.ndarray:
        return np.einsum("rp,rp->r", self.E, self.E)

    def step(self) -> None:
        R, B, p = self.R, self.B, self.p
        Phi = quad_features(random_signs((R * B, self.m), self.rng)).reshape(R, B, p)
        res = np.einsum("rbp,rp->rb", Phi, self.E)
        self.E -= (self.eta / B) * np.einsum("rbp,rb->rp", Phi, res)

    def advance(self, n: int) -> np.ndarray:
        """n more steps; ||e_t||^2 after each, shape (n, R)."""
        out = np.empty((n, self.R))
        for k in range(n):
            self.step()
            out[k] = self.sq_norms()
        return out


def sgd_readout_runs(
    m: int, target_col: int, eta: float, B: int, T: int, R: int, rng: np.random.Generator,
    record: Sequence[int] | None = None,
) -> np.ndarray:
    """||e_t||^2 of R independent online SGD runs (see :class:`_ReadoutRuns`) for t = 0..T, shape (T+1, R),
    or (len(record), R) at the steps in ``record``. ``||e_0||^2 = 1``."""
    runs = _ReadoutRuns(m, target_col, eta, B, R, rng)
    T = check_int("T", T, low=0)
    keep = np.arange(T + 1) if record is None else np.asarray(record, dtype=int)
    if keep.size and (keep.min() < 0 or keep.max() > T):
        raise ValueError(f"record steps must lie in [0, {T}]")
    out = np.empty((keep.size, runs.R))
    slot = {int(t): k for k, t in enumerate(keep)}
    for t in range(T + 1):
        if t in slot:
            out[slot[t]] = runs.sq_norms()
        if t == T:
            break
        runs.step()
    return out


@dataclass(frozen=True)
class LawCell:
    """One (configuration, checkpoint) cell of the C1 experiment: the mean of ||e_t||^2 over R fresh runs
    and the delta-method SE of its log, sd / (mean sqrt R). The block reads m slots through p features."""

    label: str
    eta: float
    B: int
    m: int
    p: int
    t: int
    mean: float
    se_log: float


def normalised_step(B: int, p: int) -> float:
    """B/(B + p - 1) = 1/(1 + (p-1)/B): the step the chapter calls eta* (Thm A shows that it minimises the
    contraction factor; here it is only the design of the C1 configurations)."""
    B, p = check_positive_int("batch size B", B), check_positive_int("p", p)
    return 1.0 / (1.0 + (p - 1) / B)


def law_configs(m: int) -> list[tuple[str, float, int]]:
    """(label, eta, B) for the three C1 configurations: B=1 at eta*, B=4 at eta*/2, B=16 at 1.5 eta*."""
    p = n_quad_features(m)
    return [
        ("B=1, eta=eta*", normalised_step(1, p), 1),
        ("B=4, eta=eta*/2", 0.5 * normalised_step(4, p), 4),
        ("B=16, eta=1.5 eta*", 1.5 * normalised_step(16, p), 16),
    ]


LAW_TARGET = 1e-3  # the C1 horizon: the pilot mean of ||e_t||^2 falls to this level
MAX_PILOT_STEPS = 100_000


def pilot_horizon(m: int, eta: float, B: int, R: int, rng: np.random.Generator, target: float = LAW_TARGET) -> int:
    """The first step T at which the mean of ||e_t||^2 over R pilot runs is <= target (the runs fit the pair
    feature z_0 z_1 from w = 0). The decision could only differ between machines if the pilot mean came within
    a rounding error (1e-16 relative) of the target at some step."""
    target = check_real("target", target, 0.0, 1.0, open_low=True, open_high=True)
    runs = _ReadoutRuns(m, pair_index(m, 0, 1), eta, B, R, rng)
    for t in range(1, MAX_PILOT_STEPS + 1):
        runs.step()
        if runs.sq_norms().mean() <= target:
            return t
    raise RuntimeError(f"the pilot mean did not reach {target:g} in {MAX_PILOT_STEPS} steps (eta = {eta:g}, B = {B})")


@dataclass(frozen=True)
class LawStudy:
    """C1 data: the design (label, eta, B, checkpoints) of each configuration and the nine measured cells."""

    design: tuple[tuple[str, float, int, tuple[int, ...]], ...]
    cells: tuple[LawCell, ...]


def law_experiment(m: int, R: int, rng: np.random.Generator) -> LawStudy:
    """C1 data. For each configuration of :func:`law_configs`, R pilot runs (their own child stream of ``rng``)
    fix the horizon T (:func:`pilot_horizon`); then, at each checkpoint t in {T/4, T/2, T}, an independent
    set of R runs (a second child stream) gives one :class:`LawCell`."""
    m, R = check_positive_int("m", m), check_int("R", R, low=2)
    p = n_quad_features(m)
    target = pair_index(m, 0, 1)
    pilot_rng, runs_rng = rng.spawn(2)
    design, cells = [], []
    for label, eta, B in law_configs(m):
        T = pilot_horizon(m, eta, B, R, pilot_rng)
        checkpoints = (max(1, T // 4), max(1, T // 2), T)
        design.append((label, eta, B, checkpoints))
        for t in checkpoints:
            v = sgd_readout_runs(m, target, eta, B, t, R, runs_rng, record=[t])[0]
            mean = float(v.mean())
            se_log = float(v.std(ddof=1) / (mean * np.sqrt(R)))
            cells.append(LawCell(label, float(eta), int(B), m, p, int(t), mean, se_log))
    return LawStudy(tuple(design), tuple(cells))


# ---- C2: steps to reach eps, measured as a first passage ----------------------------------------


def first_passage(curves: np.ndarray, eps: float, interpolate: bool = False) -> np.ndarray:
    """First index t along the last axis with curve[t] <= eps (ValueError if some curve never gets there).

    With ``interpolate``, the crossing time of the piecewise-linear interpolation of log curve between
    t - 1 and t (a real number; for curve = rho^t it is exactly log(1/eps)/log(1/rho))."""
    curves = np.asarray(curves, dtype=float)
    below = curves <= eps
    if not np.all(below.any(axis=-1)):
        raise ValueError(f"a curve never falls below eps = {eps:g}: simulate longer")
    t = below.argmax(axis=-1)
    if not interpolate:
        return t
    if np.any(t == 0):
        raise ValueError("a curve starts below eps: nothing to interpolate")
    hi = np.log(np.take_along_axis(curves, (t - 1)[..., None], axis=-1)[..., 0])
    lo = np.log(np.maximum(np.take_along_axis(curves, t[..., None], axis=-1)[..., 0], 1e-300))
    return t - 1 + (hi - np.log(eps)) / (hi - lo)


@dataclass(frozen=True)
class RateStudy:
    """C2 data: p, the measured T_hat, and the slope of log T_hat on log p with its bootstrap."""

    p: np.ndarray
    T_hat: np.ndarray
    slope: float
    slope_se: float
    ci95: tuple[float, float]
    boot_slopes: np.ndarray
    horizons: np.ndarray  # steps simulated per m (until every curve had crossed eps)
    T_boot: np.ndarray  # (n_boot, len(m_list)): T_hat recomputed from each bootstrap mean curve

    @property
    def log_T_se(self) -> np.ndarray:
        """The bootstrap SE of log T_hat for each m (sd over the resampled mean curves)."""
        return np.log(self.T_boot).std(axis=0, ddof=1)


RATE_CAP_FACTOR = 50


def rate_cap(p: int, eps: float) -> int:
    """The fixed cap on the steps simulated for one m: RATE_CAP_FACTOR p ceil(log(1/eps)), about fifty times
    the natural time scale p log(1/eps) of a readout with p features, from the parameters alone. A run that
    reaches it stops with an error; where the runs stop below it does not change any measured value."""
    return RATE_CAP_FACTOR * check_positive_int("p", p) * int(np.ceil(np.log(1.0 / eps)))


def _crossed(curves: np.ndarray, eps: float) -> bool:
    return bool(np.all((curves <= eps).any(axis=-1)))


def rate_study(m_list: Sequence[int], eps: float, R: int, seed: int, stream: str = "C2",
               n_boot: int = 1000) -> RateStudy:
    """For each m: R runs at B = 1, eta = 1/p; T_hat = the time the mean ||e_t||^2 crosses eps (log-linear
    interpolation between the two steps around the first passage, so T_hat is not an integer).
    The slope's SE is the sd of n_boot bootstrap slopes (runs resampled within each m).

    No horizon is computed from a law: each m draws from its own stream ``rng_for(seed, stream, m)`` (two
    child streams: bootstrap weights, then the runs), so its runs do not depend on the other m of the list,
    and the runs are advanced p steps at a time until the mean curve and every bootstrap curve have crossed
    eps, up to the fixed cap :func:`rate_cap`. Every value is a function of the draws alone, not of where the
    simulation stops."""
    m_list = [check_positive_int("m", m) for m in m_list]
    if len(m_list) < 2 or len(set(m_list)) != len(m_list):
        raise ValueError(f"m_list = {m_list!r} needs at least 2 distinct values")
    eps = check_real("eps", eps, 0.0, 1.0, open_low=True, open_high=True)
    R = check_int("R", R, low=2)
    ps, T_hat, T_boot, horizons = [], [], [], []
    for m in m_list:
        g_boot, g_runs = rng_for(seed, stream, str(m)).spawn(2)
        p = n_quad_features(m)
        cap = rate_cap(p, eps)
        W = g_boot.multinomial(R, np.full(R, 1.0 / R), size=n_boot) / R  # bootstrap weights (n_boot, R)
        runs = _ReadoutRuns(m, pair_index(m, 0, 1), projection_step(p), 1, R, g_runs)
        blocks = [runs.sq_norms()[None, :]]
        while True:
            blocks.append(runs.advance(p))
            curves = np.concatenate(blocks)  # (t + 1, R)
            if curves.shape[0] > cap:
                raise RuntimeError(f"the runs at m = {m} did not all reach eps = {eps:g} in {cap} steps")
            if curves.mean(axis=1).min() > eps:
                continue
            boot = W @ curves.T  # (n_boot, t + 1)
            if _crossed(boot, eps):
                break
        ps.append(p)
        horizons.append(curves.shape[0] - 1)
        T_hat.append(float(first_passage(curves.mean(axis=1), eps, interpolate=True)))
        T_boot.append(first_passage(boot, eps, interpolate=True))
    p_arr = np.array(ps, dtype=float)
    That = np.array(T_hat, dtype=float)
    slope = float(ols_slope(np.log(p_arr), np.log(That))[0])
    T_b = np.stack(T_boot, axis=1)
    boot_s = ols_slope(np.log(p_arr), np.log(T_b))[0]
    lo, hi = np.quantile(boot_s, [0.025, 0.975])
    return RateStudy(p_arr, That, slope, float(boot_s.std(ddof=1)), (float(lo), float(hi)), boot_s,
                     np.array(horizons), T_b)


def budget_study(d: int, delta: float, R: int, seed: int, stream: str = "C3d", n_boot: int = 1000) -> RateStudy:
    """C3d data: for each block of the stack on d = 2^r leaves (m_i = d/2^(i-1) slots, in block order), the
    time T_hat_i at which the mean ||e_t||^2 of R runs at B = 1, eta = 1/p_i crosses delta/(d-1), measured as
    in :func:`rate_study` (a teacher-forced block reads iid uniform slots, and every label of a block has the
    same law, so one pair target per run). The target delta/(d-1) is the chapter's setting, not a law."""
    r = tree_depth(d)
    delta = check_real("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    return rate_study([m for m, _, _ in stack_shapes(r)], delta / (d - 1), R, seed, stream, n_boot)
