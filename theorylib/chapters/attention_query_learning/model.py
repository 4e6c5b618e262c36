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


def multihead_jacobian(X: np.ndarray, As: Sequence[np.ndarray], us: Sequence[np.ndarray]) -> np.ndarray:
    """d f_Theta(X) / d Theta for a batch X (n, N, d) of sequences, shape (n, H (d^2 + d)).

    The parameters are ordered head by head, vec(A_h) (row-major) then u_h. With s_hi the weights of head h,
    v_hi = u_h^T x_i and f_h = sum_i s_hi v_hi: df/du_h = sum_i s_hi x_i, and, since the scores are
    z_hi = x_N^T A_h x_i and ds_hi/dz_hj = s_hi (1[i = j] - s_hj), df/dA_h = sum_i s_hi (v_hi - f_h) x_N x_i^T.
    """
    if len(As) != len(us) or len(As) == 0:
        raise ValueError(f"need as many value vectors as heads (>= 1), got {len(As)} and {len(us)}")
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, N, d), got {X.shape}")
    blocks = []
    for A, u in zip(As, us, strict=True):
        A, u = _check_params(A, u)
        X = _check_tokens(X, u.size)
        s = attention_weights(X, A)                                 # (n, N)
        v = X @ u                                                   # (n, N)
        g = s * (v - np.einsum("bn,bn->b", s, v)[:, None])          # df/dz_hi
        dA = np.einsum("bd,bn,bne->bde", X[:, -1, :], g, X).reshape(X.shape[0], -1)
        du = np.einsum("bn,bnd->bd", s, X)
        blocks += [dA, du]
    return np.concatenate(blocks, axis=1)


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


# --------------------------------------------------------------------------------------------------
# The one-layer Transformer's feed-forward part: an exact query learner for a one-hidden-layer ReLU net
# --------------------------------------------------------------------------------------------------

def relu_net(X: np.ndarray, a: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """g(x) = sum_j a_j ReLU(w_j^T x + b_j) for a batch X (..., d); W (h, d), a and b (h,)."""
    return np.maximum(np.asarray(X, dtype=float) @ W.T + b, 0.0) @ a


class ReluOracle:
    """Black-box access to g = a^T ReLU(W x + b) that counts every query (a batch (..., d) counts its rows)."""

    def __init__(self, a: np.ndarray, W: np.ndarray, b: np.ndarray) -> None:
        W = np.asarray(W, dtype=float)
        if W.ndim != 2 or np.shape(a) != (W.shape[0],) or np.shape(b) != (W.shape[0],):
            raise ValueError(f"need W (h, d), a (h,), b (h,); got {W.shape}, {np.shape(a)}, {np.shape(b)}")
        self._a, self._W, self._b = np.asarray(a, dtype=float), W, np.asarray(b, dtype=float)
        self.n_queries = 0

    @property
    def d(self) -> int:
        return self._W.shape[1]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.shape[-1] != self.d:
            raise ValueError(f"inputs have dimension {X.shape[-1]}, the network has d = {self.d}")
        self.n_queries += int(np.prod(X.shape[:-1], dtype=np.int64))
        return relu_net(X, self._a, self._W, self._b)


@dataclass(frozen=True)
class ReluFit:
    """The learner's output in canonical form: unit normals ``W`` (h, d), offsets ``b``, output weights ``a``
    (g = sum_j a_j ReLU(w_j^T x + b_j), ||w_j|| = 1), sorted by b; and what its error analysis needs:
    ``f_max`` (largest |answer| seen), ``f_near`` (largest |answer| of each unit's gradient queries),
    ``h`` (finite-difference step), ``jump`` (|slope jump| along the
    line at each kink), ``f_kink`` (largest |answer| of the kink's refinement), ``t_abs`` (|t| of the kink), ``x_norm``
    (||kink point||), ``grad_jump`` (||gradient jump|| = |a_j| ||w_j||), ``v_norm`` (the line's speed)."""
    a: np.ndarray
    W: np.ndarray
    b: np.ndarray
    f_max: float
    h: float
    jump: np.ndarray
    f_kink: np.ndarray
    t_abs: np.ndarray
    x_norm: np.ndarray
    grad_jump: np.ndarray
    v_norm: np.ndarray
    f_near: np.ndarray


def _line_kinks(phi: Callable[[float], float], lo: float, hi: float, delta: float, slope_tol: float,
                depth: int = 0) -> list[tuple[float, float, float]]:
    """Kinks of a piecewise-linear phi on [lo, hi]: (t, |slope jump|, largest |phi| of the refinement) each.

    The end slopes come from differences over ``delta``; if they agree the piece is linear; else the two
    end lines meet at t*; if phi(t*) lies on them and the slopes at distance 1e-3 (hi - lo) on either side
    of t* are the end slopes, there is one kink, refined by intersecting the lines through
    (t* - 2l, t* - l) and (t* + l, t* + 2l); else the interval is bisected.
    """
    if depth > 60:
        raise RuntimeError("kink search did not terminate (a non-generic line)")
    f_lo, f_hi = phi(lo), phi(hi)
    sl = (phi(lo + delta) - f_lo) / delta
    sr = (f_hi - phi(hi - delta)) / delta
    if abs(sl - sr) <= slope_tol or hi - lo <= 4 * delta:
        return []
    t = (f_hi - f_lo + sl * lo - sr * hi) / (sl - sr)
    gam = 1e-3 * (hi - lo)
    if lo + 2 * gam < t < hi - 2 * gam:
        f_t = phi(t)
        on_left = abs(f_t - (f_lo + sl * (t - lo))) <= slope_tol * (1 + abs(t - lo))
        # one kink near t when the slopes on either side of t (at distance gam) are the end slopes
        s_minus = (phi(t - gam) - phi(t - 2 * gam)) / gam
        s_plus = (phi(t + 2 * gam) - phi(t + gam)) / gam
        if on_left and abs(s_minus - sl) <= slope_tol and abs(s_plus - sr) <= slope_tol:
            # refine: the lines through (t - 2l, t - l) and (t + l, t + 2l), l = min(t - lo, hi - t) / 2
            ell = 0.5 * min(t - lo, hi - t)
            f1, f2, f3, f4 = (phi(t + k * ell) for k in (-2.0, -1.0, 1.0, 2.0))
            sl, sr = (f2 - f1) / ell, (f4 - f3) / ell
            t = t + (f3 - sr * ell - f2 - sl * ell) / (sl - sr)
            return [(t, abs(sl - sr), max(abs(f) for f in (f1, f2, f3, f4)))]
    mid = 0.5 * (lo + hi)
    return (_line_kinks(phi, lo, mid, delta, slope_tol, depth + 1)
            + _line_kinks(phi, mid, hi, delta, slope_tol, depth + 1))


def learn_relu(oracle: Oracle, d: int, rng: np.random.Generator, *, n_lines: int = 2, T: float = 100.0,
               delta: float = 1e-5, h: float = 1e-5, slope_tol: float = 1e-6) -> ReluFit:
    """Exact query learner for g = a^T ReLU(W x + b) (one hidden layer, no affine term).

    1. Along random lines x0 + t v, t in [-T, T], locate every kink (:func:`_line_kinks`); each lies on a
       hidden unit's hyperplane w_j^T x + b_j = 0.
    2. At each kink x_k, the gradient jump (forward differences of step h at x_k -+ eta v) is
       Delta = a_j w_j sgn(w_j^T v): the unit normal n = Delta/||Delta||, offset -n^T x_k and weight
       ||Delta|| sgn(n^T v), up to the orientation (n, b) -> (-n, -b), which changes g by an affine term.
    3. Kinks of different lines on the same hyperplane are merged; the orientations are read off the
       affine residual g - g_hat at 0, e_1, ..., e_d (a 0/1 least-squares solve).
    """
    d = check_positive_int("d", d)
    q = lambda X: oracle(np.asarray(X, dtype=float))  # noqa: E731
    units: list[list[float | np.ndarray]] = []
    f_max = 0.0
    for _ in range(n_lines):
        x0, v = rng.standard_normal(d), rng.standard_normal(d)

        def phi(t: float, x0=x0, v=v) -> float:
            return float(q(x0 + t * v))

        kinks = sorted(_line_kinks(phi, -T, T, delta, slope_tol))
        ts = np.array([k[0] for k in kinks])
        f_max = max(f_max, float(np.max(np.abs(q(x0 + np.array([-T, T])[:, None] * v)))))
        for i, (t, jump, f_kink) in enumerate(kinks):
            gaps = np.abs(np.delete(ts, i) - t)
            eta = 0.25 * min(1.0, float(gaps.min()) if gaps.size else 1.0)
            xk = x0 + t * v
            grads, f_near = [], 0.0
            for side in (-1.0, 1.0):
                base = xk + side * eta * v
                pts = np.vstack([base, base + h * np.eye(d)])
                vals = q(pts)
                f_near = max(f_near, float(np.max(np.abs(vals))))
                grads.append((vals[1:] - vals[0]) / h)
            Delta = grads[1] - grads[0]
            norm = float(np.linalg.norm(Delta))
            n = Delta / norm
            units.append([n, -float(n @ xk), norm * np.sign(n @ v), jump, f_kink, float(np.linalg.norm(xk)), norm,
                          float(np.linalg.norm(v)), f_near, abs(t)])
    # merge duplicate hyperplanes (same unit seen on several lines), orientation-free
    merged: list[list[float | np.ndarray]] = []
    for u_ in units:
        key = np.append(u_[0], u_[1])
        if not any(min(np.linalg.norm(key - np.append(m[0], m[1])), np.linalg.norm(key + np.append(m[0], m[1])))
                   < 1e-4 * (1 + abs(u_[1])) for m in merged):
            merged.append(u_)
    N = np.array([m[0] for m in merged])
    B = np.array([m[1] for m in merged])
    a = np.array([m[2] for m in merged])
    # orientation: g - g_plus = -sum_{flipped j} a_j (n_j^T x + b_j), an affine function
    P = np.vstack([np.zeros(d), np.eye(d)])
    resid = q(P) - relu_net(P, a, N, B)
    coef = np.column_stack([-a[j] * (P @ N[j] + B[j]) for j in range(a.size)])
    lam = np.linalg.lstsq(coef, resid, rcond=None)[0]
    flip = np.where(np.round(lam) == 1, -1.0, 1.0)
    N, B = N * flip[:, None], B * flip
    order = np.argsort(B)
    cols = lambda k: np.array([m[k] for m in merged])[order]  # noqa: E731
    return ReluFit(a=a[order], W=N[order], b=B[order], f_max=max(f_max, float(np.max(np.abs(resid)))), h=h,
                   jump=cols(3), f_kink=cols(4), t_abs=cols(9), x_norm=cols(5), grad_jump=cols(6), v_norm=cols(7),
                   f_near=cols(8))


class TransformerOracle:
    """Black-box access to a one-layer Transformer T(X) = a^T ReLU(W z(X) + b), z(X) = sum_i
    softmax_i(x_N^T A x_i) x_i (the value and output maps absorbed into W), counting every query."""

    def __init__(self, A: np.ndarray, a: np.ndarray, W: np.ndarray, b: np.ndarray) -> None:
        self._A = np.asarray(A, dtype=float)
        self._net = ReluOracle(a, W, b)
        if self._A.shape != (self._net.d, self._net.d):
            raise ValueError(f"A must be (d, d) with d = {self._net.d}, got {self._A.shape}")
        self.n_queries = 0

    @property
    def d(self) -> int:
        return self._net.d

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = _check_tokens(X, self.d)
        self.n_queries += int(np.prod(X.shape[:-2], dtype=np.int64))
        z = np.einsum("...n,...nd->...d", attention_weights(X, self._A), X)
        return self._net(z)


@dataclass(frozen=True)
class TransformerFit:
    """:func:`learn_transformer`'s output: the FFN fit, the attention matrix ``A_hat``, and what its error
    analysis needs: the linear region's centre ``c``, gradient ``gamma``, radius ``rho`` and probe scale
    ``rho_p``, the probe probabilities ``P`` (d+1, d+1), margins ``margin`` (d+1,) (gamma^T of the unscaled
    directions) and the largest |answer| ``f_max`` of the probes."""
    relu: ReluFit
    A_hat: np.ndarray
    c: np.ndarray
    gamma: np.ndarray
    rho: float
    rho_p: float
    P: np.ndarray
    margin: np.ndarray
    f_max: float


def learn_transformer(oracle: Oracle, d: int, rng: np.random.Generator, **relu_kw: float) -> TransformerFit:
    """The reduction: learn T(X) = g(z(X)) with an FFN learner and the single-head probes.

    1. One-token queries return g itself (T([x]) = g(x)): run :func:`learn_relu` on them.
    2. Choose a centre c (the deepest of 32 random points); the learnt hyperplanes give the radius
       rho = min_j |n_j^T c + b_j| of a ball on which
       g is affine with gradient gamma = sum_{j active at c} a_j n_j. Tokens in the ball give z in the ball,
       so there T(X) = g(q) + gamma^T (z - q), and the two-token probe [q + w; q] reads
       p = sigma(q^T A w) = (T([q + w; q]) - T([q])) / (T([q + w]) - T([q])) (Lemma 1 with u = gamma; the
       two one-token queries read g(q) and gamma^T w exactly, so the FFN fit only places the ball).
    3. With q_a = c + rho' e_a (a = 0..d, e_0 = 0) and w = rho' v0, rho' (v0 + e_b) (Algorithm 1's offset
       v0 for gamma), all tokens stay in the ball, and
       A_ab = [(D(q_a, rho'(v0+e_b)) - D(q_a, rho' v0)) - (same at q_0)] / rho'^2.
    """
    d = check_positive_int("d", d)
    relu = learn_relu(lambda X: oracle(np.asarray(X)[..., None, :]), d, rng, **relu_kw)
    # the centre: of 32 random points, the one deepest inside its linear region (gradient nonzero)
    C = rng.standard_normal((32, d))
    pre_all = C @ relu.W.T + relu.b                                        # (32, h)
    grads = (relu.a * (pre_all > 0)) @ relu.W                              # (32, d)
    depth = np.where(np.linalg.norm(grads, axis=1) > 0, np.min(np.abs(pre_all), axis=1), -1.0)
    i = int(np.argmax(depth))
    if depth[i] <= 0:
        raise RuntimeError("no linear region with a nonzero gradient found")
    c, gamma, rho = C[i], grads[i], float(depth[i])
    kappa = 1.0 + float(np.max(np.abs(gamma)))
    v0 = kappa * gamma / float(gamma @ gamma)
    dirs = np.vstack([v0, v0 + np.eye(d)])                                # (d+1, d): v0, v0 + e_b
    rho_p = rho / (2.0 * (2.0 + float(np.linalg.norm(v0))))
    Q = c + rho_p * np.vstack([np.zeros(d), np.eye(d)])                   # (d+1, d): q_0 = c, q_a
    X = np.empty((d + 1, d + 1, 2, d))
    X[:, :, 0, :] = Q[:, None, :] + rho_p * dirs[None, :, :]
    X[:, :, 1, :] = Q[:, None, :]
    y = oracle(X)
    # g(q) and g(q + rho' w) - g(q) = rho' gamma^T w read off one-token queries (exact on the ball)
    g_q = oracle(Q[:, None, :])
    g_qw = oracle(X[:, :, 0, None, :])
    step = g_qw - g_q[:, None]
    margin = dirs @ gamma
    P = (y - g_q[:, None]) / step
    Dm = logit(P)
    M = Dm[:, 1:] - Dm[:, :1]                                             # rho' q_a^T A e_b
    A_hat = (M[1:] - M[:1]) / rho_p**2
    f_max = float(max(np.max(np.abs(y)), np.max(np.abs(g_qw)), np.max(np.abs(g_q))))
    return TransformerFit(relu, A_hat, c, gamma, rho, rho_p, P, margin, f_max)


# --------------------------------------------------------------------------------------------------
# The learners' query plans (counts by construction: unit-tested against the oracles' counters)
# --------------------------------------------------------------------------------------------------


def query_count_full(d: int) -> int:
    """Theorem 1's query count d + d (d + 1) = d^2 + 2d."""
    d = check_int("d", d, low=1)
    return d * d + 2 * d


def query_count_low_rank(d: int, k: int) -> int:
    """Theorem 2's query count d + d (k + 1) + k (d - k + 1) (= r(2d - r) + 2d + r at k = r < d)."""
    d = check_int("d", d, low=1)
    k = check_int("k", k, low=1)
    if k > d:
        raise ValueError(f"k = {k} must be <= d = {d}")
    return d + d * (k + 1) + (k * (d - k + 1) if k < d else 0)


def noisy_query_count(d: int, n_list: list[int] | tuple[int, ...], R: int) -> int:
    """R independent learners per n, each query asked n times: R (d^2 + 2d) sum(n) oracle calls."""
    return check_int("R", R, low=1) * query_count_full(d) * sum(int(n) for n in n_list)


def probe_query_count(d: int, m: int) -> int:
    """d value queries and one two-token query per rank-one probe: d + m."""
    return check_int("d", d, low=1) + check_int("m", m, low=1)
