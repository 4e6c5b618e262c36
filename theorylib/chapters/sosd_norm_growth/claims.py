"""The claims of chapter 'sosd-norm-growth': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the
measured data (the dictionaries returned by :mod:`.model`), then the wrong-theory hook ``theory=``, from
which every prediction is read. Tolerances and floating-point error models live here.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType, SimpleNamespace

import numpy as np
from scipy import stats

from theorylib.core.claims import Claim, check_absolute, check_lower, check_relative, check_upper, strict_max
from theorylib.core.rates import ols_slope

from . import theory as _theory

Theory = ModuleType | SimpleNamespace

ALPHA = 1e-3  # the book's false-alarm level per claim
EPS = float(np.finfo(float).eps)
H_GATE = 1e-6  # steps with H(p_t, p_{t+1}) below this are too small for a ratio of differences
IDENTITY_TOL = 1e-12  # the floor of the identity tolerances (a sum of d^2 squares rounds at <= d^2 u)


def _finite_or_nan(x: float) -> float:
    return float(x) if np.isfinite(x) else float("nan")


# ---------------------------------------------------------------- C1: the exact norm and angle identities


def norm_residuals(run: dict, eta: float, lam: float, *, theory: Theory = _theory) -> np.ndarray:
    """|R_{t+1} - theory.next_sq_norm(R_t, ghat_t^2)| / R_{t+1} for every step and matrix of a run."""
    R = run["R"]
    pred = theory.next_sq_norm(R[:-1], run["ghat2"], eta, lam)
    return np.abs(R[1:] - pred) / R[1:]


def identity_tolerance(d: int) -> float:
    """Rounding model of the norm identity for d x d matrices (u = eps / 2).

    Each of R_t, R_{t+1}, ghat_t^2 is a float64 sum of d^2 squares (relative error <= d^2 u, even summed one by
    one) and the update adds a few u. Two further terms: ghat_t^2 comes from a second autodiff pass at What_t,
    so the rounding of two gradient evaluations, |R_t ||g_t||^2 / ghat_t^2 - 1| (measured below 1e-13), enters
    the residual multiplied by sin^2 dtheta_t <= 1 (not small: tan dtheta_t exceeds 1 in the weight-decay run);
    and the radial part of a computed gradient is a cancellation of size d^2 u relative to the upstream
    gradient dL/dW_eff, amplified by ||dL/dW_eff|| / ||its tangential part|| when that is nearly radial (about
    1.07 at the defaults). 4 d^2 u, and never below 1e-12; over the allowed d_model <= 48 the floor is what
    applies except at d_model = 48 (4 d^2 u = 1.02e-12). Measured residuals are about 4e-16."""
    return max(IDENTITY_TOL, 4 * d**2 * EPS / 2)


def claim_norm_identity(name: str, runs: Sequence[tuple[dict, float, float]], d: int, *,
                        theory: Theory = _theory) -> Claim:
    """C1a: ||W_{t+1}||^2 = (1 - eta lam)^2 ||W_t||^2 + eta^2 ghat_t^2 / ||W_t||^2 and <g_t, W_t> = 0 at every step
    of every run, for every matrix.

    ``runs``: (run, eta, lam) triples; a run holds R (T+1, k), ghat2 (T, k) and radial (T, k) =
    |<g_t, W_t>| / (||g_t|| ||W_t||). Measured: the larger of the largest relative residual of the identity and
    the largest radial cosine; predicted 0 within the rounding model ``identity_tolerance(d)``.
    """
    res = strict_max([norm_residuals(run, eta, lam, theory=theory) for run, eta, lam in runs])
    radial = strict_max([run["radial"] for run, _, _ in runs])
    return check_absolute(name, _finite_or_nan(strict_max([[res, radial]])), 0.0, identity_tolerance(d), fp=True,
                          why="exact identity and orthogonality; float64 sums of d^2 squares round at < d^2 u, "
                              "two gradient evaluations at < 1e-13 relative (times sin^2 dtheta <= 1)"
                          ).with_details(res=res, radial=radial)


def claim_angle_identity(name: str, runs: Sequence[tuple[dict, float, float]], d: int, *,
                         theory: Theory = _theory) -> Claim:
    """C1b: tan angle(W_t, W_{t+1}) = eta ghat_t / ((1 - eta lam) ||W_t||^2), measured from the iterates.

    The perpendicular part ||W_{t+1} - <W_{t+1}, What_t> What_t|| loses digits by cancellation, relative
    error <= d^2 u / tan; the tolerance is 100 times that bound at the smallest measured tan.
    """
    worst = strict_max([np.abs(run["tan"] / theory.angular_step_tan(run["R"][:-1], run["ghat2"], eta, lam) - 1)
                     for run, eta, lam in runs])
    tmin = -strict_max([-np.asarray(run["tan"]) for run, _, _ in runs])
    if not (np.isfinite(tmin) and tmin > 0):  # no usable measured step: the claim fails, it does not crash
        worst, tmin = float("nan"), float("inf")
    tol = 100 * d**2 * EPS / tmin
    return check_absolute(name, _finite_or_nan(worst), 0.0, tol, fp=True,
                          why="exact identity; cancellation in the perpendicular part, <= d^2 u / tan"
                          ).with_details(min_tan=tmin)


# ---------------------------------------------------------------- C2: the spectral budget (aligned model)


def predicted_path(problem_start: tuple[float, float], eta: float, alpha: float, T: int, *,
                   theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """(R_t, phi_t) of the 2-D recursion from the measured start (R_0, phi_0)."""
    R0, phi0 = problem_start
    return theory.aligned_recursion(R0, phi0, eta, alpha, T)


def measured_steps_sq(gd: dict) -> np.ndarray:
    """V_t^2 = ||sqrt p_{t+1} - sqrt p_t||^2 from the SVDs of consecutive iterates."""
    return np.sum(np.diff(gd["sqrt_p"], axis=0) ** 2, axis=1)


def claim_budget_path(name: str, gd: dict, start: tuple[float, float], eta: float, alpha: float, *,
                      theory: Theory = _theory) -> Claim:
    """C2a: the measured sum_t V_t^2 equals the recursion's sum_t 4 sin^2(dphi_t / 2) (relative 1e-9).

    fp: an SVD of a 32 x 32 matrix has backward error ~ r u ||W||; summed over T steps of size
    V_t ~ dphi the relative error stays below 1e-12; 1e-9 leaves three decades.
    """
    T = gd["sqrt_p"].shape[0] - 1
    _, phi = predicted_path(start, eta, alpha, T, theory=theory)
    pred = float(np.sum(theory.aligned_spectral_steps(phi)))
    meas = float(np.sum(measured_steps_sq(gd)))
    return check_relative(name, meas, _finite_or_nan(pred), 1e-9, fp=True,
                          why="exact 2-D dynamics; SVD rounding only")


def claim_norm_path(name: str, gds: Sequence[dict], starts: Sequence[tuple[float, float]],
                    etas: Sequence[float], alphas: Sequence[float], *, theory: Theory = _theory) -> Claim:
    """C2b: the measured ||W_t||^2 follows the recursion's R_t (the fast phase's norm jump) at every step.

    fp: R_t is a product of t factors 1 / cos^2, relative error <= 4 t u; tolerance 1e-10 (T <= 5000).
    """
    gaps = []
    for gd, start, eta, a in zip(gds, starts, etas, alphas, strict=True):
        T = gd["norm"].size - 1
        R, _ = predicted_path(start, eta, a, T, theory=theory)
        if np.shape(R) != gd["norm"].shape:
            return check_absolute(name, float("nan"), 0.0, 1e-10, fp=True, why="shape mismatch")
        gaps.append(np.abs(gd["norm"] ** 2 / R - 1))
    worst = strict_max(gaps)
    return check_absolute(name, _finite_or_nan(worst), 0.0, 1e-10, fp=True,
                          why="exact recursion; products of T rounded factors")


def budget_efficiency(V: np.ndarray) -> np.ndarray:
    """Per step, 4 sin^2(x/2) / (-2 log cos x) at the angle x = 2 arcsin(V/2) of a step of spectral size V.

    In the aligned model V_t = 2 sin(dphi_t / 2), so this is the step's share of its budget (1 - x^2/4 + ...).
    """
    x = 2 * np.arcsin(np.clip(np.asarray(V) / 2, 0, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = 4 * np.sin(x / 2) ** 2 / -np.log1p(-np.sin(x) ** 2)  # -2 log cos x, without cancellation
    return np.where(x > 0, eff, 1.0)


def transformer_budget_ratios(run: dict, *, theory: Theory = _theory) -> np.ndarray:
    """Per attention matrix of a lam = 0 Transformer run: sum_t V_t^2 / theory.spectral_budget(||W_0||, ||W_T||)."""
    V2 = np.sum(np.sum(np.diff(run["sqrt_p"], axis=0) ** 2, axis=2), axis=0)
    n = np.sqrt(run["R"])
    bound = np.array([float(theory.spectral_budget(n[0, m], n[-1, m])) for m in range(n.shape[1])])
    with np.errstate(divide="ignore", invalid="ignore"):
        return V2 / bound


def claim_budget_bound(name: str, gd: dict, tf_run: dict | None = None, *, theory: Theory = _theory) -> Claim:
    """C2c: sum_t V_t^2 <= 2 log(||W_T|| / ||W_0||) on the aligned run and, with ``tf_run`` (a lam = 0 run of
    the Transformer with spectra), on each of its attention matrices. Measured: the largest ratio
    sum_t V_t^2 / budget (the aligned run's is close to 1 when kappa is small); bound 1, 1e-12 for rounding.
    Only the aligned part has power against a wrong constant: the Transformer's ratios are a few hundredths,
    so there the claim checks the direction of the bound only."""
    meas = float(np.sum(measured_steps_sq(gd)))
    bound = float(theory.spectral_budget(gd["norm"][0], gd["norm"][-1]))
    ratio = meas / bound if bound else float("nan")
    tf = transformer_budget_ratios(tf_run, theory=theory) if tf_run is not None else np.array([])
    ratios = np.concatenate([[ratio], tf])
    worst = float(np.max(ratios)) if np.all(np.isfinite(ratios)) and np.all(ratios >= 0) else float("nan")
    c = check_upper(name, worst, 1.0, rtol=1e-12,
                    why="proved bound; 1e-12 relative for rounding; the Transformer part checks only the direction "
                        "of the bound (its ratios are far below 1: a budget without its factor 2 passes there)")
    return c.with_details(ratio=ratio, tf_ratios=tf)


def claim_budget_attained(name: str, gd: dict, *, theory: Theory = _theory) -> Claim:
    """C2d: the budget is attained up to the step size: sum_t V_t^2 >= e_min * 2 log(||W_T|| / ||W_0||), with
    e_min the smallest per-step efficiency 4 sin^2(x/2) / (-2 log cos x) of the measured steps (1e-12 slack)."""
    V2 = measured_steps_sq(gd)
    meas = float(np.sum(V2))
    e_min = float(np.min(budget_efficiency(np.sqrt(V2))))
    bound = float(theory.spectral_budget(gd["norm"][0], gd["norm"][-1]))
    floor = e_min * bound if np.isfinite(bound) else float("nan")
    return check_lower(name, meas, floor, rtol=1e-12,
                       why="each step uses the share e(x) = 1 - x^2/4 + ... of its budget").with_details(
        e_min=e_min)


# ---------------------------------------------------------------- C3: t^(1/4) norm growth (lam = 0)


def window(T: int) -> np.ndarray:
    """The late window [T/16, T] of the growth fit (a fixed fraction of the horizon, not of the law)."""
    return np.arange(T // 16, T + 1)


def growth_offset(run: dict, eta: float) -> tuple[float, float]:
    """Finite-window corrections of the log-log slope, from measured quantities only.

    delta: slope of 1/4 log Q_t - 1/4 with Q_t = mean R_0^2 + 2 eta^2 m t, m the mean of ghat_t^2 over the
    window and the seeds (the start's offset under a constant noise power; a drift of the noise power is
    not absorbed); eps: |slope of 1/4 log(1 + E_t / Q_t)| with E_t = eta^4 sum_{s<t} mean ghat_s^4 / R_s^2,
    the neglected higher-order term.
    """
    R, g2 = run["R"], run["ghat2"]
    T = g2.shape[0]
    t = window(T)
    m = float(np.mean(g2[t[0]:]))
    Q = np.mean(R[0] ** 2) + 2 * eta**2 * m * np.arange(T + 1)
    E = eta**4 * np.concatenate([[0.0], np.cumsum(np.mean(g2**2 / R[:-1] ** 2, axis=1))])
    s_q, _ = ols_slope(np.log(t), 0.25 * np.log(Q[t]))
    s_e, _ = ols_slope(np.log(t), 0.25 * np.log1p(E[t] / Q[t]))
    return float(s_q - 0.25), float(abs(s_e))


def claim_growth_exponent(name: str, run: dict, eta: float, *, theory: Theory = _theory) -> Claim:
    """C3: the mean over seeds of the OLS slope of log ||W_t|| on log t over [T/16, T] equals the exponent
    plus the measured finite-window offset delta; tolerance t_{1-alpha/2, S-1} SE + eps."""
    R = run["R"]
    T, S = R.shape[0] - 1, R.shape[1]
    t = window(T)
    slopes = np.array([ols_slope(np.log(t), 0.5 * np.log(R[t, s]))[0] for s in range(S)])
    delta, eps = growth_offset(run, eta)
    se = float(slopes.std(ddof=1) / np.sqrt(S))
    q = float(stats.t.isf(ALPHA / 2, S - 1))
    pred = float(theory.norm_growth_exponent()) + delta
    meas = float(slopes.mean())
    tol = q * se + eps
    return check_absolute(name, meas, pred, tol,
                          why=f"Student t over {S} seeds at 99.9% plus the neglected eta^4 term").with_details(
        se=se, delta=delta, eps=eps, slopes=slopes)


# ---------------------------------------------------------------- C4: equilibrium with weight decay


def claim_equilibrium(name: str, run: dict, eta: float, lam: float, *, theory: Theory = _theory) -> Claim:
    """C4a: the mean of log(1 + tan^2 dtheta_t) over the window [T/2, T] and the seeds equals
    -2 log(1 - eta lam); per-seed window means are independent, SE over seeds, Student t at 99.9%."""
    tan = run["tan"]
    T, S = tan.shape
    per_seed = np.log1p(tan[T // 2:] ** 2).mean(axis=0)
    se = float(per_seed.std(ddof=1) / np.sqrt(S))
    z = float(stats.t.isf(ALPHA / 2, S - 1))
    pred = float(theory.equilibrium_log_sec2(eta, lam))
    return check_absolute(name, float(per_seed.mean()), _finite_or_nan(pred), z * se,
                          why=f"Student t over {S} seeds at 99.9% (window [T/2, T])").with_details(
        se=se, per_seed=per_seed, rel=float(per_seed.mean()) / pred - 1 if pred else float("nan"))


def claim_invariance(name: str, run: dict, run_scaled: dict, c: float, *, theory: Theory = _theory) -> Claim:
    """C4b: the run from (sqrt(c) W_0, c eta, lam / c) has ||W'_t|| = s ||W_t|| at every step, s from the theory,
    and the same final directions. Measured: max relative gap of the norms and of the final directions."""
    s = float(theory.invariance_norm_scale(c))
    n, n2 = np.sqrt(run["R"]), np.sqrt(run_scaled["R"])
    gap_norm = float(np.max(np.abs(n2 - s * n) / n2))
    W, W2 = run["W_final"], run_scaled["W_final"]
    u = W / np.sqrt(np.sum(W**2, axis=(1, 2)))[:, None, None]
    u2 = W2 / np.sqrt(np.sum(W2**2, axis=(1, 2)))[:, None, None]
    gap_dir = float(np.max(np.abs(u2 - u)))
    return check_absolute(name, _finite_or_nan(strict_max([[gap_norm, gap_dir]])), 0.0, IDENTITY_TOL, fp=True,
                          why="exact in binary for c a power of 4").with_details(gap_norm=gap_norm, gap_dir=gap_dir)


# ---------------------------------------------------------------- C5: the loss is bounded by the spectrum


def claim_loss_spectrum(name: str, gds: Sequence[dict], alphas: Sequence[float], *,
                        theory: Theory = _theory) -> Claim:
    """C5a: L_t (from the matrices) = alpha^2 H^2(p_t, p*) (from the SVDs) at every step; max |gap| / alpha^2."""
    gap = strict_max([np.abs(gd["loss"] - theory.loss_from_spectrum(a, gd["H_star"])) / a**2
                   for gd, a in zip(gds, alphas, strict=True)])
    return check_absolute(name, _finite_or_nan(gap), 0.0, IDENTITY_TOL, fp=True,
                          why="exact identity; rounding of r-term sums")


def root_loss_steps(gd: dict, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(sqrt L_t - sqrt L_{t+1}, H(p_t, p_{t+1})) for every step, measured."""
    rl = np.sqrt(gd["loss"])
    H = np.sqrt(measured_steps_sq(gd) / 2.0)
    return rl[:-1] - rl[1:], H


def claim_root_loss_ratio(name: str, gds: Sequence[dict], starts: Sequence[tuple[float, float]],
                          etas: Sequence[float], alphas: Sequence[float], *, theory: Theory = _theory) -> Claim:
    """C5b: rho_t = (sqrt L_t - sqrt L_{t+1}) / (alpha H_t) equals the closed form of the recursion on every
    step with H_t > 1e-6 (SVD backward error 1e-15 / 1e-6 leaves 1e-9; tolerance 1e-8)."""
    gaps = []
    for gd, start, eta, a in zip(gds, starts, etas, alphas, strict=True):
        drl, H = root_loss_steps(gd, a)
        keep = H > H_GATE
        _, phi = predicted_path(start, eta, a, H.size, theory=theory)
        pred = theory.root_loss_ratio(phi)
        gaps.append(np.abs(drl[keep] / (a * H[keep]) - pred[keep]))
    worst = strict_max(gaps)
    return check_absolute(name, _finite_or_nan(worst), 0.0, 1e-8, fp=True,
                          why="exact closed form; SVD rounding over H_t > 1e-6")


def claim_root_loss_bound(name: str, gds: Sequence[dict], alphas: Sequence[float], *,
                          theory: Theory = _theory) -> Claim:
    """C5c: max_t (sqrt L_t - sqrt L_{t+1}) / bound_t = 1 with bound_t = alpha H(p_t, p_{t+1}): the bound holds
    and is attained in the slow phase (rho_t -> 1 as phi_t -> 0; 1 - rho_t < 1e-9 once H_t ~ 1e-6)."""
    ratios = []
    for gd, a in zip(gds, alphas, strict=True):
        drl, H = root_loss_steps(gd, a)
        keep = H > H_GATE
        ratios.append(drl[keep] / theory.root_loss_step_bound(a, H[keep]))
    worst = strict_max(ratios)
    return check_absolute(name, _finite_or_nan(worst), 1.0, 1e-8,
                          why="proved bound, attained as phi -> 0; 1e-8 for SVD rounding over H_t > 1e-6")


# ---------------------------------------------------------------- C6: Muon, the universal bound


def claim_muon_bound(name: str, run: dict, *, theory: Theory = _theory) -> Claim:
    """C6: with orthogonalised (Muon) updates, V_t <= 2 ||W_{t+1} - W_t|| / max(||W_t||, ||W_{t+1}||) at every
    step; measured: max_t V_t / bound_t (the step's Frobenius norm is measured from the iterates' norms)."""
    n = np.sqrt(run["R"])
    step = run["step"]
    bound = theory.muon_spectral_bound(step, n[:-1], n[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = run["V"] / bound
    worst = float(np.max(ratio)) if np.all(np.isfinite(ratio)) else float("inf")
    return check_upper(name, worst if np.isfinite(worst) else float("nan"), 1.0, tol=1e-12,
                       why="proved bound (Mirsky); 1e-12 for rounding").with_details(
        mean_ratio=float(np.mean(ratio)) if np.all(np.isfinite(ratio)) else float("nan"))
