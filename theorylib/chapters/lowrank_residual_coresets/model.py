"""The model of chapter 'lowrank-residual-coresets': embeddings, row selection, losses, estimators.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``. The estimators see the losses only through a
:class:`LossOracle`, which counts the points it was asked about.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from theorylib.core.validation import (
    check_array,
    check_int,
    check_positive_int,
    check_real,
)

ENUM_LIMIT = 1_000_000  # largest number of k-subsets enumerated exactly
SMALL_SPECTRUM = (3.0, 2.5, 2.0, 0.6, 0.5, 0.4, 0.3, 0.2)  # singular values of the enumeration matrix
LOSS_OFFSET = 2.0  # the constant of the linear loss 2 + <w, a>
LOSS_SLOPE = 0.25  # |w| of the linear loss
ANGULAR_LAMBDA = 0.5  # the angular loss has |e_i| = zeta_i r_i^2 / 2 <= r_i^2 / 2


# --------------------------------------------------------------------------------------------------
# matrices


def small_matrix(n: int, rng: np.random.Generator) -> np.ndarray:
    """A = U diag(SMALL_SPECTRUM) V^T, U (n x 8) with orthonormal columns, V (8 x 8) orthogonal (Haar)."""
    d = len(SMALL_SPECTRUM)
    n = check_int("n", n, low=d)
    U, _ = np.linalg.qr(rng.standard_normal((n, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return U @ np.diag(SMALL_SPECTRUM) @ V.T


def signal_spectrum(k: int, kind: str) -> np.ndarray:
    """The k signal scales: 'linear' from 5 down to 2, 'geometric' 5 * 0.6^j."""
    k = check_positive_int("k", k)
    if kind == "linear":
        return np.linspace(5.0, 2.0, k) if k > 1 else np.array([5.0])
    if kind == "geometric":
        return 5.0 * 0.6 ** np.arange(k)
    raise ValueError(f"spectrum = {kind!r} must be 'linear' or 'geometric'")


@dataclass(frozen=True)
class Instance:
    """The random parts of the embedding model A = G B + nu E (plus a bias column), shared by every nu."""

    G: np.ndarray  # (n, k) standard normal factors
    B: np.ndarray  # (k, d) orthonormal rows scaled by the signal spectrum
    E: np.ndarray  # (n, d) standard normal noise
    w: np.ndarray  # (d,) the direction of the linear loss, |w| = LOSS_SLOPE
    zeta: np.ndarray  # (n,) U(0, 1) curvatures of the constructed loss

    @property
    def n(self) -> int:
        return self.G.shape[0]


def make_instance(n: int, d: int, k: int, spectrum: str, rng: np.random.Generator) -> Instance:
    """Draw G, B, E, w and zeta once; :func:`embeddings` then varies only the noise level."""
    n, d, k = check_positive_int("n", n), check_positive_int("d", d), check_positive_int("k", k)
    if k >= d:
        raise ValueError(f"k = {k} must be smaller than d = {d}")
    scales = signal_spectrum(k, spectrum)
    Q, _ = np.linalg.qr(rng.standard_normal((d, k)))
    B = scales[:, None] * Q.T
    G = rng.standard_normal((n, k))
    E = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    w = LOSS_SLOPE * u / np.linalg.norm(u)
    zeta = rng.uniform(0.0, 1.0, n)
    return Instance(G, B, E, w, zeta)


def embeddings(inst: Instance, noise: float) -> np.ndarray:
    """The rows a_i = (G B + nu E)_i with the bias coordinate 1 appended: an (n, d + 1) matrix."""
    noise = check_real("noise", noise, low=0.0)
    X = inst.G @ inst.B + noise * inst.E
    return np.hstack([X, np.ones((inst.n, 1))])


def squared_singular_values(A: np.ndarray) -> np.ndarray:
    """sigma_1^2 >= sigma_2^2 >= ... of A."""
    return np.linalg.svd(check_array("A", A, ndim=2), compute_uv=False) ** 2


def tail_energy(A: np.ndarray, k: int) -> float:
    """Phi_k = sum_{i > k} sigma_i^2 = |A - A_k|_F^2 (by the SVD)."""
    s2 = squared_singular_values(A)
    k = check_int("k", k, low=0, high=s2.size)
    return float(s2[k:].sum())


# --------------------------------------------------------------------------------------------------
# projections onto the span of a row subset


def residual_norms(A: np.ndarray, T: np.ndarray) -> np.ndarray:
    """r_i = |a_i - pi_T(a_i)| for every row (QR of A_T^T); exactly 0 on T."""
    A = check_array("A", A, ndim=2)
    T = np.asarray(T, dtype=int)
    if T.size == 0:
        return np.linalg.norm(A, axis=1)
    Q, _ = np.linalg.qr(A[T].T)
    R = A - (A @ Q) @ Q.T
    r = np.linalg.norm(R, axis=1)
    r[T] = 0.0
    return r


def projection_coefficients(A: np.ndarray, T: np.ndarray) -> np.ndarray:
    """C = A A_T^+ (least squares), so that pi_T(a_i) = sum_j C_ij a_j; C[T] = I exactly."""
    A = check_array("A", A, ndim=2)
    T = np.asarray(T, dtype=int)
    if T.ndim != 1 or T.size == 0 or np.unique(T).size != T.size:
        raise ValueError("T must be a non-empty 1-D array of distinct row indices")
    X, *_ = np.linalg.lstsq(A[T].T, A.T, rcond=None)
    C = X.T.copy()
    C[T] = np.eye(T.size)
    return C


def enumerate_volume_sampling(A: np.ndarray, k: int) -> dict[str, float]:
    """Exact volume sampling over all k-subsets of rows, by enumeration.

    Returns ``gram_sum`` = sum_T det(A_T A_T^T), ``volume_mean`` = the det-weighted mean of
    |A - pi_T(A)|_F^2, and ``uniform_mean`` = its unweighted mean over the k-subsets.
    """
    A = check_array("A", A, ndim=2)
    n = A.shape[0]
    k = check_int("k", k, low=1, high=n - 1)
    if math.comb(n, k) > ENUM_LIMIT:
        raise ValueError(f"C({n}, {k}) = {math.comb(n, k)} subsets exceeds the enumeration limit {ENUM_LIMIT}")
    dets, costs = [], []
    for T in itertools.combinations(range(n), k):
        T = np.array(T)
        dets.append(np.linalg.det(A[T] @ A[T].T))
        costs.append(float(np.sum(residual_norms(A, T) ** 2)))
    dets, costs = np.array(dets), np.array(costs)
    return {"gram_sum": float(dets.sum()), "volume_mean": float(dets @ costs / dets.sum()),
            "uniform_mean": float(costs.mean())}


def residual_rows(A: np.ndarray, rounds: int, s: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive (residual) sampling: ``rounds`` rounds of s i.i.d. rows with p_i ~ r_i^2.

    Each round draws with replacement from the residuals of the current span (rows already chosen
    have residual 0, hence probability 0) and adds the distinct rows drawn. Returns the sorted row
    set T and the residual norms before each round and after the last, shape (rounds + 1, n).
    """
    A = check_array("A", A, ndim=2)
    rounds, s = check_positive_int("rounds", rounds), check_positive_int("s", s)
    T = np.array([], dtype=int)
    history = [residual_norms(A, T)]
    for _ in range(rounds):
        p = history[-1] ** 2
        idx = draw_indices(p / p.sum(), s, 1, rng)[0]
        T = np.union1d(T, idx)
        history.append(residual_norms(A, T))
    return T, np.array(history)


# --------------------------------------------------------------------------------------------------
# losses


def linear_loss(A: np.ndarray, w: np.ndarray) -> np.ndarray:
    """l_i = 2 + <w, a_i> = <(w, 2), (a_i, 1)> on bias-augmented rows: exactly linear in the row."""
    return A @ np.append(w, LOSS_OFFSET)


def constructed_loss(ell0: np.ndarray, C: np.ndarray, T: np.ndarray, r: np.ndarray, zeta: np.ndarray
                     ) -> np.ndarray:
    """l_i = (C l0_T)_i + zeta_i r_i^2 / 2: made *after* T, its residual e_i = zeta_i r_i^2 / 2 in [0, r_i^2/2]."""
    ell = C @ ell0[T] + ANGULAR_LAMBDA * zeta * r**2
    ell[T] = ell0[T]
    return ell


@dataclass
class LossOracle:
    """Per-point losses, revealed one point at a time; ``queried`` is the set of points asked for."""

    values: np.ndarray
    queried: set[int] = field(default_factory=set)

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=int)
        self.queried.update(np.unique(idx).tolist())
        return self.values[idx]


# --------------------------------------------------------------------------------------------------
# sampling and estimators


def sampling_probabilities(q: np.ndarray) -> np.ndarray:
    """p_i = q_i / sum q, exactly 0 where q_i = 0 (q >= 0, not all 0)."""
    q = check_array("q", q, ndim=1)
    if np.any(q < 0) or not np.any(q > 0):
        raise ValueError("q must be >= 0 with at least one positive entry")
    return q / q.sum()


def draw_indices(p: np.ndarray, m: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, m) i.i.d. indices with P(i) = p_i (inverse CDF; an index with p_i = 0 is never drawn)."""
    p = check_array("p", p, ndim=1)
    m, reps = check_positive_int("m", m), check_positive_int("reps", reps)
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    u = rng.random((reps, m))
    idx = np.searchsorted(cdf, u, side="right")
    return np.minimum(idx, p.size - 1)


def residual_sampling_estimate(ell_T: np.ndarray, query: LossOracle, C: np.ndarray, q: np.ndarray, m: int,
                               reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` independent copies of the residual-sampling estimate, and the (reps, m) indices drawn.

    mu_hat = (1/n) sum_i (C l_T)_i + (1/m) sum_t e_{i_t} / (n p_{i_t}), e_i = l_i - (C l_T)_i, p ~ q.
    The losses are read only at the sampled points (through ``query``) and on T (``ell_T``).
    """
    n = C.shape[0]
    interp = C @ np.asarray(ell_T, dtype=float)
    p = sampling_probabilities(q)
    idx = draw_indices(p, m, reps, rng)
    e = query(idx) - interp[idx]
    return interp.mean() + (e / (n * p[idx])).mean(axis=1), idx


def sensitivity_estimate(ell_T: np.ndarray, query: LossOracle, C: np.ndarray, q: np.ndarray, lam: float,
                         m: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """Sensitivity sampling: p_i ~ |(C l_T)_i| + lam q_i and mu_tilde = (1/m) sum_t l_{i_t} / (n p_{i_t})."""
    n = C.shape[0]
    lam = check_real("lam", lam, low=0.0)
    p = sampling_probabilities(np.abs(C @ np.asarray(ell_T, dtype=float)) + lam * np.asarray(q, dtype=float))
    idx = draw_indices(p, m, reps, rng)
    return (query(idx) / (n * p[idx])).mean(axis=1)


def sensitivity_probabilities(ell_T: np.ndarray, C: np.ndarray, q: np.ndarray, lam: float) -> np.ndarray:
    """The sampling law of :func:`sensitivity_estimate`."""
    return sampling_probabilities(np.abs(C @ np.asarray(ell_T, dtype=float)) + lam * np.asarray(q, dtype=float))


def uniform_estimate(query: LossOracle, n: int, m: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """The plain mean of m losses at uniform i.i.d. points, ``reps`` times."""
    n = check_positive_int("n", n)
    idx = draw_indices(np.full(n, 1.0 / n), m, reps, rng)
    return query(idx).mean(axis=1)


def coreset_weights(C: np.ndarray, T: np.ndarray, idx: np.ndarray, p: np.ndarray, m: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The estimate as a weighted coreset: mu_hat = sum_{j in T} omega_j l_j + sum_t v_t l_{i_t}.

    omega_j = (1/n) sum_i C_ij - (1/(n m)) sum_t C_{i_t j} / p_{i_t}, v_t = 1 / (n m p_{i_t}).
    Returns (T, omega, idx, v).
    """
    n = C.shape[0]
    m = check_positive_int("m", m)
    idx = np.asarray(idx, dtype=int)
    v = 1.0 / (n * m * p[idx])
    omega = C.sum(axis=0) / n - (C[idx] * (v[:, None])).sum(axis=0)
    return np.asarray(T), omega, idx, v


def realized_lambda(e: np.ndarray, q: np.ndarray) -> float:
    """max_i |e_i| / q_i over the points with q_i > 0: the regularity constant the losses realize."""
    e, q = np.asarray(e, dtype=float), np.asarray(q, dtype=float)
    pos = q > 0
    return float(np.max(np.abs(e[pos]) / q[pos]))


# --------------------------------------------------------------------------------------------------
# one setting (a noise level) and its Monte-Carlo cells


@dataclass(frozen=True)
class EstimatorRun:
    """What one Monte-Carlo cell measured: the estimates and the exact ingredients of the prediction.

    ``est`` (reps,) estimates; ``mu`` the true mean loss; ``ell`` all losses; ``e`` the residuals
    l - C l_T; ``p`` the sampling law; ``q`` the residual weights r^z; ``lam`` the realized
    regularity constant; ``m`` the sample size; ``interp_mean`` = mean of C l_T.
    """

    est: np.ndarray
    mu: float
    ell: np.ndarray
    e: np.ndarray
    p: np.ndarray
    q: np.ndarray
    lam: float
    m: int
    interp_mean: float

    @property
    def err(self) -> np.ndarray:
        return self.est - self.mu



@dataclass(frozen=True)
class Setting:
    """One noise level: the embeddings, their tail energy, the selected rows and the two losses."""

    noise: float
    A: np.ndarray
    phi: float  # Phi_{k+1}: the bias makes the signal rank k + 1
    norm2: float  # |A|_F^2
    T: np.ndarray
    history: np.ndarray  # residual norms before each round and after the last
    C: np.ndarray
    ell_linear: np.ndarray  # z = 1: l = 2 + <w, a>
    ell_angular: np.ndarray  # z = 2: (C l_T)_i + zeta_i r_i^2 / 2, built after T

    @property
    def r(self) -> np.ndarray:
        return self.history[-1]

    def loss(self, z: int) -> np.ndarray:
        if z == 1:
            return self.ell_linear
        if z == 2:
            return self.ell_angular
        raise ValueError(f"z = {z!r} must be 1 or 2")


def build_setting(inst: Instance, noise: float, k: int, rounds: int, rng: np.random.Generator) -> Setting:
    """Embeddings at ``noise``, Phi_{k+1}, ``rounds`` rounds of 2 (k + 1) residual-sampled rows, the losses."""
    k = check_positive_int("k", k)
    A = embeddings(inst, noise)
    T, history = residual_rows(A, rounds, 2 * (k + 1), rng)
    C = projection_coefficients(A, T)
    ell1 = linear_loss(A, inst.w)
    ell2 = constructed_loss(ell1, C, T, history[-1], inst.zeta)
    return Setting(float(noise), A, tail_energy(A, k + 1), float(np.sum(A**2)), T, history, C, ell1, ell2)


def residual_cell(st: Setting, z: int, m: int, reps: int, rng: np.random.Generator) -> EstimatorRun:
    """``reps`` residual-sampling estimates with q = r^z, and the exact ingredients of their law."""
    ell = st.loss(z)
    q = st.r**z
    oracle = LossOracle(ell)
    est, idx = residual_sampling_estimate(oracle(st.T), oracle, st.C, q, m, reps, rng)
    allowed = set(st.T.tolist()) | set(np.unique(idx).tolist())
    if not oracle.queried <= allowed:  # the estimator saw only T and the sampled points
        raise RuntimeError("the estimator read a loss outside T and its sample")
    interp = st.C @ ell[st.T]
    e = ell - interp
    return EstimatorRun(est, float(ell.mean()), ell, e, sampling_probabilities(q), q, realized_lambda(e, q),
                        int(m), float(interp.mean()))


def sensitivity_cell(st: Setting, m: int, reps: int, rng: np.random.Generator) -> EstimatorRun:
    """Sensitivity sampling of the angular loss (z = 2) with the realized regularity constant."""
    ell = st.ell_angular
    q = st.r**2
    interp = st.C @ ell[st.T]
    e = ell - interp
    lam = realized_lambda(e, q)
    oracle = LossOracle(ell)
    est = sensitivity_estimate(oracle(st.T), oracle, st.C, q, lam, m, reps, rng)
    p = sensitivity_probabilities(ell[st.T], st.C, q, lam)
    return EstimatorRun(est, float(ell.mean()), ell, e, p, q, lam, int(m), float(interp.mean()))


def uniform_cell(st: Setting, z: int, m: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``reps`` errors of the uniform-sampling mean of m losses."""
    ell = st.loss(z)
    return uniform_estimate(LossOracle(ell), ell.size, m, reps, rng) - float(ell.mean())
