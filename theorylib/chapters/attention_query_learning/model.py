"""The model of chapter 'attention-query-learning': the attention head, its query oracle and the learners.

For a sequence ``X = (x_1, ..., x_N)`` of tokens in ``R^d`` (any ``N >= 1``) whose last token ``x_N`` is the
query,

    f_theta(X) = sum_i softmax_i(x_N^T A x_i) u^T x_i,        theta = (A, u),

with ``A = W_Q W_K^T / sqrt(r)`` (rank <= r) and ``u = W_V w_o``. The learner sees only a counting oracle
``X -> f_theta(X) (+ noise)`` (:class:`QueryOracle`).

The two probes (Lemma 1): ``f([x]) = u^T x`` and ``f([q + w; q]) = u^T q + sigma(q^T A w) u^T w``, so that
``D(q, w) = logit((f - u^T q) / (u^T w)) = q^T A w`` whenever ``u^T w != 0``: a *linear* measurement of A.

* :func:`learn_full` recovers (A, u) with ``d^2 + 2d`` queries (Algorithm 1, Theorem 1);
* :func:`learn_low_rank` recovers a rank-r A by a skeleton sketch (Algorithm 2, Theorem 2);
* :func:`random_full_instance`, :func:`random_low_rank_instance` draw the instances.

Everything here is the measured side: it never imports the chapter's ``theory``. All arrays are float64;
every batch of queries goes to the oracle in one call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real

Oracle = Callable[[np.ndarray], np.ndarray]


# --------------------------------------------------------------------------------------------------
# The model and the oracle
# --------------------------------------------------------------------------------------------------

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


class GaussianNoiseOn:
    """i.i.d. N(0, sigma^2) noise on the answers to queries of ``n_tokens`` tokens only (exact answers otherwise).

    With ``n_tokens=1`` only the value queries [s e_j] are noisy, with ``n_tokens=2`` only the two-token
    probes: each part of the estimator's error can be measured on its own.
    """

    def __init__(self, sigma: float, rng: np.random.Generator, n_tokens: int) -> None:
        self._sigma = check_real("noise level sigma", sigma, low=0.0)
        self._rng = rng
        self._n_tokens = check_positive_int("n_tokens", n_tokens)

    def __call__(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        if X.shape[-2] != self._n_tokens:
            return np.zeros(y.shape)
        return self._sigma * self._rng.standard_normal(y.shape)


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
        sigma = check_real("noise level sigma", sigma, low=0.0)
        if noise == "gaussian":
            if rng is None:
                raise ValueError("a Gaussian-noise oracle needs an explicit rng")
        elif noise != "none" and not callable(noise):
            raise ValueError(f"noise must be 'none', 'gaussian' or a callable, got {noise!r}")
        self._noise, self._sigma, self._rng = noise, sigma, rng
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
# Learners (Algorithms 1 and 2)
# --------------------------------------------------------------------------------------------------

def _ask(oracle: Oracle, X: np.ndarray, repeats: int) -> np.ndarray:
    """Ask every query of X ``repeats`` times (one oracle call) and average the answers."""
    repeats = check_positive_int("repeats", repeats)
    return oracle(np.broadcast_to(X, (repeats, *X.shape))).mean(axis=0)


def learn_value_vector(oracle: Oracle, d: int, *, s: float = 1.0, repeats: int = 1,
                       batch: tuple[int, ...] = ()) -> np.ndarray:
    """u_hat from the d one-token queries [s e_j]: f([s e_j]) = s u_j (Lemma 1(1)).

    ``batch`` runs independent copies of the learner at once (shape batch + (d,)); ``repeats`` asks each
    query that many times and averages. Uses d * repeats * prod(batch) queries.
    """
    d = check_positive_int("d", d)
    s = check_positive("amplitude s", s)
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


def bilinear_measurements(oracle: Oracle, u_hat: np.ndarray, Q: np.ndarray, W: np.ndarray, *,
                          c_dirs: np.ndarray | None = None, repeats: int = 1, raw: bool = False) -> np.ndarray:
    """M_ij = q_i^T A w_j from k1 (k2 + 1) two-token queries (Lemma 1(2)).

    Q : (k1, d) query tokens; W : (k2, d) directions; u_hat : batch + (d,).
    For each row i one base query [q_i + v0; q_i] and k2 queries [q_i + v0 + w_j; q_i];
    M_ij = D(q_i, v0 + w_j) - D(q_i, v0), where v0's contribution cancels exactly whatever v0 is.
    v0 = c u_hat / ||u_hat||^2 with c = 1 + max |u_hat^T w| over ``c_dirs`` (default: W), so every
    probe has margin u_hat^T w >= 1. A probability outside (0, 1) (possible only under noise) raises a
    ValueError: the estimator is undefined there and is never clipped. ``raw=True`` returns the probes
    D(q_i, v0) and D(q_i, v0 + w_j) themselves, batch + (k1, k2 + 1) (column 0: the base query).
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
    return D if raw else D[..., 1:] - D[..., :1]


def learn_full(oracle: Oracle, d: int, *, s: float = 1.0, repeats: int = 1,
               batch: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1: (A_hat, u_hat) from d^2 + 2d queries (times ``repeats`` and ``prod(batch)``).

    u_hat from [s e_j]; then for each row a one base query w = v0 and d queries w = v0 + e_b,
    A_ab = D(e_a, v0 + e_b) - D(e_a, v0), with c = 1 + ||u_hat||_inf.
    """
    d = check_positive_int("d", d)
    u_hat = learn_value_vector(oracle, d, s=s, repeats=repeats, batch=batch)
    eye = np.eye(d)
    return bilinear_measurements(oracle, u_hat, eye, eye, repeats=repeats), u_hat


def sketch_basis(d: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(K, Q): K a Haar-random d x d orthogonal matrix, Q a d x k Gaussian matrix with unit-norm columns."""
    d = check_positive_int("d", d)
    k = check_int("sketch size k", k, low=1)
    if k > d:
        raise ValueError(f"sketch size k = {k} must be <= d = {d}")
    G = rng.standard_normal((d, d))
    K, R = np.linalg.qr(G)
    K = K * np.sign(np.diag(R))                   # Haar measure (Mezzadri's sign fix)
    Q = rng.standard_normal((d, k))
    return K, Q / np.linalg.norm(Q, axis=0)


@dataclass(frozen=True)
class SketchInfo:
    """Diagnostics of the sketch: the kept rank of Q^T Y1, its s_1/s_rank, all its singular values, K and Q."""

    rank: int
    kappa: float
    singular_values: np.ndarray
    K: np.ndarray
    Q: np.ndarray


def learn_low_rank(oracle: Oracle, d: int, k: int, rng: np.random.Generator, *, s: float = 1.0,
                   rcond: float = 1e-10) -> tuple[np.ndarray, np.ndarray, SketchInfo]:
    """Algorithm 2: A_hat = Y1 (Q^T Y1)^+ (Q^T A) with a sketch of size k (k = r for rank-r A).

    Queries: d for u_hat, d (k + 1) for Y1 = A K_k and, if k < d, k (d - k + 1) for Y2 = Q^T A K_perp;
    Q^T A = [Q^T Y1, Y2] K^T. The pseudo-inverse keeps singular values > rcond * s_1 and
    ``info.kappa`` = s_1 / s_rank is the condition number it actually inverts. The margin constant is
    c = 1 + max_j |u_hat^T k_j| over all columns of K.
    """
    d = check_positive_int("d", d)
    k = check_int("sketch size k", k, low=1)
    if k > d:
        raise ValueError(f"sketch size k = {k} must be <= d = {d}")
    rcond = check_real("rcond", rcond, low=0.0, high=1.0, open_low=True, open_high=True)
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


# --------------------------------------------------------------------------------------------------
# Random instances
# --------------------------------------------------------------------------------------------------

def random_full_instance(d: int, rng: np.random.Generator, *, A_scale: float = 2.0,
                         u_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(A, u): A_ab ~ N(0, A_scale^2 / d), u ~ N(0, u_scale^2 I / d), independent."""
    d = check_positive_int("d", d)
    A = rng.standard_normal((d, d)) * (A_scale / math.sqrt(d))
    u = rng.standard_normal(d) * (u_scale / math.sqrt(d))
    return A, u


def random_low_rank_instance(d: int, r: int, rng: np.random.Generator, *, A_scale: float = 2.0,
                             u_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(A, u): A = G1 G2^T A_scale / sqrt(d r) with G1, G2 (d x r) standard Gaussian (entries of variance
    A_scale^2 / d, rank r a.s.), u ~ N(0, u_scale^2 I / d)."""
    d = check_positive_int("d", d)
    r = check_int("r", r, low=1)
    if r > d:
        raise ValueError(f"rank r = {r} must be <= d = {d}")
    G1, G2 = rng.standard_normal((d, r)), rng.standard_normal((d, r))
    u = rng.standard_normal(d) * (u_scale / math.sqrt(d))
    return G1 @ G2.T * (A_scale / math.sqrt(d * r)), u


# --------------------------------------------------------------------------------------------------
# The paper's O(rd) learner: random rank-one probes and a low-rank solver
# --------------------------------------------------------------------------------------------------

def rank_one_probes(oracle: Oracle, u_hat: np.ndarray, Q: np.ndarray, W: np.ndarray) -> np.ndarray:
    """y_i = D(q_i, w_i) = q_i^T A w_i from one two-token query [q_i + w_i; q_i] each (Lemma 1(3)).

    Q, W : (m, d), the rows q_i, w_i. Needs u_hat^T w_i != 0 (true almost surely for Gaussian w_i); a
    probability outside (0, 1) raises a ValueError.
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    W = np.atleast_2d(np.asarray(W, dtype=float))
    if Q.shape != W.shape or Q.shape[1] != u_hat.size:
        raise ValueError(f"Q and W must both have shape (m, {u_hat.size}), got {Q.shape} and {W.shape}")
    margin = W @ u_hat
    if np.any(margin == 0):
        raise ValueError("a probe direction w with u^T w = 0 carries no information")
    X = np.stack([Q + W, Q], axis=1)                                  # (m, 2, d)
    P = (oracle(X) - Q @ u_hat) / margin
    return logit(P)


def _factor_lstsq(rows_a: np.ndarray, proj_b: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The least-squares factor F (d x r) of y_i = a_i^T F b_i with b_i = proj_b[i] (r,)."""
    design = np.einsum("ia,ij->iaj", rows_a, proj_b).reshape(y.size, -1)
    sol, *_ = np.linalg.lstsq(design, y, rcond=None)
    return sol.reshape(rows_a.shape[1], proj_b.shape[1])


def als_rank_one(Q: np.ndarray, W: np.ndarray, y: np.ndarray, r: int, iters: int) -> np.ndarray:
    """Alternating least squares for the rank-r matrix M with q_i^T M w_i = y_i.

    Spectral start: the top-r part of (1/m) sum_i y_i (q_i w_i^T) / (E|q|^2/d)(E|w|^2/d), an unbiased
    estimate of M for isotropic Gaussian q_i, w_i; then ``iters`` rounds (a fixed count, no data-dependent
    stopping) of U <- argmin_U sum_i (q_i^T U V^T w_i - y_i)^2 and V likewise.
    """
    r = check_positive_int("r", r)
    iters = check_int("iters", iters, low=0)
    m, d = Q.shape
    sq = np.mean(np.sum(Q**2, axis=1)) / d * np.mean(np.sum(W**2, axis=1)) / d
    M0 = (Q.T * y) @ W / (m * sq)
    U0, S0, V0t = np.linalg.svd(M0)
    U = U0[:, :r] * np.sqrt(S0[:r])
    V = V0t[:r].T * np.sqrt(S0[:r])
    for _ in range(iters):
        U = _factor_lstsq(Q, W @ V, y)
        V = _factor_lstsq(W, Q @ U, y)
    return U @ V.T


def learn_rank_one_probes(oracle: Oracle, d: int, r: int, m: int, rng: np.random.Generator, *,
                          iters: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The paper's O(rd) learner: u_hat from the d value queries, then m random rank-one probes
    y_i = q_i^T A w_i (one query each, q_i, w_i ~ N(0, I/d) independent) and :func:`als_rank_one`.

    Returns (A_hat, u_hat, Q, W). Uses d + m queries.
    """
    d = check_positive_int("d", d)
    m = check_positive_int("m", m)
    Q = rng.standard_normal((m, d)) / math.sqrt(d)
    W = rng.standard_normal((m, d)) / math.sqrt(d)
    u_hat = learn_value_vector(oracle, d)
    y = rank_one_probes(oracle, u_hat, Q, W)
    return als_rank_one(Q, W, y, r, iters), u_hat, Q, W
