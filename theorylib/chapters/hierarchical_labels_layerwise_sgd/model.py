"""The model of chapter 'hierarchical-labels-layerwise-sgd': the parity tree, quadratic readouts, SGD runs.

The instance is the binary parity tree on ``x ~ Unif{±1}^d``, ``d = 2^r``: level 0 holds the inputs and
level ``i`` holds the ``n_i = d / 2^i`` labels ``l^(i)_j = l^(i-1)_{2j} l^(i-1)_{2j+1}`` (0-based), so the
single level-``r`` label is the full parity ``chi_[d](x)``.

* **Cube and features.** :func:`enumerate_cube`, :func:`parity_tree_labels`, :func:`quad_features`
  (the degree-<=2 monomials ``(1, z_a, z_a z_b)`` of a ±1 vector).
* **SGD on one level** (C1, C2): online mini-batch SGD of a quadratic readout on iid uniform slots,
  :func:`sgd_readout_runs`; the C1 cells :func:`law_experiment` (configurations and checkpoints are
  given by the caller) and the C2 first-passage study :func:`rate_study` (it simulates until every
  curve has crossed, so no horizon is needed).
* **The stack and the no-hint learner** (C3): a teacher-forced stack of quadratic readouts
  (:func:`train_hinted_stack`), its rounded prediction on the whole cube (:func:`predict_stack`), and
  the no-hint quadratic learner (:func:`train_no_hint_quadratic`), all evaluated exactly;
  :func:`separation_experiment` (block budgets given by the caller).

The residual network of C4 is in :mod:`.model_net`. Never imports ``theory``: every design number the
theorems prescribe (step sizes, checkpoints, budgets) comes in as an argument. Everything random takes
an explicit ``rng: np.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.rates import ols_slope
from theorylib.core.validation import (
    check_int,
    check_positive,
    check_positive_int,
    check_power_of_two,
    check_real,
)

MAX_ENUM_DIM = 20

# ---------------------------------------------------------------------------------------------
# The cube, the parity tree, quadratic features
# ---------------------------------------------------------------------------------------------


def tree_depth(d: int, name: str = "d") -> int:
    """log2(d) for a power of two d >= 2 (the parity tree pairs coordinates), else ValueError."""
    try:
        return check_power_of_two(name, d, low=2).bit_length() - 1
    except ValueError:
        raise ValueError(f"{name} = {d!r} must be a power of 2 and >= 2 (the parity tree pairs coordinates)") from None


def check_pm1(Z: np.ndarray, name: str = "Z") -> np.ndarray:
    """A 2-D array (samples x coordinates) with entries in {-1, +1}."""
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x coordinates), got shape {Z.shape}")
    if Z.size and not np.all((Z == 1) | (Z == -1)):
        raise ValueError(f"{name} must have entries in {{-1, +1}}")
    return Z


def enumerate_cube(d: int) -> np.ndarray:
    """All 2^d points of {±1}^d as an int8 array of shape (2^d, d) (guard: 1 <= d <= 20)."""
    try:
        d = check_int("d", d, low=1, high=MAX_ENUM_DIM)
    except ValueError:
        raise ValueError(f"d = {d!r} must be an integer in [1, {MAX_ENUM_DIM}] to enumerate the cube") from None
    codes = np.arange(2**d, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(d, dtype=np.int64)) & 1
    return (1 - 2 * bits).astype(np.int8)


def random_signs(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Uniform ±1 entries (float64)."""
    return 2.0 * rng.integers(0, 2, size=shape) - 1.0


def parity_tree_labels(X: np.ndarray, r: int | None = None) -> list[np.ndarray]:
    """Levels 0..r of the binary parity tree: ``[X, l^(1), ..., l^(r)]``.

    Level i has d / 2^i columns, ``l^(i)_j = l^(i-1)_{2j} l^(i-1)_{2j+1}``; the last level is the
    single column ``chi_[d](x) = prod_a x_a``. ``r`` (optional) must equal log2(d).
    """
    X = check_pm1(X, "X")
    rr = tree_depth(X.shape[1], "d (the number of columns of X)")
    if r is not None and r != rr:
        raise ValueError(f"r = {r!r} does not match d = {X.shape[1]} = 2^{rr}")
    levels = [X]
    cur = X
    for _ in range(rr):
        cur = cur[:, 0::2] * cur[:, 1::2]
        levels.append(cur)
    return levels


def label_levels(d: int) -> np.ndarray:
    """The level (1..r) of each of the d - 1 label slots, ordered level 1 first."""
    r = tree_depth(d)
    return np.concatenate([np.full(d >> i, i) for i in range(1, r + 1)])


def all_labels(X: np.ndarray) -> np.ndarray:
    """The d - 1 labels of levels 1..r side by side (level 1 first), shape (n, d - 1)."""
    return np.concatenate(parity_tree_labels(X)[1:], axis=1)


def n_quad_features(m: int) -> int:
    """The number of columns of :func:`quad_features` of m variables, 1 + m + m(m-1)/2."""
    m = check_positive_int("m", m)
    return 1 + m + m * (m - 1) // 2


def pair_index(m: int, a: int, b: int) -> int:
    """Column of ``z_a z_b`` (a < b) in :func:`quad_features` of m variables."""
    if not 0 <= a < b < m:
        raise ValueError(f"need 0 <= a < b < m, got a={a}, b={b}, m={m}")
    return 1 + m + a * m - a * (a + 1) // 2 + (b - a - 1)


def quad_features(Z: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """phi(z) = (1, z_a, z_a z_b (a < b, lexicographic)) for each row z in {±1}^m; shape (n, p)."""
    Z = check_pm1(Z)
    n, m = Z.shape
    if m < 1:
        raise ValueError("Z needs at least one column")
    a, b = np.triu_indices(m, k=1)
    Zf = Z.astype(dtype, copy=False)
    out = np.empty((n, n_quad_features(m)), dtype=dtype)
    out[:, 0] = 1
    out[:, 1 : m + 1] = Zf
    out[:, m + 1 :] = Zf[:, a] * Zf[:, b]
    return out


def round_pm1(v: np.ndarray) -> np.ndarray:
    """sign with ties mapped to +1 (np.sign(0) = 0 would count as neither label)."""
    return np.where(np.asarray(v) >= 0, 1, -1).astype(np.int8)


def projection_step(p: int) -> float:
    """1/||phi||^2 = 1/p: the normalised step at B = 1, which makes each SGD step a projection."""
    return 1.0 / check_positive_int("p", p)


# ---------------------------------------------------------------------------------------------
# SGD of one quadratic readout on iid uniform slots (C1, C2)
# ---------------------------------------------------------------------------------------------


def _check_sgd(eta: float, B: int) -> tuple[float, int]:
    return check_positive("step size eta", eta), check_positive_int("batch size B", B)


class _ReadoutRuns:
    """R independent online SGD runs of a quadratic readout of m iid uniform ±1 slots, advanced on demand.

    The target is the single feature ``target_col`` (realizable, ``w* = e_target``), ``w_0 = 0``, so
    ``e_0 = -e_target``. Each step draws a fresh mini-batch of B inputs per run from ``rng`` and applies
    ``e <- e - (eta/B) sum_b (e^T phi_b) phi_b``; the draws do not depend on how the steps are grouped.
    """

    def __init__(self, m: int, target_col: int, eta: float, B: int, R: int, rng: np.random.Generator) -> None:
        self.m, self.p = m, n_quad_features(m)
        self.eta, self.B = _check_sgd(eta, B)
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
    and the delta-method SE of its log, sd / (mean sqrt R)."""

    label: str
    eta: float
    B: int
    p: int
    t: int
    mean: float
    se_log: float


def law_experiment(m: int, R: int, design: Sequence[tuple[str, float, int, Sequence[int]]],
                   rng: np.random.Generator) -> list[LawCell]:
    """C1 data: for each configuration ``(label, eta, B, checkpoints)`` of ``design`` and each checkpoint t,
    an independent set of R runs fitting the pair feature z_0 z_1 from w = 0; one :class:`LawCell` each."""
    p = n_quad_features(m)
    target = pair_index(m, 0, 1)
    cells = []
    for label, eta, B, checkpoints in design:
        for t in checkpoints:
            v = sgd_readout_runs(m, target, eta, B, t, R, rng, record=[t])[0]
            mean = float(v.mean())
            se_log = float(v.std(ddof=1) / (mean * np.sqrt(R)))
            cells.append(LawCell(label, float(eta), int(B), p, int(t), mean, se_log))
    return cells


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


MAX_RATE_STEPS = 1_000_000


def _crossed(curves: np.ndarray, eps: float) -> bool:
    return bool(np.all((curves <= eps).any(axis=-1)))


def rate_study(m_list: Sequence[int], eps: float, R: int, rng: np.random.Generator,
               n_boot: int = 1000) -> RateStudy:
    """For each m: R runs at B = 1, eta = 1/p; T_hat = the time the mean ||e_t||^2 crosses eps (log-linear
    interpolation between the two steps around the first passage, so T_hat is not an integer).
    The slope's SE is the sd of n_boot bootstrap slopes (runs resampled within each m).

    No horizon is computed from a law: each m gets its own two child streams of ``rng`` (bootstrap weights,
    then the runs), and the runs are advanced p steps at a time until the mean curve and every bootstrap
    curve have crossed eps. Every value is a function of the draws alone, not of where the simulation stops."""
    m_list = [check_positive_int("m", m) for m in m_list]
    if len(m_list) < 2 or len(set(m_list)) != len(m_list):
        raise ValueError(f"m_list = {m_list!r} needs at least 2 distinct values")
    eps = check_real("eps", eps, 0.0, 1.0, open_low=True, open_high=True)
    R = check_int("R", R, low=2)
    streams = rng.spawn(len(m_list))
    ps, T_hat, T_boot, horizons = [], [], [], []
    for m, g in zip(m_list, streams, strict=True):
        g_boot, g_runs = g.spawn(2)
        p = n_quad_features(m)
        W = g_boot.multinomial(R, np.full(R, 1.0 / R), size=n_boot) / R  # bootstrap weights (n_boot, R)
        runs = _ReadoutRuns(m, pair_index(m, 0, 1), projection_step(p), 1, R, g_runs)
        blocks = [runs.sq_norms()[None, :]]
        while True:
            blocks.append(runs.advance(p))
            curves = np.concatenate(blocks)  # (t + 1, R)
            if curves.shape[0] > MAX_RATE_STEPS:
                raise RuntimeError(f"the runs at m = {m} did not all reach eps = {eps:g} in {MAX_RATE_STEPS} steps")
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
    boot_s = ols_slope(np.log(p_arr), np.log(np.stack(T_boot, axis=1)))[0]
    lo, hi = np.quantile(boot_s, [0.025, 0.975])
    return RateStudy(p_arr, That, slope, float(boot_s.std(ddof=1)), (float(lo), float(hi)), boot_s,
                     np.array(horizons))


# ---------------------------------------------------------------------------------------------
# The teacher-forced quadratic stack and the no-hint learner (C3)
# ---------------------------------------------------------------------------------------------


def stack_shapes(r: int) -> list[tuple[int, int, int]]:
    """(m_i, p_i, n_i) for blocks i = 1..r of the parity tree on d = 2^r inputs."""
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"depth r = {r!r} must be an integer >= 1")
    d = 2**r
    return [(d >> (i - 1), n_quad_features(d >> (i - 1)), d >> i) for i in range(1, r + 1)]


def stack_targets(m: int) -> np.ndarray:
    """Feature columns of the m/2 targets z_{2j} z_{2j+1} of a block reading m slots."""
    return np.array([pair_index(m, 2 * j, 2 * j + 1) for j in range(m // 2)])


def train_hinted_stack(r: int, steps: Sequence[int], etas: Sequence[float], B: int,
                       rng: np.random.Generator) -> list[np.ndarray]:
    """Teacher-forced SGD for each block of the stack: block i reads the true level-(i-1) labels
    (iid uniform ±1, so drawn directly) and fits its n_i children by online SGD on the squared loss,
    ``steps[i]`` steps at rate ``etas[i]``. Returns the readouts W_i of shape (p_i, n_i), from W = 0."""
    shapes = stack_shapes(r)
    steps_l = [check_int("steps", s, low=0) for s in steps]
    etas_l = [check_positive("eta", e) for e in etas]
    B = check_positive_int("batch size B", B)
    if len(steps_l) != r or len(etas_l) != r:
        raise ValueError(f"need r = {r} step counts and step sizes, got {len(steps_l)} and {len(etas_l)}")
    Ws = []
    for (m, p, n), T, e in zip(shapes, steps_l, etas_l, strict=True):
        cols = stack_targets(m)
        W = np.zeros((p, n))
        for _ in range(T):
            Phi = quad_features(random_signs((B, m), rng))
            W -= (e / B) * Phi.T @ (Phi @ W - Phi[:, cols])
        Ws.append(W)
    return Ws


def stack_mse(Ws: Sequence[np.ndarray]) -> np.ndarray:
    """Exact clean-input test MSE of every readout: ||W_i[:, j] - e_target||^2 (the features of one level
    are orthonormal, a fact the tests check by enumeration)."""
    out = []
    for W in Ws:
        p, n = W.shape
        m = int(round((np.sqrt(8 * p - 7) - 1) / 2))
        E = W.copy()
        E[stack_targets(m), np.arange(n)] -= 1.0
        out.append(np.einsum("pn,pn->n", E, E))
    return np.concatenate(out)


def predict_stack(X: np.ndarray, Ws: Sequence[np.ndarray], rounding: bool = True,
                  chunk: int = 16384) -> list[np.ndarray]:
    """Run the stack on inputs X: block i reads the (rounded) level-(i-1) stream. Returns the r levels.
    With ``rounding=False`` the raw readout values of the clean (teacher-forced) inputs are returned."""
    X = check_pm1(X, "X")
    r = tree_depth(X.shape[1], "d")
    if len(Ws) != r:
        raise ValueError(f"need {r} readouts for d = {X.shape[1]}, got {len(Ws)}")
    outs: list[list[np.ndarray]] = [[] for _ in range(r)]
    for s in range(0, X.shape[0], chunk):
        Xc = X[s : s + chunk]
        clean = parity_tree_labels(Xc)
        z = Xc
        for i, W in enumerate(Ws):
            v = quad_features(z if rounding else clean[i]) @ W
            z = round_pm1(v)
            outs[i].append(z if rounding else v)
    return [np.concatenate(o) for o in outs]


def exact_top_error(Ws: Sequence[np.ndarray], d: int) -> float:
    """P_x(rounded stack's top label != chi_[d](x)), exactly, by enumerating {±1}^d."""
    X = enumerate_cube(d)
    top = predict_stack(X, Ws)[-1][:, 0]
    return float(np.mean(top != parity_tree_labels(X)[-1][:, 0]))


def exact_sign_errors(Ws: Sequence[np.ndarray], d: int) -> np.ndarray:
    """beta_ij: each readout's sign-error rate on clean inputs, exactly over {±1}^d (levels concatenated)."""
    X = enumerate_cube(d)
    levels = parity_tree_labels(X)
    raw = predict_stack(X, Ws, rounding=False)
    return np.concatenate([np.mean(round_pm1(v) != levels[i + 1], axis=0) for i, v in enumerate(raw)])


def max_top_correlation(d: int, level: int | None = None) -> int:
    """max_j |sum_x l(x) phi_j(x)| over the quadratic features of x (integers, exact), for the label of
    the given level (default: the top, chi_[d])."""
    X = enumerate_cube(d)
    levels = parity_tree_labels(X)
    lv = len(levels) - 1 if level is None else level
    if not 0 <= lv < len(levels):
        raise ValueError(f"level = {level!r} must lie in [0, {len(levels) - 1}]")
    Phi = quad_features(X, dtype=np.int64)
    return int(np.max(np.abs(levels[lv][:, 0].astype(np.int64) @ Phi)))


def train_no_hint_quadratic(d: int, steps: int, eta: float, B: int, rng: np.random.Generator) -> np.ndarray:
    """Online SGD of a quadratic readout of x on the top label chi_[d](x) (no hints), from w = 0."""
    tree_depth(d)
    p = n_quad_features(d)
    eta, B = _check_sgd(eta, B)
    w = np.zeros(p)
    for _ in range(check_int("steps", steps, low=0)):
        X = random_signs((B, d), rng)
        Phi = quad_features(X)
        w -= (eta / B) * Phi.T @ (Phi @ w - np.prod(X, axis=1))
    return w


def exact_no_hint_mse(w: np.ndarray, d: int) -> float:
    """E_x (w^T phi(x) - chi_[d](x))^2, exactly, by enumerating {±1}^d."""
    X = enumerate_cube(d)
    Phi = quad_features(X)
    w = np.asarray(w, dtype=float)
    if w.shape != (Phi.shape[1],):
        raise ValueError(f"w must have shape ({Phi.shape[1]},), got {w.shape}")
    return float(np.mean((Phi @ w - parity_tree_labels(X)[-1][:, 0]) ** 2))


@dataclass(frozen=True)
class SeparationResult:
    """C3 data, all exact over {±1}^d: the top label's correlations, the no-hint learner, the two stacks."""

    d: int
    steps: tuple[int, ...]
    max_corr_top: int
    no_hint_w: np.ndarray
    no_hint_mse: float
    mse: np.ndarray
    top_error: float
    under_steps: tuple[int, ...]
    under_mse: np.ndarray
    under_top_error: float


def under_trained_steps(steps: Sequence[int], frac: float) -> list[int]:
    """The C3 under-trained stack: the top block gets max(1, round(frac T_r)) steps, the others their budget."""
    if not 0 < frac <= 1:
        raise ValueError(f"frac = {frac!r} must lie in (0, 1]")
    return [*steps[:-1], max(1, int(round(frac * steps[-1])))]


MAX_SEPARATION_DIM = 16


def separation_experiment(d: int, steps: Sequence[int], under_frac: float,
                          rng: np.random.Generator) -> SeparationResult:
    """Train the hinted stack with ``steps[i]`` steps for block i (B = 1, the projection step 1/p_i), an
    under-trained copy (:func:`under_trained_steps`), and a no-hint quadratic readout of x for the same
    total number of steps; evaluate all exactly on the cube."""
    r = tree_depth(d, "d")
    if d > MAX_SEPARATION_DIM:
        raise ValueError(f"d = {d} is too large for the exact C3 enumeration (<= {MAX_SEPARATION_DIM})")
    steps = [check_int("steps", s, low=0) for s in steps]
    etas = [projection_step(p) for _, p, _ in stack_shapes(r)]
    Ws = train_hinted_stack(r, steps, etas, 1, rng)
    under = under_trained_steps(steps, under_frac)
    Wu = train_hinted_stack(r, under, etas, 1, rng)
    w = train_no_hint_quadratic(d, sum(steps), projection_step(n_quad_features(d)), 1, rng)
    return SeparationResult(d, tuple(steps), max_top_correlation(d), w, exact_no_hint_mse(w, d), stack_mse(Ws),
                            exact_top_error(Ws, d), tuple(under), stack_mse(Wu), exact_top_error(Wu, d))
