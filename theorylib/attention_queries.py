"""Learning a single-head attention regressor from black-box queries.

Reference: S. Bhattamishra, K. Shah, M. Hahn, V. Kanade, *Provably Learning Attention with Queries*,
arXiv:2601.16873 (ICML 2026). Chapter ``attention-query-learning`` of the book.

The model. For a sequence ``X = (x_1, ..., x_N)`` of tokens in ``R^d`` (any ``N >= 1``) whose last token
``x_N`` is the query,

    f_theta(X) = sum_i softmax_i(x_N^T A x_i) u^T x_i,        theta = (A, u),

with ``A = W_Q W_K^T / sqrt(r)`` (rank <= r) and ``u = W_V w_o``. The learner sees only a counting oracle
``X -> f_theta(X) (+ noise)`` (:class:`QueryOracle`).

The two probes (Lemma 1): ``f([x]) = u^T x`` and ``f([q + w; q]) = u^T q + sigma(q^T A w) u^T w``, so that
``D(q, w) = logit((f - u^T q) / (u^T w)) = q^T A w`` whenever ``u^T w != 0``: a *linear* measurement of A.

* :func:`learn_full` recovers (A, u) exactly with ``d^2 + 2d`` queries (Theorem 1);
* :func:`learn_low_rank` recovers a rank-r A with ``r(2d - r) + 2d + r`` queries by a skeleton sketch
  (Theorem 2);
* :func:`first_order_jacobian` gives the closed-form first-order response of the Theorem-1 estimator to
  output noise (Theorem 3), :func:`predicted_mse` its mean squared error under i.i.d. noise;
* :func:`equivalent_multihead` builds two distinct two-head parameter sets with the same function
  (Proposition 4).

Each claim of the chapter has a function here that returns a :class:`~theorylib.core.claims.Claim`, taking
the theory's prediction as an argument, so that the notebook and the mutation tests share one code path.
All arrays are float64; every batch of queries goes to the oracle in one call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from theorylib.core.claims import Claim, check_absolute, check_exact, check_upper, check_zscore
from theorylib.core.rates import LogLogFit, fit_loglog

EPS = float(np.finfo(np.float64).eps)
FP_SAFETY = 100.0  # the constant of the floating-point error model (see fp_tolerance_entries)

__all__ = [
    "AdversarySchedule", "QueryOracle", "attention_oracle", "multihead_oracle", "sigmoid", "logit",
    "learn_value_vector", "bilinear_measurements", "learn_full", "learn_low_rank", "sketch_basis",
    "query_count_full", "query_count_low_rank", "dof_lower_bound", "first_order_jacobian", "Jacobian",
    "predicted_mse", "random_full_instance", "conditioned_full_instance", "random_low_rank_instance",
    "equivalent_multihead",
    "param_distance_mod_perm",
]


# --------------------------------------------------------------------------------------------------
# The model and the oracle
# --------------------------------------------------------------------------------------------------

def sigmoid(z: np.ndarray) -> np.ndarray:
    """sigma(z) = 1 / (1 + e^{-z}), evaluated without overflow."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def logit(p: np.ndarray) -> np.ndarray:
    """logit(p) = log(p / (1 - p)) for p in (0, 1); a ValueError otherwise (never clipped)."""
    p = np.asarray(p, dtype=float)
    if not np.all((p > 0) & (p < 1)):
        bad = p[~((p > 0) & (p < 1))].ravel()[0]
        raise ValueError(f"logit needs a probability in (0, 1), got {bad!r}")
    return np.log(p) - np.log1p(-p)


def _check_tokens(X: np.ndarray, d: int) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim < 2:
        raise ValueError(f"X must have shape (..., N, d), got {X.shape}")
    if X.shape[-1] != d:
        raise ValueError(f"tokens have dimension {X.shape[-1]}, the model has d = {d}")
    if X.shape[-2] == 0:
        raise ValueError("a query needs at least one token (N >= 1)")
    return X


def _check_params(A: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A = np.asarray(A, dtype=float)
    u = np.asarray(u, dtype=float)
    if u.ndim != 1 or A.shape != (u.size, u.size):
        raise ValueError(f"need A of shape (d, d) and u of shape (d,), got {A.shape} and {u.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(u))):
        raise ValueError("A and u must be finite")
    return A, u


def attention_weights(X: np.ndarray, A: np.ndarray) -> np.ndarray:
    """softmax_i(x_N^T A x_i) over the tokens of each sequence; X (..., N, d) -> (..., N).

    The softmax subtracts the largest logit, so logits of any size are safe.
    """
    qA = X[..., -1, :] @ A                                   # (..., d): x_N^T A
    scores = np.einsum("...nd,...d->...n", X, qA)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return w / w.sum(axis=-1, keepdims=True)


def attention_oracle(X: np.ndarray, A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """f_theta(X) = sum_i softmax_i(x_N^T A x_i) u^T x_i for a batch X of shape (..., N, d)."""
    A, u = _check_params(A, u)
    X = _check_tokens(X, u.size)
    return np.einsum("...n,...n->...", attention_weights(X, A), X @ u)


def multihead_oracle(X: np.ndarray, As: Sequence[np.ndarray], us: Sequence[np.ndarray]) -> np.ndarray:
    """sum_h f_{(A_h, u_h)}(X): multi-head attention with one value vector per head."""
    if len(As) != len(us) or len(As) == 0:
        raise ValueError(f"need as many value vectors as heads (>= 1), got {len(As)} and {len(us)}")
    return sum(attention_oracle(X, A, u) for A, u in zip(As, us, strict=True))


class AdversarySchedule:
    """A noise source that adds a prescribed perturbation to each successive oracle call.

    ``perturbations[t]`` is added to the answers of the t-th call (broadcast to their shape). It lets an
    adversary who knows the learner's query plan perturb exactly the queries it chooses.
    """

    def __init__(self, perturbations: Sequence[np.ndarray]) -> None:
        self._queue = [np.asarray(p, dtype=float) for p in perturbations]
        self._t = 0

    def __call__(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self._t >= len(self._queue):
            raise ValueError(f"the adversary's schedule has only {len(self._queue)} calls")
        xi = np.broadcast_to(self._queue[self._t], y.shape)
        self._t += 1
        return xi


class QueryOracle:
    """Black-box access to f_theta that counts every query.

    Calling the oracle on a batch X of shape (..., N, d) returns one answer per sequence and adds
    ``prod(X.shape[:-2])`` to :attr:`n_queries`. The parameters are private: a learner gets only this
    callable and the dimension d.

    noise : "none", "gaussian" (i.i.d. N(0, sigma^2) added to *each* answer, so a query repeated n times
        is answered n times with fresh noise) or a callable ``noise(X, y) -> xi`` (e.g. an
        :class:`AdversarySchedule`).

    A batch that repeats one sequence along an axis (a zero-stride view made by ``np.broadcast_to``) is
    evaluated once per distinct sequence, then broadcast: f is deterministic, so this changes no answer;
    the noise is still drawn per query and every repeat is counted.
    """

    def __init__(self, A: np.ndarray, u: np.ndarray, *, noise: str | Callable[..., np.ndarray] = "none",
                 sigma: float = 0.0, rng: np.random.Generator | None = None) -> None:
        self._A, self._u = _check_params(A, u)
        if not (math.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"noise level sigma = {sigma!r} must be finite and >= 0")
        if noise == "gaussian":
            if rng is None:
                raise ValueError("a Gaussian-noise oracle needs an explicit rng")
        elif noise != "none" and not callable(noise):
            raise ValueError(f"noise must be 'none', 'gaussian' or a callable, got {noise!r}")
        self._noise, self._sigma, self._rng = noise, float(sigma), rng
        self.n_queries = 0

    @property
    def d(self) -> int:
        """The token dimension (public: the learner must know the input format)."""
        return self._u.size

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = _check_tokens(X, self.d)
        batch = X.shape[:-2]
        self.n_queries += int(np.prod(batch, dtype=np.int64))
        # evaluate once per distinct sequence along zero-stride (broadcast) axes
        idx = tuple(slice(0, 1) if (X.strides[i] == 0 and X.shape[i] > 1) else slice(None)
                    for i in range(len(batch)))
        y = np.broadcast_to(attention_oracle(X[idx], self._A, self._u), batch)
        if self._noise == "gaussian":
            return y + self._sigma * self._rng.standard_normal(batch)
        if callable(self._noise):
            return y + self._noise(X, y)
        return np.array(y)


# --------------------------------------------------------------------------------------------------
# Learners (Theorems 1 and 2)
# --------------------------------------------------------------------------------------------------

def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} = {value!r} must be an integer >= {low}")
    return int(value)


def _ask(oracle: Callable[[np.ndarray], np.ndarray], X: np.ndarray, repeats: int) -> np.ndarray:
    """Ask every query of X ``repeats`` times (one oracle call) and average the answers."""
    repeats = _check_int("repeats", repeats, 1)
    return oracle(np.broadcast_to(X, (repeats, *X.shape))).mean(axis=0)


def learn_value_vector(oracle: Callable[[np.ndarray], np.ndarray], d: int, *, s: float = 1.0,
                       repeats: int = 1, batch: tuple[int, ...] = ()) -> np.ndarray:
    """u_hat from the d one-token queries [s e_j]: f([s e_j]) = s u_j (Lemma 1(i)).

    ``batch`` runs independent copies of the learner at once (shape batch + (d,)); ``repeats`` asks each
    query that many times and averages. Uses d * repeats * prod(batch) queries.
    """
    d = _check_int("d", d, 1)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"amplitude s = {s!r} must be finite and > 0")
    X = np.broadcast_to((s * np.eye(d))[:, None, :], (*batch, d, 1, d))
    return _ask(oracle, X, repeats) / s


def margin_offset(u_hat: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(v0, c): v0 = c u_hat / ||u_hat||^2 with c = 1 + max_j |u_hat^T w_j| over the directions W (k, d).

    Then u_hat^T v0 = c and u_hat^T (v0 + w_j) = c + u_hat^T w_j >= 1: every probe has margin >= 1.
    """
    norm2 = np.sum(u_hat**2, axis=-1, keepdims=True)
    if np.any(norm2 == 0):
        raise ValueError("u = 0: the function is identically 0 and A is not identifiable")
    c = 1.0 + np.max(np.abs(u_hat @ W.T), axis=-1, keepdims=True)
    return c * u_hat / norm2, c[..., 0]


def bilinear_measurements(oracle: Callable[[np.ndarray], np.ndarray], u_hat: np.ndarray, Q: np.ndarray,
                          W: np.ndarray, *, c_dirs: np.ndarray | None = None, repeats: int = 1,
                          ) -> np.ndarray:
    """M_ij = q_i^T A w_j from k1 (k2 + 1) two-token queries (Lemma 1(ii)).

    Q : (k1, d) query tokens; W : (k2, d) directions; u_hat : batch + (d,).
    For each row i one base query [q_i + v0; q_i] and k2 queries [q_i + v0 + w_j; q_i];
    M_ij = D(q_i, v0 + w_j) - D(q_i, v0), where v0's contribution cancels exactly whatever v0 is.
    v0 = c u_hat / ||u_hat||^2 with c = 1 + max |u_hat^T w| over ``c_dirs`` (default: W), so every
    probe has margin u_hat^T w >= 1. A probability outside (0, 1) (possible only under noise) raises a
    ValueError: the estimator is undefined there and is never clipped.
    """
    u_hat = np.asarray(u_hat, dtype=float)
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    W = np.atleast_2d(np.asarray(W, dtype=float))
    d = u_hat.shape[-1]
    if Q.shape[1] != d or W.shape[1] != d:
        raise ValueError(f"Q and W must have d = {d} columns, got {Q.shape} and {W.shape}")
    v0, _ = margin_offset(u_hat, W if c_dirs is None else np.atleast_2d(c_dirs))
    dirs = np.concatenate([v0[..., None, :], v0[..., None, :] + W], axis=-2)        # batch + (k2+1, d)
    batch = u_hat.shape[:-1]
    k1, k2 = Q.shape[0], W.shape[0]
    X = np.empty((*batch, k1, k2 + 1, 2, d))
    X[..., 0, :] = Q[:, None, :] + dirs[..., None, :, :]
    X[..., 1, :] = Q[:, None, :]
    y = _ask(oracle, X, repeats)                                                    # batch + (k1, k2+1)
    P = (y - (u_hat @ Q.T)[..., :, None]) / (dirs @ u_hat[..., :, None])[..., None, :, 0]
    if not np.all((P > 0) & (P < 1)):
        raise ValueError("a probe probability (f - u^T q)/(u^T w) left (0, 1): the noise is too large for "
                         "the logit to be defined (lower sigma or tau, or raise the margin)")
    D = logit(P)
    return D[..., 1:] - D[..., :1]


def learn_full(oracle: Callable[[np.ndarray], np.ndarray], d: int, *, s: float = 1.0, repeats: int = 1,
               batch: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 1: (A_hat, u_hat) from d^2 + 2d queries (times ``repeats`` and ``prod(batch)``).

    u_hat from [s e_j]; then for each row a one base query w = v0 and d queries w = v0 + e_b,
    A_ab = D(e_a, v0 + e_b) - D(e_a, v0), with c = 1 + ||u_hat||_inf.
    """
    d = _check_int("d", d, 1)
    u_hat = learn_value_vector(oracle, d, s=s, repeats=repeats, batch=batch)
    eye = np.eye(d)
    return bilinear_measurements(oracle, u_hat, eye, eye, repeats=repeats), u_hat


def sketch_basis(d: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(K, Q): K a Haar-random d x d orthogonal matrix, Q a d x k Gaussian matrix with unit-norm columns."""
    d = _check_int("d", d, 1)
    k = _check_int("sketch size k", k, 1)
    if k > d:
        raise ValueError(f"sketch size k = {k} must be <= d = {d}")
    G = rng.standard_normal((d, d))
    K, R = np.linalg.qr(G)
    K = K * np.sign(np.diag(R))                   # Haar measure (Mezzadri's sign fix)
    Q = rng.standard_normal((d, k))
    return K, Q / np.linalg.norm(Q, axis=0)


@dataclass(frozen=True)
class SketchInfo:
    """Diagnostics of the sketch: the kept rank of Q^T Y1, its s_1/s_rank, and all its singular values."""

    rank: int
    kappa: float
    singular_values: np.ndarray
    K: np.ndarray
    Q: np.ndarray


def learn_low_rank(oracle: Callable[[np.ndarray], np.ndarray], d: int, k: int, rng: np.random.Generator, *,
                   s: float = 1.0, rcond: float = 1e-10) -> tuple[np.ndarray, np.ndarray, SketchInfo]:
    """Theorem 2: A_hat = Y1 (Q^T Y1)^+ (Q^T A) with a sketch of size k (k = r for rank-r A).

    Queries: d for u_hat, d (k + 1) for Y1 = A K_k and, if k < d, k (d - k + 1) for Y2 = Q^T A K_perp;
    Q^T A = [Q^T Y1, Y2] K^T. The pseudo-inverse keeps singular values > rcond * s_1 and
    ``info.kappa`` = s_1 / s_rank is the condition number it actually inverts. The margin constant is
    c = 1 + max_j |u_hat^T k_j| over all columns of K.
    """
    d = _check_int("d", d, 1)
    k = _check_int("sketch size k", k, 1)
    if k > d:
        raise ValueError(f"sketch size k = {k} must be <= d = {d}")
    if not (0 < rcond < 1):
        raise ValueError(f"rcond = {rcond!r} must lie in (0, 1)")
    K, Q = sketch_basis(d, k, rng)
    u_hat = learn_value_vector(oracle, d, s=s)
    Kk, Kp = K[:, :k], K[:, k:]
    Y1 = bilinear_measurements(oracle, u_hat, np.eye(d), Kk.T, c_dirs=K.T)              # (d, k) = A K_k
    core = Q.T @ Y1
    if k < d:
        Y2 = bilinear_measurements(oracle, u_hat, Q.T, Kp.T, c_dirs=K.T)                # (k, d-k)
        QA = np.concatenate([core, Y2], axis=1) @ K.T
    else:
        QA = core @ K.T
    U, S, Vt = np.linalg.svd(core)
    keep = S > rcond * S[0]
    pinv = (Vt[keep].T / S[keep]) @ U[:, keep].T
    info = SketchInfo(int(keep.sum()), float(S[0] / S[keep][-1]), S, K, Q)
    return Y1 @ pinv @ QA, u_hat, info


def query_count_full(d: int) -> int:
    """Theorem 1's query count d + d (d + 1) = d^2 + 2d."""
    d = _check_int("d", d, 1)
    return d * d + 2 * d


def query_count_low_rank(d: int, k: int) -> int:
    """Theorem 2's query count d + d (k + 1) + k (d - k + 1) (= r(2d - r) + 2d + r at k = r < d)."""
    d = _check_int("d", d, 1)
    k = _check_int("k", k, 1)
    if k > d:
        raise ValueError(f"k = {k} must be <= d = {d}")
    return d + d * (k + 1) + (k * (d - k + 1) if k < d else 0)


def dof_lower_bound(d: int, r: int) -> int:
    """d + r (2d - r): the dimension of {u} x {rank-r d x d matrices}, a lower bound on the queries."""
    d = _check_int("d", d, 1)
    r = _check_int("r", r, 1)
    if r > d:
        raise ValueError(f"rank r = {r} must be <= d = {d}")
    return d + r * (2 * d - r)


# --------------------------------------------------------------------------------------------------
# Random instances
# --------------------------------------------------------------------------------------------------

def random_full_instance(d: int, rng: np.random.Generator, *, A_scale: float = 2.0,
                         u_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(A, u): A_ab ~ N(0, A_scale^2 / d), u ~ N(0, u_scale^2 I / d), independent."""
    d = _check_int("d", d, 1)
    A = rng.standard_normal((d, d)) * (A_scale / math.sqrt(d))
    u = rng.standard_normal(d) * (u_scale / math.sqrt(d))
    return A, u


def random_low_rank_instance(d: int, r: int, rng: np.random.Generator, *, A_scale: float = 2.0,
                             u_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(A, u): A = G1 G2^T A_scale / sqrt(d r) with G1, G2 (d x r) standard Gaussian (entries of variance
    A_scale^2 / d, rank r a.s.), u ~ N(0, u_scale^2 I / d)."""
    d = _check_int("d", d, 1)
    r = _check_int("r", r, 1)
    if r > d:
        raise ValueError(f"rank r = {r} must be <= d = {d}")
    G1, G2 = rng.standard_normal((d, r)), rng.standard_normal((d, r))
    u = rng.standard_normal(d) * (u_scale / math.sqrt(d))
    return G1 @ G2.T * (A_scale / math.sqrt(d * r)), u


def conditioned_full_instance(d: int, rng: np.random.Generator, *, J_max: float, A_scale: float = 2.0,
                              u_scale: float = 1.0, max_tries: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """(A, u) from :func:`random_full_instance` conditioned on max_ab ||J_ab||_1 <= J_max (rejection sampling).

    This is the noise chapters' instance: Theorem 3 is a first-order statement, and its "norm and margin
    conditions" are what keeps ||J||_1, and with it sigma ||J||_1, small.
    """
    if not (math.isfinite(J_max) and J_max > 0):
        raise ValueError(f"J_max = {J_max!r} must be finite and > 0")
    for _ in range(_check_int("max_tries", max_tries, 1)):
        A, u = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
        if np.max(first_order_jacobian(A, u).l1()) <= J_max:
            return A, u
    raise ValueError(f"no instance with max ||J_ab||_1 <= J_max = {J_max} in {max_tries} draws: raise J_max "
                     "or lower A_scale")


# --------------------------------------------------------------------------------------------------
# Theorem 3: first-order propagation of output noise
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Jacobian:
    """First-order response of M_ij = D(q_i, v0 + w_j) - D(q_i, v0) to the answers' errors.

    M_hat_ij - M_ij = alpha_ij xi_ij - beta_i xi_i0 + gamma_ij . xi_u / s + O(|xi|^2), where xi_ij is the
    error of query (i, j), xi_i0 that of row i's base query and xi_u the errors of the d value queries.
    """

    alpha: np.ndarray      # (k1, k2)
    beta: np.ndarray       # (k1,)
    gamma: np.ndarray      # (k1, k2, d)
    p: np.ndarray          # (k1, k2): sigma(q_i^T A (v0 + w_j))
    p0: np.ndarray         # (k1,):   sigma(q_i^T A v0)
    margin: np.ndarray     # (k1, k2): min(u^T (v0 + w_j), u^T v0)
    v0: np.ndarray
    s: float

    def l1(self) -> np.ndarray:
        """||J_ij||_1 = |alpha_ij| + |beta_i| + ||gamma_ij||_1 / s, shape (k1, k2)."""
        return np.abs(self.alpha) + np.abs(self.beta)[:, None] + np.abs(self.gamma).sum(-1) / self.s

    def frobenius2(self) -> float:
        """||J||_F^2 = sum_ij (alpha_ij^2 + beta_i^2 + ||gamma_ij||^2 / s^2)."""
        k2 = self.alpha.shape[1]
        return float(np.sum(self.alpha**2) + k2 * np.sum(self.beta**2) + np.sum(self.gamma**2) / self.s**2)


def first_order_jacobian(A: np.ndarray, u: np.ndarray, Q: np.ndarray | None = None, W: np.ndarray | None = None,
                         *, s: float = 1.0, logit_factor: bool = True) -> Jacobian:
    """Theorem 3's closed-form Jacobian at the true (A, u) (defaults Q = W = I: the Theorem-1 estimator).

    With w_j' = v0 + w_j, p_ij = sigma(q_i^T A w_j'), p_i0 = sigma(q_i^T A v0):
    alpha_ij = 1 / (u^T w_j' p_ij (1 - p_ij)), beta_i = 1 / (u^T v0 p_i0 (1 - p_i0)),
    gamma_ij = (beta_i - alpha_ij) q_i - alpha_ij p_ij w_j' + beta_i p_i0 v0.
    ``logit_factor=False`` drops the 1/(p(1-p)) factors: the *wrong* "logit-free" propagation.
    """
    A, u = _check_params(A, u)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"amplitude s = {s!r} must be finite and > 0")
    d = u.size
    Q = np.eye(d) if Q is None else np.atleast_2d(np.asarray(Q, dtype=float))
    W = np.eye(d) if W is None else np.atleast_2d(np.asarray(W, dtype=float))
    v0, _ = margin_offset(u, W)
    Wp = v0 + W                                                    # (k2, d)
    p = sigmoid(Q @ A @ Wp.T)
    p0 = sigmoid(Q @ A @ v0)
    m, m0 = Wp @ u, float(v0 @ u)
    g, g0 = (p * (1 - p), p0 * (1 - p0)) if logit_factor else (np.ones_like(p), np.ones_like(p0))
    alpha = 1.0 / (m[None, :] * g)
    beta = 1.0 / (m0 * g0)
    gamma = ((beta[:, None] - alpha)[..., None] * Q[:, None, :] - (alpha * p)[..., None] * Wp[None, :, :]
             + (beta * p0)[:, None, None] * v0[None, None, :])
    margin = np.broadcast_to(np.minimum(m, m0)[None, :], alpha.shape)
    return Jacobian(alpha, beta, gamma, p, p0, np.array(margin), v0, float(s))


def predicted_mse(A: np.ndarray, u: np.ndarray, sigma: float, n: int | np.ndarray, *, s: float = 1.0,
                  logit_factor: bool = True) -> np.ndarray:
    """E||A_hat - A||_F^2 = (sigma^2 / n) ||J||_F^2 to first order (Theorem 3(ii))."""
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"noise level sigma = {sigma!r} must be finite and >= 0")
    n = np.asarray(n, dtype=float)
    if np.any(n < 1):
        raise ValueError("the number of repeats n must be >= 1")
    return sigma**2 / n * first_order_jacobian(A, u, s=s, logit_factor=logit_factor).frobenius2()


def design_logits(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """All logits q^T A w of Theorem 1's design (w = v0 and v0 + e_b), for the guard max |logit| <= 8."""
    J = first_order_jacobian(A, u)
    return np.concatenate([logit(J.p).ravel(), logit(J.p0)])


def fp_tolerance_entries(J: Jacobian, f_max: float, d_max: float) -> float:
    """Floating-point error model of a measured entry M_ij: 100 eps (max_ij ||J_ij||_1 max(1, f_max) + d_max).

    Each answer carries a rounding error of a few eps max(1, |f|); Theorem 3's first-order map carries an
    answer error xi to at most ||J_ij||_1 |xi|; the logit and the difference D1 - D0 add a few eps |D|.
    The factor 100 covers the small constants of each step.
    """
    return FP_SAFETY * EPS * (float(np.max(J.l1())) * max(1.0, f_max) + max(1.0, d_max))


def full_design_scale(A: np.ndarray, u: np.ndarray, J: Jacobian) -> tuple[float, float]:
    """(max |f|, max |D|) over Theorem 1's design, computed from the theory (Lemma 1)."""
    Wp = J.v0 + np.eye(u.size)
    f = np.concatenate([(u[:, None] + J.p * (Wp @ u)[None, :]).ravel(), u + J.p0 * float(J.v0 @ u)])
    D = np.abs(np.concatenate([logit(J.p).ravel(), logit(J.p0)]))
    return float(np.max(np.abs(f))), float(np.max(D))


def fp_tolerance_full(A: np.ndarray, u: np.ndarray, s: float = 1.0) -> float:
    """Floating-point tolerance of Theorem 1's max_ab |A_hat_ab - A_ab| (see :func:`fp_tolerance_entries`)."""
    J = first_order_jacobian(A, u, s=s)
    return fp_tolerance_entries(J, *full_design_scale(A, u, J))


# --------------------------------------------------------------------------------------------------
# Proposition 4: multi-head attention is not identifiable
# --------------------------------------------------------------------------------------------------

def equivalent_multihead(A: np.ndarray, u1: np.ndarray, u2: np.ndarray, w: np.ndarray
                         ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Proposition 4: heads (A, u1 + w), (A, u2 - w) define the same function as (A, u1), (A, u2).

    Returns (As, us) of the second parameter set.
    """
    A, u1 = _check_params(A, u1)
    u2, w = np.asarray(u2, dtype=float), np.asarray(w, dtype=float)
    if u2.shape != u1.shape or w.shape != u1.shape:
        raise ValueError("u1, u2 and w must have the same shape (d,)")
    return (A, A), (u1 + w, u2 - w)


def param_distance_mod_perm(theta: tuple[Sequence[np.ndarray], Sequence[np.ndarray]],
                            theta2: tuple[Sequence[np.ndarray], Sequence[np.ndarray]]) -> float:
    """min over head permutations pi of sqrt(sum_h ||A_h - A'_pi(h)||_F^2 + ||u_h - u'_pi(h)||^2)."""
    import itertools

    (As, us), (Bs, vs) = theta, theta2
    H = len(As)
    if not (len(us) == H and len(Bs) == H and len(vs) == H):
        raise ValueError("both parameter sets need the same number of heads and one u per A")
    best = math.inf
    for perm in itertools.permutations(range(H)):
        dist2 = sum(np.sum((As[h] - Bs[perm[h]]) ** 2) + np.sum((us[h] - vs[perm[h]]) ** 2) for h in range(H))
        best = min(best, float(dist2))
    return math.sqrt(best)


def orthogonal_shift(u1: np.ndarray, u2: np.ndarray, norm: float, rng: np.random.Generator) -> np.ndarray:
    """A random w with w . (u1 - u2) = 0 and ||w|| = norm (so the permuted distance is >= sqrt(2) norm)."""
    g = rng.standard_normal(u1.size)
    e = u1 - u2
    if np.any(e != 0):
        g = g - (g @ e) / (e @ e) * e
    return norm * g / np.linalg.norm(g)


def random_sequences(n: int, L_max: int, d: int, rng: np.random.Generator) -> list[np.ndarray]:
    """n sequences with lengths uniform in 1..L_max and N(0, I) tokens, grouped by length:
    a list whose entry L - 1 has shape (n_L, L, d)."""
    n = _check_int("n", n, 1)
    L_max = _check_int("L_max", L_max, 1)
    lengths = rng.integers(1, L_max + 1, size=n)
    return [rng.standard_normal((int(np.sum(lengths == L)), L, d)) for L in range(1, L_max + 1)]


# --------------------------------------------------------------------------------------------------
# The chapter's experiments and claims (shared by the notebook and the mutation tests)
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FullRun:
    """Theorem 1 on one random instance of dimension d."""

    d: int
    A: np.ndarray
    u: np.ndarray
    A_hat: np.ndarray
    u_hat: np.ndarray
    n_queries: int
    tol: float

    @property
    def max_err(self) -> float:
        return float(max(np.max(np.abs(self.A_hat - self.A)), np.max(np.abs(self.u_hat - self.u))))


def run_full(d: int, rng: np.random.Generator, *, A_scale: float, u_scale: float, s: float = 1.0) -> FullRun:
    A, u = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
    oracle = QueryOracle(A, u)
    A_hat, u_hat = learn_full(oracle, d, s=s)
    return FullRun(d, A, u, A_hat, u_hat, oracle.n_queries, fp_tolerance_full(A, u, s))


@dataclass(frozen=True)
class SketchRun:
    """Theorem 2 with sketch size k on one rank-r instance."""

    d: int
    r: int
    k: int
    A: np.ndarray
    A_hat: np.ndarray
    u_err: float
    n_queries: int
    info: SketchInfo
    entry_tol: float

    @property
    def tol(self) -> float:
        """max-entry tolerance: entry_tol (1 + kappa)^2 max(1, ||A||_max), kappa = s_1/s_rank of Q^T Y1."""
        return self.entry_tol * (1 + self.info.kappa) ** 2 * max(1.0, float(np.max(np.abs(self.A))))

    @property
    def max_err(self) -> float:
        return float(max(np.max(np.abs(self.A_hat - self.A)), self.u_err))

    @property
    def rel_err(self) -> float:
        return float(np.linalg.norm(self.A_hat - self.A) / np.linalg.norm(self.A))

    @property
    def rel_tol(self) -> float:
        """Frobenius relative tolerance: d * tol / ||A||_F (>= the max-entry tolerance, summed over d^2 entries)."""
        return self.d * self.tol / float(np.linalg.norm(self.A))


def sketch_entry_tolerance(A: np.ndarray, u: np.ndarray, K: np.ndarray, Q: np.ndarray) -> float:
    """:func:`fp_tolerance_entries` for the sketch's measurements (Y1 and Y2, margin over all of K)."""
    d = u.size
    tols = []
    for rows, dirs in ((np.eye(d), K), (Q.T, K)):
        J = first_order_jacobian(A, u, rows, dirs.T, s=1.0)
        Wp = J.v0 + dirs.T
        f = np.concatenate([((rows @ u)[:, None] + J.p * (Wp @ u)[None, :]).ravel(),
                            rows @ u + J.p0 * float(J.v0 @ u)])
        D = np.concatenate([logit(J.p).ravel(), logit(J.p0)])
        tols.append(fp_tolerance_entries(J, float(np.max(np.abs(f))), float(np.max(np.abs(D)))))
    return max(tols)


def run_sketch(A: np.ndarray, u: np.ndarray, r: int, k: int, rng: np.random.Generator) -> SketchRun:
    """Run :func:`learn_low_rank` with sketch size k; the learner's basis comes from ``rng``."""
    d = u.size
    oracle = QueryOracle(A, u)
    A_hat, u_hat, info = learn_low_rank(oracle, d, k, rng)
    tol = sketch_entry_tolerance(A, u, info.K, info.Q)
    return SketchRun(d, r, k, A, A_hat, float(np.max(np.abs(u_hat - u))), oracle.n_queries, info, tol)


def eckart_young_floor(A: np.ndarray, k: int) -> float:
    """||A - A_k||_F / ||A||_F, the smallest relative error of any rank-<=k matrix."""
    S = np.linalg.svd(A, compute_uv=False)
    return float(np.sqrt(np.sum(S[k:] ** 2)) / np.sqrt(np.sum(S**2)))


def sketch_threshold(runs: Sequence[SketchRun]) -> int:
    """k* = the smallest k from which on every sketch recovers A within its floating-point tolerance."""
    ks = sorted(runs, key=lambda run: run.k)
    kstar = ks[-1].k + 1
    for run in reversed(ks):
        if run.rel_err <= run.rel_tol:
            kstar = run.k
        else:
            break
    return kstar


def claim_exact_recovery(name: str, errors: Sequence[float], tolerances: Sequence[float], why: str) -> Claim:
    """max_i errors_i (each max |A_hat - theory(A, u)|, see :func:`recovery_error`) against 0, within the
    smallest of the runs' floating-point tolerances."""
    return check_absolute(name, float(np.max(errors)), 0.0, float(np.min(tolerances)), why)


def recovery_error(A_hat: np.ndarray, A: np.ndarray, u: np.ndarray,
                   theory: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> float:
    """max_ab |A_hat - theory(A, u)|: the distance of the learner's output from the theory's prediction."""
    return float(np.max(np.abs(A_hat - theory(A, u))))


def exact_theory(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Theorems 1-2: the learner returns A itself."""
    return A


def rank_one_theory(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """WRONG (a strawman): 'softmax is shift invariant, so A is learnt only up to a rank-one term':
    the learner would return A + (A v0) 1^T, i.e. D(e_a, v0 + e_b) without the base query."""
    v0, _ = margin_offset(u, np.eye(u.size))
    return A + np.outer(A @ v0, np.ones(u.size))


# ---- C3: i.i.d. noise ------------------------------------------------------------------------------

@dataclass(frozen=True)
class NoiseRun:
    """Theorem 1's learner under i.i.d. N(0, sigma^2) output noise, R replicates per repeat count n."""

    A: np.ndarray
    u: np.ndarray
    sigma: float
    s: float
    n_list: tuple[int, ...]
    sq_err: np.ndarray            # (R, len(n_list)): ||A_hat - A||_F^2 per replicate
    n_queries: int                # the oracle's counter after all runs

    @property
    def R(self) -> int:
        return self.sq_err.shape[0]

    def mse(self) -> np.ndarray:
        return self.sq_err.mean(axis=0)

    def mse_se(self) -> np.ndarray:
        return self.sq_err.std(axis=0, ddof=1) / math.sqrt(self.R)


def run_noise(A: np.ndarray, u: np.ndarray, sigma: float, n_list: Sequence[int], R: int,
              rng: np.random.Generator, *, s: float = 1.0) -> NoiseRun:
    """R independent runs of :func:`learn_full` per n (one batched call per stage), each query asked n times."""
    R = _check_int("R", R, 2)
    oracle = QueryOracle(A, u, noise="gaussian", sigma=sigma, rng=rng)
    cols = []
    for n in n_list:
        A_hat, _ = learn_full(oracle, u.size, s=s, repeats=int(n), batch=(R,))
        cols.append(np.sum((A_hat - A) ** 2, axis=(-2, -1)))
    return NoiseRun(A, u, float(sigma), float(s), tuple(int(n) for n in n_list), np.stack(cols, axis=1),
                    oracle.n_queries)


def claim_noise_mse(name: str, run: NoiseRun, i: int, mse_theory: Callable[..., np.ndarray]) -> Claim:
    """Mean ||A_hat - A||_F^2 at n = n_list[i] against mse_theory(A, u, sigma, n, s=s), 3.29 SE."""
    n = run.n_list[i]
    pred = float(mse_theory(run.A, run.u, run.sigma, n, s=run.s))
    return check_zscore(name, float(run.mse()[i]), pred, float(run.mse_se()[i]),
                        f"Monte-Carlo SE of the mean over R = {run.R} replicates (n = {n} repeats per query)")


def logit_free_mse(A: np.ndarray, u: np.ndarray, sigma: float, n: int, *, s: float = 1.0) -> np.ndarray:
    """WRONG: propagation without the logit's 1/(p(1-p)) factor (under-predicts the RMS by >= 4x)."""
    return predicted_mse(A, u, sigma, n, s=s, logit_factor=False)


def rms_rate_fit(run: NoiseRun, rng: np.random.Generator) -> LogLogFit:
    """Log-log fit of the mean squared error against n with a bootstrap over replicates (columns independent).

    The RMS exponent is half the fitted MSE exponent, and so is its SE.
    """
    return fit_loglog(np.asarray(run.n_list, dtype=float), replicates=run.sq_err, paired=False, rng=rng)


def claim_rms_rate(name: str, fit: LogLogFit, predicted_exponent: float) -> Claim:
    """|slope_RMS - predicted| <= 3.29 SE_boot, slope_RMS = slope_MSE / 2."""
    return check_zscore(name, fit.slope / 2, predicted_exponent, fit.slope_se / 2,
                        "bootstrap SE of the RMS exponent over replicates (normal rule, alpha = 1e-3)")


# ---- C4: adversarial noise ---------------------------------------------------------------------------

def entry_adversary(J: Jacobian, a: int, b: int, tau: float, sign: float = 1.0) -> list[np.ndarray]:
    """The perturbation schedule xi = sign tau sign(J_ab) on the queries entry (a, b) depends on.

    Schedule for :func:`learn_full` with repeats = 1: [value queries (d,), bilinear queries (d, d + 1)]
    (column 0 = base queries, column b + 1 = direction e_b).
    """
    d = J.alpha.shape[0]
    xi_u = sign * tau * np.sign(J.gamma[a, b])
    xi_m = np.zeros((d, d + 1))
    xi_m[a, 0] = -sign * tau * np.sign(J.beta[a])
    xi_m[a, b + 1] = sign * tau * np.sign(J.alpha[a, b])
    return [xi_u, xi_m]


def run_adversaries(A: np.ndarray, u: np.ndarray, schedules: Sequence[Sequence[np.ndarray]],
                    s: float = 1.0) -> np.ndarray:
    """A_hat - A for a batch of adversaries (one learner copy each, batched in one oracle call per stage)."""
    batch = (len(schedules),)
    stacked = [np.stack([np.broadcast_to(sch[t], schedules[0][t].shape) for sch in schedules])[None]
               for t in range(2)]
    oracle = QueryOracle(A, u, noise=AdversarySchedule(stacked))
    A_hat, _ = learn_full(oracle, u.size, s=s, batch=batch)
    return A_hat - A


@dataclass(frozen=True)
class AdversaryRun:
    """Worst-entry and random-sign adversaries on one instance."""

    A: np.ndarray
    u: np.ndarray
    J: Jacobian
    worst: tuple[int, int]
    taus: np.ndarray
    err_plus: np.ndarray          # (len(taus),): A_hat - A at the worst entry, adversary +sign(J)
    err_minus: np.ndarray         # same with -sign(J)
    tau_adv: float
    kappa: np.ndarray             # (d, d): per-entry second-order coefficient at tau_adv
    random_err: np.ndarray        # (n_adv, d, d): errors under random-sign adversaries at tau_adv
    fp_tol: float

    @property
    def rho(self) -> np.ndarray:
        """rho(tau) = |err| / (tau ||J||_1) for the +sign(J) adversary at the worst entry."""
        a, b = self.worst
        return np.abs(self.err_plus) / (self.taus * self.J.l1()[a, b])

    @property
    def odd_slope(self) -> np.ndarray:
        """(err(+tau) - err(-tau)) / (2 tau) = ||J||_1 + O(tau^2): the first-order coefficient."""
        return (self.err_plus - self.err_minus) / (2 * self.taus)

    @property
    def kappa_worst(self) -> np.ndarray:
        """(err(+tau) + err(-tau)) / (2 tau^2 ||J||_1) at each tau: the worst entry's second-order coefficient."""
        a, b = self.worst
        return (self.err_plus + self.err_minus) / (2 * self.taus**2 * self.J.l1()[a, b])


def run_adversarial(A: np.ndarray, u: np.ndarray, taus: Sequence[float], tau_adv: float, n_adv: int,
                    rng: np.random.Generator) -> AdversaryRun:
    """Adversaries against Theorem 1's learner (Theorem 3(i)).

    Worst entry (a*, b*) = argmax ||J_ab||_1: the adversaries +-tau sign(J_a*b*) at each tau. At tau_adv:
    for every entry the two adversaries +-tau sign(J_ab), whose even part gives the per-entry second-order
    coefficient kappa_ab = (err_+ + err_-) / (2 tau^2 ||J_ab||_1), and n_adv adversaries with i.i.d.
    random signs on every query.
    """
    if not (math.isfinite(tau_adv) and tau_adv > 0):
        raise ValueError(f"tau_adv = {tau_adv!r} must be finite and > 0")
    n_adv = _check_int("n_adv", n_adv, 1)
    J = first_order_jacobian(A, u)
    d = u.size
    L1 = J.l1()
    a, b = np.unravel_index(int(np.argmax(L1)), L1.shape)
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or np.any(~(taus > 0)):
        raise ValueError("taus must be a non-empty list of positive tolerances")
    sched = [entry_adversary(J, a, b, t, sg) for sg in (1.0, -1.0) for t in taus]
    err = run_adversaries(A, u, sched)[:, a, b].reshape(2, taus.size)
    pm = [entry_adversary(J, i, j, tau_adv, sg) for sg in (1.0, -1.0) for i in range(d) for j in range(d)]
    e_pm = run_adversaries(A, u, pm).reshape(2, d, d, d, d)
    ii, jj = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    kappa = (e_pm[0][ii, jj, ii, jj] + e_pm[1][ii, jj, ii, jj]) / (2 * tau_adv**2 * L1)
    signs = rng.choice([-1.0, 1.0], size=(n_adv, d + d * (d + 1)))
    rand = [[tau_adv * sg[:d], tau_adv * sg[d:].reshape(d, d + 1)] for sg in signs]
    random_err = run_adversaries(A, u, rand)
    return AdversaryRun(A, u, J, (int(a), int(b)), taus, err[0], err[1], float(tau_adv), kappa, random_err,
                        fp_tolerance_full(A, u))


def claim_worst_coefficient(name: str, run: AdversaryRun, coefficient: Callable[[Jacobian, int, int], float]
                            ) -> Claim:
    """The worst adversary's first-order coefficient (err(+tau) - err(-tau))/(2 tau) at the smallest tau
    against the theory's worst-case coefficient, within the floating-point bound 2 fp_tol / (2 tau)."""
    a, b = run.worst
    i = int(np.argmin(run.taus))
    tol = run.fp_tol / float(run.taus[i])
    return check_absolute(name, float(run.odd_slope[i]), float(coefficient(run.J, a, b)), tol,
                          "fp bound of two estimator runs over 2 tau; the O(tau^2) remainder is far smaller")


def l1_coefficient(J: Jacobian, a: int, b: int) -> float:
    """Theorem 3(i): the worst-case first-order coefficient is ||J_ab||_1."""
    return float(J.l1()[a, b])


def margin_only_coefficient(J: Jacobian, a: int, b: int) -> float:
    """WRONG: 'the error is at most tau / gamma' (margin only, no logit amplification)."""
    return float(1.0 / J.margin[a, b])


def l1_bound(J: Jacobian) -> np.ndarray:
    """Theorem 3(i)'s first-order bound per unit tau: ||J_ab||_1 for every entry."""
    return J.l1()


def margin_only_bound(J: Jacobian) -> np.ndarray:
    """WRONG: 1 / gamma_ab per unit tau (margin only)."""
    return 1.0 / J.margin


def random_adversary_excess(run: AdversaryRun, first_order_bound: Callable[[Jacobian], np.ndarray]) -> float:
    """max over entries and random adversaries of (|err_ab| - tau B_ab) / (2 |kappa_ab| tau^2 B_ab + t_fp).

    B_ab is the theory's first-order bound per unit tau (||J_ab||_1 for Theorem 3(i)) and t_fp the
    floating-point bound; the value is <= 1 exactly when every error is within
    tau B_ab (1 + 2 |kappa_ab| tau) + t_fp. A negative value means every error is below the first-order bound.
    """
    t = run.tau_adv
    B = first_order_bound(run.J)
    excess = (np.abs(run.random_err) - t * B) / (2 * np.abs(run.kappa) * t**2 * B + run.fp_tol)
    return float(np.max(excess))


def claim_random_adversaries(name: str, run: AdversaryRun,
                             first_order_bound: Callable[[Jacobian], np.ndarray]) -> Claim:
    """Random-sign adversaries: every error within tau B_ab (1 + 2 |kappa_ab| tau) + t_fp
    (see :func:`random_adversary_excess`; the claim is excess <= 1)."""
    return check_upper(name, random_adversary_excess(run, first_order_bound), 1.0,
                       "excess over the proved first-order bound, in units of 2x the measured 2nd-order term + fp")


# ---- C5: multi-head ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MultiheadRun:
    theta: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]
    theta2: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]
    max_diff: float
    max_f: float
    fp_tol: float
    distance: float


def run_multihead(d: int, n: int, L_max: int, w_norm: float, rng: np.random.Generator, *,
                  A_scale: float = 2.0, u_scale: float = 1.0,
                  construction: Callable[..., tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]
                  = equivalent_multihead) -> MultiheadRun:
    """Two-head theta = ((A, A), (u1, u2)) and theta' = construction(A, u1, u2, w), w _|_ (u1 - u2),
    ||w|| = w_norm; max |f_theta - f_theta'| over n random sequences of lengths 1..L_max.

    fp_tol: 2 (d + L_max) eps max_X sum_h sum_i s_hi (|u_h| + |u'_h|)^T |x_i| bounds the rounding of the
    two evaluations (the attention weights are computed identically, the value dot products round).
    """
    A, u1 = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
    u2 = rng.standard_normal(d) * (u_scale / math.sqrt(d))
    w = orthogonal_shift(u1, u2, w_norm, rng)
    theta = ((A, A), (u1, u2))
    theta2 = construction(A, u1, u2, w)
    diff, fmax, scale = 0.0, 0.0, 0.0
    absu = sum(np.abs(v) for v in (*theta[1], *theta2[1]))
    for X in random_sequences(n, L_max, d, rng):
        if X.shape[0] == 0:
            continue
        f1 = multihead_oracle(X, *theta)
        f2 = multihead_oracle(X, *theta2)
        diff = max(diff, float(np.max(np.abs(f1 - f2))))
        fmax = max(fmax, float(np.max(np.abs(f1))))
        scale = max(scale, float(np.max(np.einsum("bn,bn->b", attention_weights(X, A), np.abs(X) @ absu))))
    tol = 2 * (d + L_max) * EPS * scale
    return MultiheadRun(theta, theta2, diff, fmax, tol, param_distance_mod_perm(theta, theta2))


def shift_both_heads(A: np.ndarray, u1: np.ndarray, u2: np.ndarray, w: np.ndarray):
    """WRONG equivalence: shift both heads' values by +w (changes f by 2 w^T sum_i s_i x_i)."""
    return (A, A), (u1 + w, u2 + w)


def claim_same_function(name: str, run: MultiheadRun) -> Claim:
    return check_absolute(name, run.max_diff, 0.0, run.fp_tol,
                          "rounding bound of two evaluations: 2 (d + L) eps sum_i s_i |u|^T |x_i|")


def claim_distance(name: str, run: MultiheadRun, predicted: float) -> Claim:
    tol = 64 * EPS * (1 + sum(float(np.linalg.norm(v)) for v in (*run.theta[1], *run.theta2[1])))
    return check_absolute(name, run.distance, predicted, tol, "fp rounding of the norms")


def exact_count_claim(name: str, measured: int, predicted: int, why: str) -> Claim:
    return check_exact(name, int(measured), int(predicted), why)
