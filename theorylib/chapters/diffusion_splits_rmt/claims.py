"""The claims of chapter 'diffusion-splits-rmt': one function per claim, one shape for all.

``claim_x(name, measured data..., settings..., *, theory=theory) -> Claim``: the name first, then the
measured data (the simulated sizes :class:`~.model.SplitRun`, the isotropic datasets :class:`~.model.IsoData`,
the rate sweep :class:`~.model.RateData` or the fixed-d datasets :class:`~.model.FixedDData`),
then the settings, then the wrong-theory hook ``theory=``, from which every prediction is read. The
intermediate values the notebook shows come back as ``claim.details``; for the Richardson claims they are
``r_p, cov_p, r_2p, cov_2p`` (sizes P and 2P), ``r_inf, cov_inf`` (the limit) and ``se_inf``.
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from theorylib.core.claims import Claim, check_chi2, check_zscore
from theorylib.core.rates import fit_loglog, ols_slope
from theorylib.core.validation import check_int

from . import theory as _theory
from .estimators import bin_mean, bin_sum, jackknife, mean_pair_disagreement, richardson, unbiased_var, whiten
from .model import FixedDData, IsoData, RateData, SampleRun, SplitRun
from .model_stats import var_features

Theory = ModuleType | SimpleNamespace


def _extrapolated(rP: np.ndarray, cP: np.ndarray, r2: np.ndarray, c2: np.ndarray) -> dict[str, Any]:
    """Per-size values, their covariances and the Richardson limit, as claim details."""
    ri, ci = richardson(rP, cP, r2, c2)
    return {"r_p": rP, "cov_p": cP, "r_2p": r2, "cov_2p": c2, "r_inf": ri, "cov_inf": ci,
            "se_inf": np.sqrt(np.diag(ci))}


def _zscore(name: str, ex: dict[str, Any], why: str) -> Claim:
    """The Richardson ratio 1 + r_inf within 3.29 SE_inf of 1; an undefined (non-finite) prediction fails."""
    m, se = float(1 + ex["r_inf"][0]), float(ex["se_inf"][0])
    if not (np.isfinite(m) and np.isfinite(se) and se > 0):
        return check_zscore(name, float("nan"), 1.0, 1.0, why).with_details(**ex)
    return check_zscore(name, m, 1.0, se, why).with_details(**ex)


def _chi2(name: str, r: np.ndarray, cov: np.ndarray, why: str) -> Claim:
    """Whitened chi2 of r with covariance cov; an undefined (non-finite) prediction fails."""
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(cov))):
        return check_chi2(name, np.full(np.size(r), np.nan), why)
    return check_chi2(name, whiten(r, cov), why)


# --------------------------------------------------------------------------------------------------
# C1: the renormalised noise


def kappa_bin_stat(run: SplitRun, j: int, nbins: int = 5, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """r_b = mean_{i in bin b}(kappa_hat_i / kappa) - 1, kappa_hat_i = s_i m_i/(1-m_i), m = dataset mean of
    diag sigma^2 R(sigma^2) (noise level index j); delete-one jackknife over datasets. (r (nbins,), cov).

    With the predicted shrinkage p = kappa/(s + kappa) (Theorem 1), kappa_hat_i/kappa is the odds ratio
    [m_i/(1-m_i)] / [p_i/(1-p_i)], which is how it is computed."""
    s, t = run.s, run.sigma2_list[j]
    p = np.asarray(theory.predicted_mean_shrinkage(s, theory.kappa(t, s, run.n)), dtype=float)
    odds = p / (1 - p)

    def stat(m: np.ndarray, _c: int) -> np.ndarray:
        return bin_mean(m / (1 - m) / odds, nbins) - 1.0

    return jackknife(run.shrink[:, j, :], stat)


def claim_kappa(name: str, run_P: SplitRun, run_2P: SplitRun, j: int, nbins: int = 5, *,
                theory: Theory = _theory) -> Claim:
    """C1: Richardson-extrapolated bin statistics jointly consistent with 0 (whitened chi2_nbins)."""
    ex = _extrapolated(*kappa_bin_stat(run_P, j, nbins, theory=theory),
                       *kappa_bin_stat(run_2P, j, nbins, theory=theory))
    why = (f"kappa_hat/kappa - 1 in {nbins} spectral bins, Richardson n->2n, delete-one jackknife "
           "covariance; joint chi2 at alpha = 1e-3 (kappa right AND the same for every mode)")
    return _chi2(name, ex["r_inf"], ex["cov_inf"], why).with_details(**ex)


def isotropic_stat(iso: IsoData, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """Sigma = I: per noise level, mean over datasets of (sigma^2/d) tr R(sigma^2) divided by the predicted
    shrinkage kappa/(1 + kappa), kappa = theory.mp_kappa_isotropic(sigma^2, d/n), minus 1; jackknife."""
    ones = np.ones(iso.d)
    pred = np.array([np.mean(theory.predicted_mean_shrinkage(ones, theory.mp_kappa_isotropic(t, iso.d / iso.n)))
                     for t in iso.sigma2_list], dtype=float)

    def stat(m: np.ndarray, _c: int) -> np.ndarray:
        return m / pred - 1.0

    return jackknife(iso.shrink, stat)


def claim_isotropic(name: str, iso_P: IsoData, iso_2P: IsoData, *, theory: Theory = _theory) -> Claim:
    """C1 (Sigma = I): Richardson-extrapolated relative errors of the Marchenko-Pastur shrinkage at every noise
    level jointly consistent with 0 (whitened chi2_L)."""
    ex = _extrapolated(*isotropic_stat(iso_P, theory=theory), *isotropic_stat(iso_2P, theory=theory))
    why = ("Sigma = I: (sigma^2/d) tr R / [kappa_MP/(1+kappa_MP)] - 1 per noise level, Richardson n->2n, "
           "delete-one jackknife covariance; joint chi2 at alpha = 1e-3")
    return _chi2(name, ex["r_inf"], ex["cov_inf"], why).with_details(**ex)


# --------------------------------------------------------------------------------------------------
# C2: the fluctuation formula


def variance_ratio(run: SplitRun, k: int, nbins: int | None = None, *,
                   theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """Measured/predicted - 1 for the total variance V(y) = sum_i Var_data D_hat_i(y) of input k (nbins None),
    or per spectral bin. Delete-one jackknife over datasets. Returns (r, cov)."""
    s, y = run.s, run.inputs[k]
    kap = float(theory.kappa(run.sigma2_fluct, s, run.n))
    pred = np.asarray(theory.predicted_cov_diag(s, kap, y, run.n), dtype=float)

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        v = unbiased_var(means, count)
        if nbins is None:
            return (v.sum(axis=-1) / pred.sum() - 1.0)[..., None]
        return bin_sum(v, nbins) / bin_sum(pred, nbins) - 1.0

    return jackknife(var_features(run.denoised[:, k, :]), stat)


def claim_variance(name: str, run_P: SplitRun, run_2P: SplitRun, k: int, *, theory: Theory = _theory) -> Claim:
    """C2 (per input): Richardson ratio V_measured/V_formula within 3.29 SE_inf of 1."""
    ex = _extrapolated(*variance_ratio(run_P, k, theory=theory), *variance_ratio(run_2P, k, theory=theory))
    why = ("total cross-dataset variance / c(y) tr Sigma(Sigma+kappa)^-2, Richardson n->2n; "
           "SE_inf from delete-one jackknifes at P and 2P (4th moments), 3.29 SE_inf")
    return _zscore(name, ex, why)


def claim_profile(name: str, run_P: SplitRun, run_2P: SplitRun, k: int, nbins: int = 5, *,
                  theory: Theory = _theory) -> Claim:
    """C2 profile: per-bin variance ratios (Richardson) jointly consistent with 1 (whitened chi2)."""
    ex = _extrapolated(*variance_ratio(run_P, k, nbins, theory=theory),
                       *variance_ratio(run_2P, k, nbins, theory=theory))
    why = (f"per-bin variance / c(y) sum_bin s/(s+kappa)^2 in {nbins} bins, Richardson n->2n; "
           "whitened by the jackknife covariance; chi2 at alpha = 1e-3")
    return _chi2(name, ex["r_inf"], ex["cov_inf"], why).with_details(**ex)


def _own_direction(s: np.ndarray, kap: float, Y: np.ndarray, D: np.ndarray, n: int,
                   theory: Theory) -> tuple[np.ndarray, np.ndarray]:
    """Projections v^T D_hat(y) (reps, k) on the inputs' own directions v = y/|y| and their predicted variances
    c(y) v^T G Sigma G v + (v^T u)^2 (k,), u u^T the rank-one term of Theorem 2 (theory.rankone_term)."""
    dirs = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    pred = np.array([np.sum(theory.predicted_cov_diag(s, kap, y, n) * v**2)
                     + float(v @ theory.rankone_term(s, kap, y, n)) ** 2
                     for y, v in zip(Y, dirs, strict=True)], dtype=float)
    return np.einsum("rkd,kd->rk", D, dirs), pred


def own_direction_ratio(run: SplitRun, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """Per named input y, then pooled over the bank of random inputs: the variance over datasets of v^T D_hat(y),
    v = y/|y| (the input's own direction), measured/predicted - 1; delete-one jackknife over datasets.
    Returns (r (k+1,), cov)."""
    s = run.s
    kap = float(theory.kappa(run.sigma2_fluct, s, run.n))
    proj, pred = _own_direction(s, kap, run.inputs, run.denoised, run.n, theory)
    if run.bank.shape[0] == 0:  # no bank: the named inputs only
        return jackknife(var_features(proj), lambda means, count: unbiased_var(means, count) / pred - 1.0)
    proj_b, pred_b = _own_direction(s, kap, run.bank, run.bank_denoised, run.n, theory)
    k = proj.shape[1]

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        v = unbiased_var(means, count)
        pooled = v[..., k:].sum(axis=-1, keepdims=True) / pred_b.sum()
        return np.concatenate([v[..., :k] / pred, pooled], axis=-1) - 1.0

    return jackknife(var_features(np.concatenate([proj, proj_b], axis=1)), stat)


def claim_own_direction(name: str, run_P: SplitRun, run_2P: SplitRun, pooled: bool = False, *,
                        theory: Theory = _theory) -> Claim:
    """C2 (rank-one term): the Richardson variance ratios along the inputs' own directions, for the named inputs
    jointly consistent with 1 (whitened chi2_k), or (``pooled``) the ratio pooled over the bank of random inputs
    within 3.29 SE_inf of 1."""
    ex = _extrapolated(*own_direction_ratio(run_P, theory=theory), *own_direction_ratio(run_2P, theory=theory))
    why = ("Var_data(v^T D_hat(y)), v = y/|y|, / [c(y) v^T G Sigma G v + kappa^2 (v^T Sigma G^2 y)^2/(n(1-df2/n))]"
           " - 1, Richardson n->2n, delete-one jackknife covariance; ")
    k = run_P.inputs.shape[0]
    if pooled:
        if ex["r_inf"].size <= k:
            raise ValueError("the pooled claim needs a bank of random inputs")
        last = {key: (val[k:] if key.startswith("r_") or key == "se_inf" else val[k:, k:])
                for key, val in ex.items()}
        return _zscore(name, last, why + "summed over the bank of random inputs, 3.29 SE_inf")
    return _chi2(name, ex["r_inf"][:k], ex["cov_inf"][:k, :k], why + "per named input, joint chi2 at alpha = 1e-3"
                 ).with_details(**{key: (val[:k] if key.startswith("r_") or key == "se_inf" else val[:k, :k])
                                   for key, val in ex.items()})


def centered_variance_ratio(run: SplitRun, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """Illustration, not a claim (the centered model, empirical mean, N = n + 1 samples): per named input, the
    total variance over datasets of its centered denoiser output D_hat(y) + sigma^2 R xbar, measured /
    [c(y) tr Sigma G^2 + tr of the mean's term] - 1; by the exact part (c) of the proposition it is the sum of the two
    parts that claim_variance and claim_centered check. Delete-one jackknife over datasets. Returns (r (k,), cov)."""
    s, k = run.s, run.inputs.shape[0]
    kap = float(theory.kappa(run.sigma2_fluct, s, run.n))
    extra = float(np.sum(theory.centered_mean_term(s, kap, run.n, run.n_centered)))
    pred = np.array([float(np.sum(theory.predicted_cov_diag(s, kap, y, run.n))) + extra for y in run.inputs])
    D = np.stack([run.centered(j) for j in range(k)], axis=1).reshape(run.denoised.shape[0], -1)

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        v = unbiased_var(means, count)
        return v.reshape(*v.shape[:-1], k, -1).sum(axis=-1) / pred - 1.0

    return jackknife(var_features(D), stat)


def centered_totals(run_P: SplitRun, run_2P: SplitRun, *, theory: Theory = _theory) -> dict[str, Any]:
    """Illustration: the Richardson-extrapolated centered totals of :func:`centered_variance_ratio` (details)."""
    return _extrapolated(*centered_variance_ratio(run_P, theory=theory),
                         *centered_variance_ratio(run_2P, theory=theory))


def centered_mean_ratio(run: SplitRun, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """The mean's own term of the centered model: predicted / measured - 1, the measured value being the total
    variance over datasets of sigma^2 R xbar (``run.centered_shift``, unbiased), the predicted one
    sum(theory.centered_mean_term) at N = n + 1; delete-one jackknife over datasets. Written predicted / measured so
    that a theory without the term (prediction 0) gives -1 and fails instead of dividing by zero.
    Returns (r (1,), cov)."""
    if run.centered_shift is None:
        raise ValueError("the centered model was not simulated (give simulate_splits a mean_rng)")
    kap = float(theory.kappa(run.sigma2_fluct, run.s, run.n))
    pred = float(np.sum(theory.centered_mean_term(run.s, kap, run.n, run.n_centered)))

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        return (pred / unbiased_var(means, count).sum(axis=-1) - 1.0)[..., None]

    return jackknife(var_features(run.centered_shift), stat)


def claim_centered(name: str, run_P: SplitRun, run_2P: SplitRun, *, theory: Theory = _theory) -> Claim:
    """C2 (centered model, the mean's own term): Richardson ratio predicted / measured within 3.29 SE_inf of 1."""
    ex = _extrapolated(*centered_mean_ratio(run_P, theory=theory), *centered_mean_ratio(run_2P, theory=theory))
    why = ("centered model: sigma^4 tr E[R Sigma R]/N (Theorem 2 with A = Sigma) / total cross-dataset variance of "
           "sigma^2 R xbar, Richardson n->2n; SE_inf from delete-one jackknifes at P and 2P, 3.29 SE_inf")
    return _zscore(name, ex, why)


def bank_variance_ratio(run: SplitRun, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """The total variance summed over the bank of random inputs, measured/predicted - 1 (one statistic);
    delete-one jackknife over datasets."""
    s = run.s
    kap = float(theory.kappa(run.sigma2_fluct, s, run.n))
    pred = float(sum(np.sum(theory.predicted_cov_diag(s, kap, y, run.n)) for y in run.bank))
    D = run.bank_denoised.reshape(run.bank_denoised.shape[0], -1)

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        return (unbiased_var(means, count).sum(axis=-1) / pred - 1.0)[..., None]

    return jackknife(var_features(D), stat)


def claim_bank(name: str, run_P: SplitRun, run_2P: SplitRun, *, theory: Theory = _theory) -> Claim:
    """C2 pooled: the Richardson ratio of the total variance over B random inputs to the formula within
    3.29 SE_inf of 1. All inputs share the amplification 1/(1 - df2/n), so pooling many directions measures
    the level (and with it the amplification) more precisely than any single input."""
    ex = _extrapolated(*bank_variance_ratio(run_P, theory=theory), *bank_variance_ratio(run_2P, theory=theory))
    why = (f"total cross-dataset variance over {run_P.bank.shape[0]} random inputs / sum of c(y) tr "
           "Sigma(Sigma+kappa)^-2, Richardson n->2n; SE_inf from delete-one jackknifes at P and 2P, 3.29 SE_inf")
    return _zscore(name, ex, why)


# --------------------------------------------------------------------------------------------------
# C3: the rate at fixed d


def claim_rate(name: str, rate: RateData, fit_from: int, rng: np.random.Generator, n_boot: int = 2000, *,
               theory: Theory = _theory) -> Claim:
    """C3: the fitted log-log slope of the mean pair disagreement on n, over the window n >= ``fit_from``,
    within 3.29 SE_boot (bootstrap over pairs, drawn from ``rng``) of the OLS slope of the formula
    ``theory.predicted_disagreement`` on the same window.

    The window is a setting (the chapter's parameter), never computed from the formula. Details: ``fit`` (the
    :class:`~theorylib.core.rates.LogLogFit`), ``window`` (boolean mask over ``rate.ns``), ``formula_slope`` and
    ``formula`` (the predicted disagreement at every n of the sweep, window or not)."""
    fit_from = check_int("fit_from", fit_from)
    ns = np.asarray(rate.ns, dtype=int)
    win = ns >= fit_from
    if win.sum() < 3:
        raise ValueError(f"rate_fit_from = {fit_from} leaves fewer than 3 sizes in the fit window")
    formula = np.array([theory.predicted_disagreement(rate.s, theory.kappa(rate.sigma2, rate.s, int(n)), rate.y,
                                                      int(n)) for n in ns], dtype=float)
    beta, _ = ols_slope(np.log(ns[win].astype(float)), np.log(formula[win]))
    fit = fit_loglog(ns[win].astype(float), replicates=rate.disagreements[:, win], paired=False, n_boot=n_boot,
                     rng=rng)
    why = ("OLS slope of log E|D1-D2|^2 on log n (window where the O(1/n) bias is negligible), "
           "bootstrap SE over pairs, 3.29 SE_boot")
    claim = check_zscore(name, fit.slope, float(beta), fit.slope_se, why)
    return claim.with_details(fit=fit, window=win, formula_slope=float(beta), formula=formula)


def fixed_d_stat(data: FixedDData, i: int, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """At size ``data.ns[i]``: n V_hat(y) / theory.delta_method_variance(s, y, sigma^2) - 1, V_hat the unbiased
    total variance over datasets; delete-one jackknife."""
    n = data.ns[i]
    pred = float(theory.delta_method_variance(data.s, data.y, data.sigma2))

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        return (n * unbiased_var(means, count).sum(axis=-1) / pred - 1.0)[..., None]

    return jackknife(var_features(data.denoised[i]), stat)


def claim_fixed_d(name: str, data: FixedDData, *, theory: Theory = _theory) -> Claim:
    """C3 (fixed d): the Richardson limit (sizes n and 2n) of n tr Cov D_hat(y) within 3.29 SE_inf of the
    delta-method value, rank-one term included."""
    if len(data.ns) != 2 or data.ns[1] != 2 * data.ns[0]:
        raise ValueError(f"the fixed-d claim needs the sizes n and 2n, got {data.ns}")
    ex = _extrapolated(*fixed_d_stat(data, 0, theory=theory), *fixed_d_stat(data, 1, theory=theory))
    why = ("n x total cross-dataset variance / delta-method limit at fixed d, Richardson n->2n; "
           "SE_inf from delete-one jackknifes, 3.29 SE_inf")
    return _zscore(name, ex, why)


# --------------------------------------------------------------------------------------------------
# C4: fractional powers


FRACTIONAL = ("smap", "smid", "ssqrt")


def fractional_prediction(run: SplitRun, which: str, *, theory: Theory = _theory) -> np.ndarray:
    """diag E[M_hat] (``"smap"``: the whole trajectory b -> a; ``"smid"``: stopped at its midpoint b -> a_mid;
    both ``theory.sampling_map_detequiv``) or diag E[Sigma_hat^1/2] (``"ssqrt"``, ``theory.sqrt_detequiv``) at the
    size of ``run``."""
    if which == "smap":
        return np.asarray(theory.sampling_map_detequiv(run.s, run.n, run.a, run.b), dtype=float)
    if which == "smid":
        return np.asarray(theory.sampling_map_detequiv(run.s, run.n, run.a_mid, run.b), dtype=float)
    if which == "ssqrt":
        return np.asarray(theory.sqrt_detequiv(run.s, run.n), dtype=float)
    raise ValueError(f"which must be one of {FRACTIONAL}, got {which!r}")


def fractional_stat(run: SplitRun, which: str, pred: np.ndarray, nbins: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin relative error mean(measured)/pred - 1 of diag E[M_hat] (``"smap"``, ``"smid"``) or of
    diag E[Sigma_hat^1/2] (``"ssqrt"``)."""
    if which not in FRACTIONAL:
        raise ValueError(f"which must be one of {FRACTIONAL}, got {which!r}")
    X = getattr(run, which)
    pred = np.asarray(pred, dtype=float)

    def stat(m: np.ndarray, _c: int) -> np.ndarray:
        return bin_sum(m, nbins) / bin_sum(pred, nbins) - 1.0

    return jackknife(X, stat)


def claim_fractional(name: str, run_P: SplitRun, run_2P: SplitRun, which: str, nbins: int = 5, *,
                     theory: Theory = _theory) -> Claim:
    """C4: per-bin Richardson relative errors of a fractional matrix power jointly consistent with 0.

    Details: the Richardson values (see the module docstring) and the predictions ``pred_p``, ``pred_2p``."""
    pred_p = fractional_prediction(run_P, which, theory=theory)
    pred_2p = fractional_prediction(run_2P, which, theory=theory)
    ex = _extrapolated(*fractional_stat(run_P, which, pred_p, nbins), *fractional_stat(run_2P, which, pred_2p, nbins))
    why = (f"per-bin relative error of the deterministic equivalent in {nbins} bins, Richardson n->2n, "
           "whitened by the jackknife covariance; chi2 at alpha = 1e-3")
    return _chi2(name, ex["r_inf"], ex["cov_inf"], why).with_details(**ex, pred_p=pred_p, pred_2p=pred_2p)


# --------------------------------------------------------------------------------------------------
# C5: the disagreement of generated samples


def sample_disagreement_ratio(run: SampleRun, *, theory: Theory = _theory) -> tuple[np.ndarray, np.ndarray]:
    """Per input z: the mean over all pairs of independent datasets of |M1 z - M2 z|^2 (twice the unbiased total
    variance of M_hat z), divided by ``theory.sample_disagreement``, minus 1; delete-one jackknife over datasets.
    Returns (r (k,), cov)."""
    pred = np.asarray(theory.sample_disagreement(run.s, run.n, run.a, run.b, run.inputs), dtype=float)
    reps, k = run.samples.shape[:2]

    def stat(means: np.ndarray, count: int) -> np.ndarray:
        return mean_pair_disagreement(means, count, k) / pred - 1.0

    return jackknife(var_features(run.samples.reshape(reps, -1)), stat)


def claim_sample_disagreement(name: str, run_P: SampleRun, run_2P: SampleRun, *, theory: Theory = _theory) -> Claim:
    """C5: the Richardson ratios measured/predicted of the sample disagreement for every input jointly
    consistent with 1 (whitened chi2_k)."""
    ex = _extrapolated(*sample_disagreement_ratio(run_P, theory=theory),
                       *sample_disagreement_ratio(run_2P, theory=theory))
    why = ("mean |M1 z - M2 z|^2 over pairs of independent datasets / double integral of the two-resolvent "
           "equivalent - 1 per input, Richardson n->2n, delete-one jackknife covariance; joint chi2 at alpha = 1e-3")
    return _chi2(name, ex["r_inf"], ex["cov_inf"], why).with_details(**ex)
