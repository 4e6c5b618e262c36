"""The measured side of the two-dimensional product pair (chapter 'hellinger-tv-mixtures').

From two one-dimensional tilted pairs (P_i, Q_i) (degree L_i, support [-M_i, M_i]) the product pair in R^2 is
P = (P_1 x P_2 + Q_1 x Q_2)/2 and Q = (P_1 x Q_2 + Q_1 x P_2)/2, two probability measures on the rectangle
[-M_1, M_1] x [-M_2, M_2], inside the disc of radius sqrt(M_1^2 + M_2^2). Its densities are double sums over the
product atoms; by distributivity they are evaluated as f_P = (p_1 p_2 + q_1 q_2)/2, f_Q = (p_1 q_2 + q_1 p_2)/2 and
f_P - f_Q = (p_1 - q_1)(p_2 - q_2)/2, with p_i = f_{P_i}(x_i), q_i = f_{Q_i}(x_i) the one-dimensional atom sums in
mpmath (:func:`.model.equispaced_mixtures_mp`): the same finite sums, no closed form. TV and H^2 are then a
tensor Gauss-Legendre quadrature on [0, X_1] x [0, X_2] (the reflections x_i -> -x_i swap f_P and f_Q, so the
plane folds onto the quadrant). This module never imports ``theory``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy import special

from ._numerics import check_L, check_M, gauss_legendre_panels
from .model import LogDistances, _mp_densities, cutoff, pilot_log_tv, working_dps

LOG_2 = math.log(2.0)


@dataclass(frozen=True, eq=False)
class ProductMeasurement(LogDistances):
    """TV and H of the product pair measured by 2-D quadrature, with the factors' TV on the same rules."""

    L: tuple[int, int]
    M: tuple[float, float]
    log_tv: float  # the 2-D quadrature of |f_P - f_Q| / 2
    log_h: float  # the 2-D quadrature of (sqrt f_P - sqrt f_Q)^2 / 2, halved log
    log_tv_factors: tuple[float, float]  # the 1-D quadratures of |p_i - q_i| / 2 on the same rules
    ell0: float  # the pilots' -log TV_1 - log TV_2, which set the cut-offs
    X: tuple[float, float]
    log_tail_bound: float  # log of sum_i 4 Phibar(X_i - M_i) >= twice the neglected part of H^2



def _factor_logs(L: int, M: float, X: float, dps: int, panels: int, nodes: int):
    """Nodes, log weights, log p, log q, log |p - q| of one factor on [0, X] (mp sums, logs in float64)."""
    x, w = gauss_legendre_panels(0.0, X, panels, nodes)
    fP, fQ = _mp_densities(L, M, True, x, dps)
    with mpmath.workdps(dps):
        lp = np.array([float(mpmath.log(v)) for v in fP])
        lq = np.array([float(mpmath.log(v)) for v in fQ])
        ld = np.array([float(mpmath.log(abs(a - b))) if a != b else -math.inf for a, b in zip(fP, fQ, strict=True)])
    return np.log(w), lp, lq, ld


def measure_product_pair(L1: int, L2: int, M1: float, M2: float, *, panels: int = 40,
                         nodes: int = 20) -> ProductMeasurement:
    """TV and H of the product pair from its atoms: 2-D tensor Gauss-Legendre on [0, X_1] x [0, X_2].

    ell = -log TV_1 - log TV_2 from the factors' pilots (measured) sets X_i = M_i + sqrt(4 ell + 80), and each
    factor's precision is working_dps(ell_i) (its difference p_i - q_i is then resolved to ~30 digits).
    On the quadrant: TV = sum_jk w_j w_k |d_1 d_2| (d_i = p_i - q_i), H^2 = 2 sum_jk w_j w_k (d_1 d_2 / 2)^2 /
    (sqrt f_P + sqrt f_Q)^2, all in log space.
    """
    Ls, Ms = (check_L(L1), check_L(L2)), (check_M(M1), check_M(M2))
    ells = [-pilot_log_tv(L, M) for L, M in zip(Ls, Ms, strict=True)]
    ell = sum(ells)
    X = tuple(cutoff(ell, M) for M in Ms)
    f1, f2 = (_factor_logs(L, M, Xi, working_dps(e), panels, nodes)
              for L, M, Xi, e in zip(Ls, Ms, X, ells, strict=True))
    (lw1, lp1, lq1, ld1), (lw2, lp2, lq2, ld2) = f1, f2
    lw = lw1[:, None] + lw2[None, :]
    log_f = -LOG_2 + np.logaddexp(lp1[:, None] + lp2[None, :], lq1[:, None] + lq2[None, :])
    log_g = -LOG_2 + np.logaddexp(lp1[:, None] + lq2[None, :], lq1[:, None] + lp2[None, :])
    log_d = ld1[:, None] + ld2[None, :] - LOG_2  # log |f_P - f_Q|
    log_tv = float(special.logsumexp(lw + log_d + LOG_2))  # (1/2) 4 int_quadrant |f_P - f_Q|
    log_root_sum = np.logaddexp(0.5 * log_f, 0.5 * log_g)
    log_h2 = float(special.logsumexp(lw + 2 * log_d - 2 * log_root_sum + LOG_2))  # (1/2) 4 int_quadrant
    log_tv_factors = tuple(float(special.logsumexp(lwi + ldi)) for lwi, ldi in ((lw1, ld1), (lw2, ld2)))
    tails = [math.log(4.0) + special.log_ndtr(-(Xi - M)) for Xi, M in zip(X, Ms, strict=True)]
    log_tail = float(special.logsumexp(tails))
    return ProductMeasurement(Ls, Ms, log_tv, 0.5 * log_h2, log_tv_factors, ell, X, log_tail)


def product_panel_doubling(meas: ProductMeasurement, panels: int = 40, nodes: int = 20) -> float:
    """|log H(2 panels) - log H| + |log TV(2 panels) - log TV| on the same cut-offs, for a measurement made with
    ``panels`` and ``nodes``: its quadrature error estimate (the cut-offs come from the same pilots)."""
    L1, L2 = meas.L
    fine = measure_product_pair(L1, L2, *meas.M, panels=2 * panels, nodes=nodes)
    return abs(fine.log_h - meas.log_h) + abs(fine.log_tv - meas.log_tv)
