"""The error analysis of chapter 'attention-query-learning': the floating-point tolerances of its claims.

None of this is the chapter's theory: these are the rounding budgets of the exact claims (C1, C2, C4a's
floating-point part, C5a). The learners' rounding is propagated through Theorem 3's first-order Jacobian
(:func:`.theory.first_order_jacobian`): an answer error xi reaches a measured entry M_ij through the row J_ij,
so by at most ||J_ij||_1 |xi|.
"""

from __future__ import annotations

import numpy as np

from . import theory

EPS = float(np.finfo(np.float64).eps)
FP_SAFETY = 100.0  # the constant of the floating-point error model (see fp_tolerance_entries)


def fp_tolerance_entries(J: theory.Jacobian, f_max: float, d_max: float) -> float:
    """Floating-point error model of a measured entry M_ij: 100 eps (max_ij ||J_ij||_1 max(1, f_max) + d_max).

    Each answer carries a rounding error of a few eps max(1, |f|); Theorem 3's first-order map carries an
    answer error xi to at most ||J_ij||_1 |xi|; the logit and the difference D1 - D0 add a few eps |D|.
    The factor 100 covers the small constants of each step.
    """
    return FP_SAFETY * EPS * (float(np.max(J.l1())) * max(1.0, f_max) + max(1.0, d_max))


def _design_scale(u: np.ndarray, rows: np.ndarray, J: theory.Jacobian) -> tuple[float, float]:
    """(max |f|, max |D|) over a probe design (query tokens ``rows``), from Lemma 1: f = u^T q + p u^T w."""
    f = np.concatenate([((rows @ u)[:, None] + J.p * J.m[None, :]).ravel(), rows @ u + J.p0 * J.m0])
    D = np.abs(np.concatenate([J.z.ravel(), J.z0]))
    return float(np.max(np.abs(f))), float(np.max(D))


def fp_tolerance_full(A: np.ndarray, u: np.ndarray, s: float = 1.0) -> float:
    """Floating-point tolerance of Theorem 1's max_ab |A_hat_ab - A_ab| (see :func:`fp_tolerance_entries`)."""
    u = np.asarray(u, dtype=float)
    J = theory.first_order_jacobian(A, u, s=s)
    return fp_tolerance_entries(J, *_design_scale(u, np.eye(u.size), J))


def sketch_entry_tolerance(A: np.ndarray, u: np.ndarray, K: np.ndarray, Q: np.ndarray) -> float:
    """:func:`fp_tolerance_entries` for the sketch's measurements (Y1 and Y2, margin over all of K; s = 1)."""
    u = np.asarray(u, dtype=float)
    tols = []
    for rows in (np.eye(u.size), Q.T):
        J = theory.first_order_jacobian(A, u, rows, K.T)
        tols.append(fp_tolerance_entries(J, *_design_scale(u, rows, J)))
    return max(tols)


def sketch_tolerance(A: np.ndarray, u: np.ndarray, K: np.ndarray, Q: np.ndarray, kappa: float) -> float:
    """Max-entry tolerance of the sketch: entry tolerance x (1 + kappa)^2 max(1, ||A||_max).

    kappa = s_1 / s_rank of Q^T Y1, the condition number the pseudo-inverse actually inverts.
    """
    return sketch_entry_tolerance(A, u, K, Q) * (1 + kappa) ** 2 * max(1.0, float(np.max(np.abs(A))))


def sketch_rel_tolerance(A: np.ndarray, u: np.ndarray, K: np.ndarray, Q: np.ndarray, kappa: float) -> float:
    """Frobenius relative tolerance: d * (max-entry tolerance) / ||A||_F (the entry bound summed over d^2 entries)."""
    return np.asarray(u).size * sketch_tolerance(A, u, K, Q, kappa) / float(np.linalg.norm(A))


def two_head_rounding(d: int, L_max: int, scale: float) -> float:
    """Proposition 4's unit test: 2 (d + L_max) eps scale, scale = max_X sum_h sum_i s_hi (|u_h| + |u'_h|)^T |x_i|
    (the attention weights of the two models are computed identically, only the value dot products round)."""
    return 2 * (d + L_max) * EPS * scale


def norm_rounding(norms: list[float]) -> float:
    """Proposition 4's unit test: 64 eps (1 + sum of the value vectors' norms), a few ulps of the distance's norms."""
    return 64 * EPS * (1 + sum(norms))


def probe_rel_tolerance(A: np.ndarray, u: np.ndarray, Q: np.ndarray, W: np.ndarray, tangent_sv: np.ndarray,
                        rank: int) -> float:
    """C5a: relative Frobenius tolerance of the O(rd) learner, ||t|| / (s_dof ||A||_F).

    Probe i's answer rounds by a few eps max(1, |f_i|); the logit carries it to D_i with the factor
    1 / (|u^T w_i| p_i (1 - p_i)) (Lemma 1, logit' = 1/(p(1-p))), and the logit adds a few eps max(1, |z_i|):
    t_i = 100 eps (max(1, |f_i|) / (|u^T w_i| p_i (1 - p_i)) + max(1, |z_i|)). A least-squares fit on the
    rank-r matrices moves by at most ||t|| / s_rank to first order, s_rank the smallest nonzero singular value
    of the probes on the tangent space (``tangent_sv``, ``rank`` its measured numerical rank).
    """
    A, u = np.asarray(A, dtype=float), np.asarray(u, dtype=float)
    z = np.einsum("ia,ab,ib->i", Q, A, W)
    p = 1.0 / (1.0 + np.exp(-z))
    margin = W @ u
    f = Q @ u + p * margin
    t = FP_SAFETY * EPS * (np.maximum(1.0, np.abs(f)) / (np.abs(margin) * p * (1 - p)) + np.maximum(1.0, np.abs(z)))
    return float(np.linalg.norm(t) / tangent_sv[rank - 1] / np.linalg.norm(A))



def relu_tolerance(fit) -> float:
    """Floating-point tolerance of the ReLU learner's canonical parameters (max-entry error).

    Answers round by eps max(1, |f|). Kink location: the two lines through (t - 2l, t - l) and
    (t + l, t + 2l) each take their value at t with error <= 3 eps max(1, f_kink), so their meeting point
    errs by <= 6 eps max(1, f_kink) / |slope jump| + eps |t| (e_t). Gradient jump: a difference of two
    forward differences of step h, each entry within 4 eps max(1, f_near) / h (e_grad); so the unit normal
    errs by <= 2 sqrt(d) e_grad / ||Delta||, the weight ||Delta|| by sqrt(d) e_grad, and the offset
    -n^T x_k by ||x_k|| e_n + ||v|| e_t. The tolerance is FP_SAFETY times the largest over the units.
    """
    d = fit.W.shape[1]
    e_grad = 4 * EPS * np.maximum(1.0, fit.f_near) / fit.h
    e_n = 2 * np.sqrt(d) * e_grad / fit.grad_jump
    e_a = np.sqrt(d) * e_grad
    e_t = 6 * EPS * np.maximum(1.0, fit.f_kink) / fit.jump + EPS * fit.t_abs
    e_b = fit.x_norm * e_n + fit.v_norm * e_t
    return FP_SAFETY * float(np.max(np.concatenate([e_n, e_a, e_b])))


def transformer_tolerance(fit) -> float:
    """Max-entry tolerance of the Transformer reduction's A_hat (rounding only: on the ball the probes are
    exact, whatever the FFN fit's error, which only places the ball).

    A probe's P = (T([q+w; q]) - T([q])) / (T([q+w]) - T([q])) rounds by <= 3 eps max(1, f_max) (1 + P) /
    (rho' gamma^T w) (numerator and denominator, each a difference of two answers); its logit by that over
    P (1 - P), plus eps |D|; A_hat_ab, a combination of four logits over rho'^2, by 4 x the largest / rho'^2,
    times FP_SAFETY.
    """
    dP = 3 * EPS * max(1.0, fit.f_max) * (1 + fit.P) / (fit.rho_p * np.abs(fit.margin)[None, :])
    D = np.log(fit.P) - np.log1p(-fit.P)
    dD = dP / (fit.P * (1 - fit.P)) + EPS * np.maximum(1.0, np.abs(D))
    return FP_SAFETY * 4 * float(np.max(dD)) / fit.rho_p**2
