"""The theory of chapter 'attention-query-learning': what the theorems predict, and the named wrong theories.

Reference: S. Bhattamishra, K. Shah, M. Hahn, V. Kanade, *Provably Learning Attention with Queries*,
arXiv:2601.16873 (ICML 2026).

Pure functions of the instance (A, u) and the settings, no random numbers, no simulation:

* what the learners return (Theorems 1-2: A itself) and how many queries they ask;
* the sketch-size threshold k* = r and the Eckart-Young floor below it (Theorem 2);
* the dimension d + r (2d - r) of the rank-r parameters, the lower bound on the queries (Remark);
* the closed-form first-order Jacobian of Theorem 1's estimator (Theorem 3), the mean squared error under
  i.i.d. noise, the RMS exponent, and the worst-case first-order coefficient ||J_ab||_1;
* the rank of the two-head answers' Jacobian at distinct heads and at shared attention (the proposition on
  two heads; the degenerate family of Proposition 4 holds by construction and is unit-tested, not a claim);

The floating-point error models of the claims (which propagate rounding through Theorem 3's Jacobian) are
error analysis, not theory: they live in :mod:`.tolerances`.

Each named wrong theory ``wrong_...`` has the signature of the function it replaces and is passed to a
claim as ``theory=variant(theory, name=theory.wrong_...)`` (:func:`theorylib.core.theory.variant`).

The design of Algorithm 1 (the offset v0 = c u / ||u||^2, c = 1 + max_j |u^T w_j|) is restated here from
the algorithm, independently of the learner's code in :mod:`.model`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_real


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """sigma(z) = 1 / (1 + e^{-z}), evaluated without overflow."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _params(A: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A, u = np.asarray(A, dtype=float), np.asarray(u, dtype=float)
    if u.ndim != 1 or A.shape != (u.size, u.size):
        raise ValueError(f"need A of shape (d, d) and u of shape (d,), got {A.shape} and {u.shape}")
    return A, u


def design_offset(u: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, float]:
    """Algorithm 1's offset: (v0, c) with c = 1 + max_j |u^T w_j| over the rows of W and v0 = c u / ||u||^2."""
    norm2 = float(u @ u)
    if norm2 == 0:
        raise ValueError("u = 0: the function is identically 0 and A is not identifiable")
    c = 1.0 + float(np.max(np.abs(np.atleast_2d(W) @ u)))
    return c * u / norm2, c


# --------------------------------------------------------------------------------------------------
# Theorems 1-2: what the learners return (their query counts are the learners' plans: model.py)
# --------------------------------------------------------------------------------------------------

def recovered_matrix(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Theorems 1-2: the learner returns A itself."""
    return np.asarray(A, dtype=float)


def wrong_recovered_matrix_rank_one(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """WRONG (a strawman): 'softmax is shift invariant, so A is learnt only up to a rank-one term':
    the learner would return A + (A v0) 1^T, i.e. D(e_a, v0 + e_b) without the base query."""
    A, u = _params(A, u)
    v0, _ = design_offset(u, np.eye(u.size))
    return A + np.outer(A @ v0, np.ones(u.size))










def dof_lower_bound(d: int, r: int) -> int:
    """d + r (2d - r): the dimension of {u} x {rank-r d x d matrices}, a lower bound on the queries."""
    d = check_int("d", d, low=1)
    r = check_int("r", r, low=1)
    if r > d:
        raise ValueError(f"rank r = {r} must be <= d = {d}")
    return d + r * (2 * d - r)


def wrong_dof_lower_bound_no_gauge(d: int, r: int) -> int:
    """WRONG: 'A = U V^T has 2dr free parameters' (forgets the GL(r) gauge U -> U G, V -> V G^-T): d + 2dr."""
    return check_int("d", d, low=1) * (1 + 2 * check_int("r", r, low=1))


def sketch_threshold(d: int, r: int) -> int:
    """Theorem 2: the sketch is exact from k = r on and not below it."""
    return check_int("r", r, low=1)


def wrong_sketch_threshold_half(d: int, r: int) -> int:
    """WRONG: 'r/2 sketches suffice'."""
    return max(1, check_int("r", r, low=1) // 2)


def wrong_sketch_threshold_full(d: int, r: int) -> int:
    """WRONG: 'k = d sketches are needed'."""
    return check_int("d", d, low=1)


def eckart_young_floor(A: np.ndarray, k: int) -> float:
    """||A - A_k||_F / ||A||_F, the smallest relative error of any rank-<=k matrix (Theorem 2(3))."""
    S = np.linalg.svd(np.asarray(A, dtype=float), compute_uv=False)
    return float(np.sqrt(np.sum(S[k:] ** 2)) / np.sqrt(np.sum(S**2)))


# --------------------------------------------------------------------------------------------------
# Theorem 3: first-order propagation of the answers' errors
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Jacobian:
    """First-order response of M_ij = D(q_i, v0 + w_j) - D(q_i, v0) to the answers' errors.

    M_hat_ij - M_ij = alpha_ij xi_ij - beta_i xi_i0 + gamma_ij . xi_u / s + O(|xi|^2), where xi_ij is the
    error of query (i, j), xi_i0 that of row i's base query and xi_u the errors of the d value queries
    (asked with amplitude s, so that u_hat - u = xi_u / s).
    """

    alpha: np.ndarray      # (k1, k2)
    beta: np.ndarray       # (k1,)
    gamma: np.ndarray      # (k1, k2, d)
    p: np.ndarray          # (k1, k2): sigma(z), z = q_i^T A (v0 + w_j)
    p0: np.ndarray         # (k1,):   sigma(z0), z0 = q_i^T A v0
    z: np.ndarray          # (k1, k2): the design's logits
    z0: np.ndarray         # (k1,)
    m: np.ndarray          # (k2,): the probes' margins u^T (v0 + w_j)
    m0: float              # the base queries' margin u^T v0 = c
    q: np.ndarray          # (k1, d): the query tokens q_i
    wp: np.ndarray         # (k2, d): the probe directions v0 + w_j
    v0: np.ndarray
    s: float

    def l1(self) -> np.ndarray:
        """||J_ij||_1 = |alpha_ij| + |beta_i| + ||gamma_ij||_1 / s, shape (k1, k2)."""
        return np.abs(self.alpha) + np.abs(self.beta)[:, None] + np.abs(self.gamma).sum(-1) / self.s

    def probe_frobenius2(self) -> float:
        """sum_ij (alpha_ij^2 + beta_i^2): the part of ||J||_F^2 on the errors of the two-token queries."""
        beta = np.broadcast_to(self.beta[:, None], self.alpha.shape)
        return float(np.sum(self.alpha**2) + np.sum(beta**2))

    def value_frobenius2(self) -> float:
        """sum_ij ||gamma_ij||^2 / s^2: the part of ||J||_F^2 on the errors of the d value queries."""
        return float(np.sum(self.gamma**2) / self.s**2)

    def frobenius2(self) -> float:
        """||J||_F^2 = sum_ij (alpha_ij^2 + beta_i^2 + ||gamma_ij||^2 / s^2)."""
        return self.probe_frobenius2() + self.value_frobenius2()


def _gamma(alpha: np.ndarray, beta: np.ndarray, p: np.ndarray, p0: np.ndarray, q: np.ndarray, wp: np.ndarray,
           v0: np.ndarray) -> np.ndarray:
    """gamma_ij = (beta_i - alpha_ij) q_i - alpha_ij p_ij w_j' + beta_i p_i0 v0, shape (k1, k2, d)."""
    return ((beta[:, None] - alpha)[..., None] * q[:, None, :] - (alpha * p)[..., None] * wp[None, :, :]
            + (beta * p0)[:, None, None] * v0[None, None, :])


def first_order_jacobian(A: np.ndarray, u: np.ndarray, Q: np.ndarray | None = None, W: np.ndarray | None = None,
                         *, s: float = 1.0) -> Jacobian:
    """Theorem 3's closed-form Jacobian at the true (A, u) (defaults Q = W = I: the Theorem-1 estimator).

    With w_j' = v0 + w_j, p_ij = sigma(q_i^T A w_j'), p_i0 = sigma(q_i^T A v0):
    alpha_ij = 1 / (u^T w_j' p_ij (1 - p_ij)), beta_i = 1 / (u^T v0 p_i0 (1 - p_i0)),
    gamma_ij = (beta_i - alpha_ij) q_i - alpha_ij p_ij w_j' + beta_i p_i0 v0 (entering as gamma_ij / s).
    """
    A, u = _params(A, u)
    s = check_positive("amplitude s", s)
    d = u.size
    Q = np.eye(d) if Q is None else np.atleast_2d(np.asarray(Q, dtype=float))
    W = np.eye(d) if W is None else np.atleast_2d(np.asarray(W, dtype=float))
    v0, _ = design_offset(u, W)
    Wp = v0 + W                                                    # (k2, d)
    z, z0 = Q @ A @ Wp.T, Q @ A @ v0
    p, p0 = _sigmoid(z), _sigmoid(z0)
    m, m0 = Wp @ u, float(v0 @ u)
    alpha = 1.0 / (m[None, :] * (p * (1 - p)))
    beta = 1.0 / (m0 * (p0 * (1 - p0)))
    return Jacobian(alpha, beta, _gamma(alpha, beta, p, p0, Q, Wp, v0), p, p0, z, z0, m, m0, Q, Wp, v0, float(s))


def wrong_first_order_jacobian_logit_free(A: np.ndarray, u: np.ndarray, Q: np.ndarray | None = None,
                                          W: np.ndarray | None = None, *, s: float = 1.0) -> Jacobian:
    """WRONG: propagation without the logit's 1/(p(1-p)) >= 4 factors. It under-predicts the probes' part of
    ||J||_F^2 by a factor >= 16 (each alpha, beta by >= 4), the value part by no uniform factor."""
    J = first_order_jacobian(A, u, Q, W, s=s)
    alpha = J.alpha * (J.p * (1 - J.p))
    beta = J.beta * (J.p0 * (1 - J.p0))
    return replace(J, alpha=alpha, beta=beta, gamma=_gamma(alpha, beta, J.p, J.p0, J.q, J.wp, J.v0))


def wrong_first_order_jacobian_amplitude_squared(A: np.ndarray, u: np.ndarray, Q: np.ndarray | None = None,
                                                 W: np.ndarray | None = None, *, s: float = 1.0) -> Jacobian:
    """WRONG: 'the value-query amplitude enters as 1/s^2': the row J_ab carries gamma_ab / s^2, not / s."""
    J = first_order_jacobian(A, u, Q, W, s=s)
    return replace(J, s=J.s**2)


def wrong_first_order_jacobian_amplitude_free(A: np.ndarray, u: np.ndarray, Q: np.ndarray | None = None,
                                              W: np.ndarray | None = None, *, s: float = 1.0) -> Jacobian:
    """WRONG: 'the value-query amplitude does not matter': the row J_ab carries gamma_ab, not gamma_ab / s."""
    J = first_order_jacobian(A, u, Q, W, s=s)
    return replace(J, s=1.0)


def wrong_first_order_jacobian_margin_without_e_b(A: np.ndarray, u: np.ndarray, Q: np.ndarray | None = None,
                                                  W: np.ndarray | None = None, *, s: float = 1.0) -> Jacobian:
    """WRONG: the probe's margin u^T (v0 + e_b) = c + u_b taken as c (the e_b term left out) in alpha_ab."""
    J = first_order_jacobian(A, u, Q, W, s=s)
    alpha = J.alpha * (J.m / J.m0)[None, :]
    return replace(J, alpha=alpha, gamma=_gamma(alpha, J.beta, J.p, J.p0, J.q, J.wp, J.v0))


def design_logits(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """All logits q^T A w of Theorem 1's design (w = v0 and v0 + e_b)."""
    J = first_order_jacobian(A, u)
    return np.concatenate([J.z.ravel(), J.z0])


def predicted_mse(J: Jacobian, sigma: float, n: int | np.ndarray) -> np.ndarray:
    """E||A_hat - A||_F^2 = (sigma^2 / n) ||J||_F^2 to first order (Theorem 3(2)), J the estimator's Jacobian."""
    return predicted_mse_unit(sigma, n) * J.frobenius2()


def predicted_mse_by_source(J: Jacobian, sigma: float, n: int) -> dict[str, float]:
    """Theorem 3(2) with the noise on one kind of query only (the first-order error is linear in the answers'
    errors, so the parts add up): (sigma^2 / n) times the probes' and the value queries' part of ||J||_F^2."""
    scale = float(predicted_mse_unit(sigma, n))
    return {"probes": scale * J.probe_frobenius2(), "values": scale * J.value_frobenius2()}


def predicted_mse_unit(sigma: float, n: int | np.ndarray) -> np.ndarray:
    """sigma^2 / n: the variance of an answer averaged over n repeats."""
    sigma = check_real("noise level sigma", sigma, low=0.0)
    n = np.asarray(n, dtype=float)
    if np.any(n < 1):
        raise ValueError("the number of repeats n must be >= 1")
    return sigma**2 / n






def rms_exponent() -> float:
    """Theorem 3(2): the RMS error decays as n^{-1/2}."""
    return -0.5


def wrong_rms_exponent_bias() -> float:
    """WRONG: a bias-like decay n^{-1}."""
    return -1.0


def worst_coefficient(J: Jacobian, a: int, b: int) -> float:
    """Theorem 3(1): the worst-case first-order coefficient of entry (a, b) is ||J_ab||_1."""
    return float(J.l1()[a, b])


def wrong_worst_coefficient_margin_only(J: Jacobian, a: int, b: int) -> float:
    """WRONG: 'the error is at most tau / gamma' (margin only, no logit amplification), with the entry's
    margin gamma_ab = min(u^T (v0 + e_b), u^T v0)."""
    return float(1.0 / min(float(J.m[b]), J.m0))


def first_order_bound(J: Jacobian) -> np.ndarray:
    """Theorem 3(1)'s first-order bound per unit tau: ||J_ab||_1 for every entry."""
    return J.l1()


def wrong_first_order_bound_margin_only(J: Jacobian) -> np.ndarray:
    """WRONG: 1 / gamma_ab per unit tau (margin only), gamma_ab = min(u^T (v0 + e_b), u^T v0)."""
    return np.broadcast_to(1.0 / np.minimum(J.m, J.m0)[None, :], J.alpha.shape).copy()


def _probe_interval(u_hat: np.ndarray, D: np.ndarray, tau: np.ndarray,
                    s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(eta, rho, ok) of the certificate (Theorem), each of shape (n, d, d + 1), from what the learner saw:
    u_hat (n, d), its probes D (n, d, d + 1; column 0 the base query), tau (n,).

    With w_0 = v0_hat, w_b = v0_hat + e_b (the learner's offsets), m = u_hat^T w > 0, P = sigma(D),
    rho = min(P, 1 - P), t = tau / s: eta = (tau + t ||e_a + P w||_1) / (m - t ||w||_1) bounds |P - p|, p the
    noiseless probability at the learner's direction; ok: m > t ||w||_1 and eta < rho.
    """
    u_hat, D = np.asarray(u_hat, dtype=float), np.asarray(D, dtype=float)
    tau = np.asarray(tau, dtype=float)[:, None, None]
    n, d = u_hat.shape
    c = 1.0 + np.max(np.abs(u_hat), axis=1)
    v0 = c[:, None] * u_hat / np.sum(u_hat**2, axis=1, keepdims=True)              # (n, d)
    W = v0[:, None, :] + np.concatenate([np.zeros((1, d)), np.eye(d)])[None]        # (n, d + 1, d)
    m = np.einsum("nkd,nd->nk", W, u_hat)[:, None, :]                               # (n, 1, d + 1)
    P = _sigmoid(D)
    t = tau / s
    ea_Pw = np.eye(d)[None, :, None, :] + P[..., None] * W[:, None, :, :]           # (n, d, d + 1, d)
    denom = m - t * np.abs(W).sum(-1)[:, None, :]
    eta = (tau + t * np.abs(ea_Pw).sum(-1)) / denom
    rho = np.minimum(P, 1 - P)
    return eta, rho, (denom > 0) & (eta < rho)


def certified_logit_bound(u_hat: np.ndarray, D: np.ndarray, tau: np.ndarray, s: float) -> np.ndarray:
    """The certificate of one probe (Theorem): |D - logit p| <= L for every answer error |xi| <= tau, D the
    learner's logit, p the noiseless probability at the learner's own direction (shapes as :func:`_probe_interval`).

    L = eta / ((rho - eta)(1 - rho + eta)): the mean value theorem, logit' = 1/(c(1 - c)) with |c - P| <= eta,
    so min(c, 1 - c) >= rho - eta; L = inf where the interval is not certified (``ok`` false).
    """
    eta, rho, ok = _probe_interval(u_hat, D, tau, s)
    return np.where(ok, eta / np.where(ok, (rho - eta) * (1 - rho + eta), 1.0), np.inf)


def wrong_certified_logit_bound_slope_at_P(u_hat: np.ndarray, D: np.ndarray, tau: np.ndarray,
                                           s: float) -> np.ndarray:
    """WRONG: 'the logit's slope at the computed P suffices': eta / (rho (1 - rho)), the mean value theorem's
    point c taken at P instead of the worst point of the interval |c - P| <= eta."""
    eta, rho, ok = _probe_interval(u_hat, D, tau, s)
    return np.where(ok, eta / (rho * (1 - rho)), np.inf)


def certified_bound(u_hat: np.ndarray, D: np.ndarray, tau: np.ndarray, s: float) -> np.ndarray:
    """The learner's finite-tau certificate (Theorem): |A_hat_ab - A_ab| <= E_ab = L_ab + L_a0 for every answer
    error |xi| <= tau, L the probes' certificates (:func:`certified_logit_bound`, column 0 the base query);
    shape (n, d, d). E = inf where a probe has no certificate."""
    L = certified_logit_bound(u_hat, D, tau, s)
    return L[..., 1:] + L[..., :1]


def certificate_coefficient(A: np.ndarray, u: np.ndarray, *, s: float = 1.0) -> np.ndarray:
    """lim_{tau -> 0} E_ab / tau of the certificate (Theorem): alpha_ab (1 + ||e_a + p_ab w_b||_1 / s)
    + beta_a (1 + ||e_a + p_a0 v0||_1 / s), at the noiseless design; >= ||J_ab||_1 (triangle inequality)."""
    J = first_order_jacobian(A, u, s=s)
    d = J.v0.size
    eye = np.eye(d)
    probe = np.abs(eye[:, None, :] + J.p[..., None] * J.wp[None, :, :]).sum(-1)       # (d, d)
    base = np.abs(eye + J.p0[:, None] * J.v0[None, :]).sum(-1)                         # (d,)
    return J.alpha * (1 + probe / s) + (J.beta * (1 + base / s))[:, None]


def wrong_certificate_coefficient_exact(A: np.ndarray, u: np.ndarray, *, s: float = 1.0) -> np.ndarray:
    """WRONG: 'the certificate is first-order exact': its coefficient is ||J_ab||_1 itself."""
    return first_order_jacobian(A, u, s=s).l1()


def wrong_certified_bound_linearised(u_hat: np.ndarray, D: np.ndarray, tau: np.ndarray, s: float) -> np.ndarray:
    """WRONG: 'the first-order bound is a finite-tau bound': tau ||J_ab||_1 with Theorem 3's Jacobian evaluated
    at what the learner saw (alpha = 1/(m P (1 - P)) at the observed P, the learner's offsets), no remainder."""
    u_hat, D = np.asarray(u_hat, dtype=float), np.asarray(D, dtype=float)
    tau = np.asarray(tau, dtype=float)
    n, d = u_hat.shape
    out = np.empty((n, d, d))
    for i in range(n):
        c = 1.0 + np.max(np.abs(u_hat[i]))
        v0 = c * u_hat[i] / float(u_hat[i] @ u_hat[i])
        Wp = v0 + np.eye(d)
        P = _sigmoid(D[i])
        p, p0 = P[:, 1:], P[:, 0]
        alpha = 1.0 / ((Wp @ u_hat[i])[None, :] * p * (1 - p))
        beta = 1.0 / (c * p0 * (1 - p0))
        gamma = _gamma(alpha, beta, p, p0, np.eye(d), Wp, v0)
        out[i] = tau[i] * (np.abs(alpha) + np.abs(beta)[:, None] + np.abs(gamma).sum(-1) / s)
    return out


# --------------------------------------------------------------------------------------------------
# The paper's O(rd) learner: random rank-one probes
# --------------------------------------------------------------------------------------------------





def probe_measurements_needed(d: int, r: int) -> int:
    """r (2d - r): with fewer rank-one probes a continuum of rank-r matrices answers like A (Theorem)."""
    return dof_lower_bound(d, r) - check_int("d", d, low=1)


def wrong_probe_measurements_needed_entrywise(d: int, r: int) -> int:
    """WRONG: 'random probes are no better than entries': d^2 measurements are needed."""
    return check_int("d", d, low=1) ** 2


def probe_tangent_rank(d: int, r: int, m: int) -> int:
    """min(m, r (2d - r)): the rank of m generic rank-one probes on the tangent space at a rank-r A."""
    return min(check_int("m", m, low=1), probe_measurements_needed(d, r))


def wrong_probe_tangent_rank_no_gauge(d: int, r: int, m: int) -> int:
    """WRONG: the tangent space counted as 2dr-dimensional (the GL(r) gauge forgotten): min(m, 2dr)."""
    return min(check_int("m", m, low=1), 2 * check_int("d", d, low=1) * check_int("r", r, low=1))


# ---- two heads: local identifiability at distinct heads, a first-order deficit 2d at shared attention -------

def multihead_jacobian_rank(d: int, shared: bool) -> int:
    """The rank of the two-head answers' Jacobian in the 2 (d^2 + d) parameters (Proposition on two heads):
    full, 2 (d^2 + d), at generic distinct heads; 2 d^2 at shared attention A_1 = A_2, whose kernel
    {(c u_2^T, -c u_1^T, w, -w)} has dimension 2d."""
    d = check_int("d", d, low=2)
    n_params = 2 * (d * d + d)
    return n_params - 2 * d if shared else n_params


def wrong_multihead_jacobian_rank_family(d: int, shared: bool) -> int:
    """WRONG: a deficit of d (rank 2d^2 + d) at distinct heads as at shared attention. At distinct heads (C7a):
    'the paper's non-identifiability is generic (a d-dimensional family at every point)'; at shared attention
    (C7b): 'the only freedom is the value-trading family (u_1 + v, u_2 - v)'."""
    d = check_int("d", d, low=2)
    return 2 * (d * d + d) - d


# ---- the one-layer Transformer reduction: a one-hidden-layer ReLU network --------------------------------

def relu_canonical(a: np.ndarray, W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The representative of (a, W, b) modulo the symmetries of g = a^T ReLU(W x + b) (Proposition on the
    reduction): ReLU(c z) = c ReLU(z) for c > 0 gives (a_j, w_j, b_j) ~ (a_j c, w_j / c, b_j / c), so take
    c = ||w_j||; the units are a set, so sort by the offset b_j / ||w_j||. Orientation is *not* a symmetry.
    """
    W = np.asarray(W, dtype=float)
    norms = np.linalg.norm(W, axis=1)
    a_c, W_c, b_c = np.asarray(a) * norms, W / norms[:, None], np.asarray(b) / norms
    order = np.argsort(b_c)
    return a_c[order], W_c[order], b_c[order]


def wrong_relu_canonical_identifiable(a: np.ndarray, W: np.ndarray, b: np.ndarray
                                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wrong: 'the hidden units are identifiable up to order only' (the positive rescaling forgotten)."""
    order = np.argsort(np.asarray(b) / np.linalg.norm(W, axis=1))
    return np.asarray(a)[order], np.asarray(W)[order], np.asarray(b)[order]
