"""The model of chapter 'invariant-subspace-rate': environments, samplers, the spectral estimator.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``. Every measured value of the chapter
(a subspace error, a success indicator, a sufficient statistic) comes from here.

The environments follow the label-induced shift model: in environment ``e``,
``Y ~ Unif{-1, +1}`` and ``X = Y (beta + Delta_e) + xi`` with ``xi ~ N(0, I_d)``
and ``sum_e Delta_e = 0``; the shifts span ``U`` (dimension ``r = d - k``) and
the invariant subspace is ``V = U^perp`` (dimension ``k``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorylib.core.repro import rng_for
from theorylib.core.validation import (
    check_array,
    check_int,
    check_positive,
    check_positive_int,
    check_real,
)

CHUNK = 4000  # replicates per batch: bounds the memory of one (chunk, d, m) draw

# The designs of the experiments (fixed in advance; none is computed from a prediction).
C1_GRID = (8, 11, 16, 23, 32, 45, 64, 90, 128, 180)  # n gamma^2 of C1
C2_N_GRID = (100, 200, 400, 800)  # n gamma^2 of the n-sweep of C2
C2_M_FACTORS = (1.1, 1.5, 2.0, 3.0, 4.0)  # m = round((d - k + 1) f) in the m-sweep of C2
C2_M_NGAMMA2 = 200  # n gamma^2 of the m-sweep
C2_GAMMA_GRID = (0.25, 0.35, 0.5, 0.7, 1.0)  # gamma of the gamma-sweep of C2
C2_GAMMA_N = 1600  # n of the gamma-sweep
C3_FACTORS = (0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15)  # f of the transition sweep of C3
WIDE_N = tuple(2**j for j in range(11))  # n of the wide sweep shown beside C3 (not a claim)
WIDE_REPS = 200  # replicates per point of the wide sweep
C4_SETTING = (6, 2, 8, 0.5, 50)  # d, k, m, gamma, n of the raw-sample check C4
C4_REPS = 2000  # data sets of C4
C5_GRID = (16, 32, 64, 128, 256)  # n gamma^2 (gamma^2 the smallest eigenvalue of C) of C5
C5_SPREAD = 4.0  # the spectrum of C in C5: gamma^2 4^(j / (r - 1)), j = 0..r-1 (outside M(gamma))


@dataclass(frozen=True)
class Instance:
    """One multi-environment problem: V (d, k), U (d, r) orthonormal, W = [w_1..w_m] (d, m), beta (d,)."""

    V: np.ndarray
    U: np.ndarray
    W: np.ndarray
    beta: np.ndarray

    @property
    def shifts(self) -> np.ndarray:
        """A = [Delta_1..Delta_m] = W - beta 1^T (d, m)."""
        return self.W - self.beta[:, None]


def _check_dims(d: int, k: int, m: int) -> tuple[int, int, int]:
    d = check_int("d", d, low=2)
    k = check_int("k", k, low=1, high=d - 1)
    m = check_int("m", m, low=d - k + 1)
    return d, k, m


def balanced_shift_design(m: int, r: int, gamma: float, rng: np.random.Generator) -> np.ndarray:
    """Z (m, r) with 1^T Z = 0 and Z^T Z = m gamma^2 I: a random balanced design (needs m >= r + 1)."""
    r = check_positive_int("r", r)
    m = check_int("m", m, low=r + 1)
    gamma = check_positive("gamma", gamma)
    G = rng.standard_normal((m, r))
    G -= G.mean(axis=0, keepdims=True)
    Q, _ = np.linalg.qr(G)
    return np.sqrt(m) * gamma * Q


def shift_design(m: int, c_eigs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Z (m, r) with 1^T Z = 0 and Z^T Z = m diag(c_eigs): a random design whose C has spectrum c_eigs."""
    c = check_array("c_eigs", c_eigs, ndim=1)
    if np.any(c <= 0):
        raise ValueError("c_eigs must be > 0")
    Q = balanced_shift_design(m, c.size, 1.0, rng) / np.sqrt(m)
    return np.sqrt(m * c) * Q


def random_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed d x d orthogonal matrix (QR with the sign fix)."""
    d = check_positive_int("d", d)
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def make_instance(d: int, k: int, m: int, gamma: float, rng: np.random.Generator,
                  beta_norm: float = 1.0, spread: float = 1.0) -> Instance:
    """A random rotation of a design: Delta_e = U z_e, beta in V with |beta| = beta_norm.

    spread = 1: the balanced design, C = gamma^2 P_U; spread > 1: C has the spectrum
    gamma^2 geomspace(1, spread, d - k) on U.
    """
    d, k, m = _check_dims(d, k, m)
    beta_norm = check_positive("beta_norm", beta_norm)
    spread = check_real("spread", spread, low=1.0)
    Q = random_orthogonal(d, rng)
    V, U = Q[:, :k], Q[:, k:]
    if spread == 1.0:
        Z = balanced_shift_design(m, d - k, gamma, rng)
    else:
        Z = shift_design(m, check_positive("gamma", gamma) ** 2 * np.geomspace(1, spread, d - k), rng)
    u = rng.standard_normal(k)
    beta = beta_norm * V @ (u / np.linalg.norm(u))
    W = beta[:, None] + U @ Z.T
    return Instance(V, U, W, beta)


def sample_sufficient_stats(W: np.ndarray, n: float, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps draws of [S_1..S_m] (reps, d, m), S_e ~ N(w_e, I/n) independent over e."""
    W = check_array("W", W, ndim=2)
    n = check_positive("n", n)
    reps = check_positive_int("reps", reps)
    return W + rng.standard_normal((reps, *W.shape)) / np.sqrt(n)


def sample_raw(w: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n raw samples of one environment: Y uniform on {-1, +1}, X = Y w + xi (X (n, d), Y (n,))."""
    w = check_array("w", w, ndim=1)
    n = check_positive_int("n", n)
    Y = rng.choice(np.array([-1.0, 1.0]), size=n)
    X = Y[:, None] * w + rng.standard_normal((n, w.size))
    return X, Y


def stats_from_raw(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """The sufficient statistic S = (1/n) sum_i Y_i X_i (d,) of one environment."""
    X = check_array("X", X, ndim=2)
    Y = check_array("Y", Y, shape=(X.shape[0],))
    return Y @ X / X.shape[0]


def spectral_invariant_subspace(S: np.ndarray, k: int) -> np.ndarray:
    """Batched estimator: center the columns of S (..., d, m), bottom-k eigenvectors of S S^T (..., d, k)."""
    S = check_array("S", S)
    if S.ndim < 2:
        raise ValueError(f"S must have shape (..., d, m); got {S.shape}")
    k = check_int("k", k, low=1, high=S.shape[-2] - 1)
    Sc = S - S.mean(axis=-1, keepdims=True)
    M = Sc @ np.swapaxes(Sc, -1, -2)
    _, vecs = np.linalg.eigh(M)
    return vecs[..., :k]


def invariance_objective(Q: np.ndarray, S: np.ndarray) -> float:
    """sum_e |Q^T (S_e - S_bar)|^2: the across-environment variance of the signal seen through Q (d, k)."""
    Q = check_array("Q", Q, ndim=2)
    S = check_array("S", S, ndim=2)
    Sc = S - S.mean(axis=1, keepdims=True)
    return float(np.sum((Q.T @ Sc) ** 2))


def subspace_dist2(V1: np.ndarray, V2: np.ndarray, atol: float = 1e-8) -> np.ndarray:
    """|sin Theta|_F^2 = k - |V1^T V2|_F^2 between the spans of orthonormal (..., d, k) frames."""
    V1, V2 = check_array("V1", V1), check_array("V2", V2)
    if V1.ndim < 2 or V1.shape[-2:] != V2.shape[-2:]:
        raise ValueError(f"V1 and V2 must be (..., d, k) frames of one shape; got {V1.shape}, {V2.shape}")
    k = V1.shape[-1]
    for name, Vx in (("V1", V1), ("V2", V2)):
        gram = np.swapaxes(Vx, -1, -2) @ Vx
        if not np.allclose(gram, np.eye(k), atol=atol):
            raise ValueError(f"{name} must have orthonormal columns")
    return k - np.sum((np.swapaxes(V1, -1, -2) @ V2) ** 2, axis=(-2, -1))


def spectral_errors(inst: Instance, n: float, reps: int, rng: np.random.Generator) -> np.ndarray:
    """dist^2(V_hat, V) of the spectral estimator over reps independent data sets (reps,)."""
    reps = check_positive_int("reps", reps)
    k = inst.V.shape[1]
    out = []
    for start in range(0, reps, CHUNK):
        S = sample_sufficient_stats(inst.W, n, min(CHUNK, reps - start), rng)
        out.append(subspace_dist2(spectral_invariant_subspace(S, k), inst.V))
    return np.concatenate(out)


def sample_size(n_gamma2: float, gamma: float) -> int:
    """The integer sample size n nearest to n_gamma2 / gamma^2 (at least 1)."""
    n_gamma2, gamma = check_positive("n_gamma2", n_gamma2), check_positive("gamma", gamma)
    return max(1, int(round(n_gamma2 / gamma**2)))


@dataclass(frozen=True)
class Sweep:
    """Spectral errors on a grid: the grid values, the sample sizes, and errors (reps, points)."""

    values: np.ndarray
    n: np.ndarray
    m: np.ndarray
    gamma: np.ndarray
    errors: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        return self.errors.mean(axis=0)

    @property
    def se(self) -> np.ndarray:
        return self.errors.std(axis=0, ddof=1) / np.sqrt(self.errors.shape[0])


def sweep_sizes(d: int, k: int, m: int, gamma: float, ns: list[int], reps: int, seed: int,
                stream: str) -> Sweep:
    """Errors at the sample sizes ns on one instance (stream ``stream``), one noise stream per point."""
    inst = make_instance(d, k, m, gamma, rng_for(seed, stream, "instance"))
    ns = np.array([check_positive_int("n", int(n)) for n in ns])
    errs = np.column_stack([spectral_errors(inst, int(n), reps, rng_for(seed, stream, str(i)))
                            for i, n in enumerate(ns)])
    return Sweep(ns.astype(float), ns, np.full(ns.size, m), np.full(ns.size, gamma), errs)


def sweep_unbalanced(d: int, k: int, m: int, gamma: float, n_gamma2: list[float], reps: int, seed: int,
                     stream: str, spread: float = 4.0) -> tuple[Sweep, np.ndarray]:
    """Errors on one unbalanced instance (C has spectrum gamma^2 geomspace(1, spread, r)) at n = n_gamma2 /
    gamma^2; also the measured nonzero spectrum of C = A A^T / m of that instance."""
    inst = make_instance(d, k, m, gamma, rng_for(seed, stream, "instance"), spread=spread)
    ns = np.array([sample_size(v, gamma) for v in n_gamma2])
    errs = np.column_stack([spectral_errors(inst, int(n), reps, rng_for(seed, stream, str(i)))
                            for i, n in enumerate(ns)])
    A = inst.shifts
    c_eigs = np.linalg.eigvalsh(A @ A.T / m)[k:]
    return Sweep(ns.astype(float), ns, np.full(ns.size, m), np.full(ns.size, gamma), errs), c_eigs


def sweep_n(d: int, k: int, m: int, gamma: float, n_gamma2: list[float], reps: int, seed: int,
            stream: str) -> Sweep:
    """:func:`sweep_sizes` at the integer n nearest to n_gamma2 / gamma^2 (values: those n)."""
    return sweep_sizes(d, k, m, gamma, [sample_size(v, gamma) for v in n_gamma2], reps, seed, stream)


def environment_grid(d: int, k: int) -> list[int]:
    """The m of the m-sweep: round((d - k + 1) f) for f in C2_M_FACTORS (all >= d - k + 1)."""
    r1 = check_positive_int("d - k + 1", d - k + 1)
    return [int(round(r1 * f)) for f in C2_M_FACTORS]


def sweep_m(d: int, k: int, ms: list[int], gamma: float, n_gamma2: float, reps: int, seed: int,
            stream: str) -> Sweep:
    """Errors at m in ms environments (a new instance per m), n = n_gamma2 / gamma^2."""
    n = sample_size(n_gamma2, gamma)
    errs = []
    for i, m in enumerate(ms):
        inst = make_instance(d, k, int(m), gamma, rng_for(seed, stream, "instance", str(i)))
        errs.append(spectral_errors(inst, n, reps, rng_for(seed, stream, str(i))))
    ms = np.asarray(ms, dtype=int)
    return Sweep(ms.astype(float), np.full(ms.size, n), ms, np.full(ms.size, gamma), np.column_stack(errs))


def sweep_gamma(d: int, k: int, m: int, gammas: list[float], n: int, reps: int, seed: int,
                stream: str) -> Sweep:
    """Errors at separation gamma in gammas (a new instance per gamma), n samples per environment."""
    n = check_positive_int("n", n)
    errs = []
    for i, g in enumerate(gammas):
        inst = make_instance(d, k, m, float(g), rng_for(seed, stream, "instance", str(i)))
        errs.append(spectral_errors(inst, n, reps, rng_for(seed, stream, str(i))))
    gs = np.asarray(gammas, dtype=float)
    return Sweep(gs, np.full(gs.size, n), np.full(gs.size, m), gs, np.column_stack(errs))


@dataclass(frozen=True)
class Transition:
    """Success indicators 1[dist^2 <= eps] at the sample sizes n (reps, points), with the grid factors f."""

    f: np.ndarray
    n: np.ndarray
    eps: float
    success: np.ndarray

    @property
    def p(self) -> np.ndarray:
        return self.success.mean(axis=0)


def transition_grid(d: int, k: int, m: int, gamma: float, eps: float, factors: list[float]) -> np.ndarray:
    """Integer sample sizes n = round(f k (d - k) / (m gamma^2 eps)) for the factors f (the design of the sweep)."""
    d, k, m = _check_dims(d, k, m)
    scale = k * (d - k) / (m * check_positive("gamma", gamma) ** 2 * check_positive("eps", eps))
    return np.array([max(1, int(round(f * scale))) for f in factors])


def transition(d: int, k: int, m: int, gamma: float, eps: float, factors: list[float], reps: int,
               seed: int, stream: str) -> Transition:
    """Success of the spectral estimator at the sample sizes of :func:`transition_grid`."""
    ns = transition_grid(d, k, m, gamma, eps, factors)
    inst = make_instance(d, k, m, gamma, rng_for(seed, stream, "instance"))
    succ = np.column_stack([spectral_errors(inst, int(n), reps, rng_for(seed, stream, str(i))) <= eps
                            for i, n in enumerate(ns)])
    return Transition(np.asarray(factors, float), ns, float(eps), succ.astype(float))


@dataclass(frozen=True)
class RawCheck:
    """Sufficient statistics computed from raw samples: S (reps, d, m), the truth W (d, m), n."""

    S: np.ndarray
    W: np.ndarray
    n: int


def raw_statistics(d: int, k: int, m: int, gamma: float, n: int, reps: int,
                   rng: np.random.Generator) -> RawCheck:
    """reps data sets of raw samples (n per environment) reduced to S_e = (1/n) sum_i Y_i X_i."""
    n, reps = check_positive_int("n", n), check_positive_int("reps", reps)
    inst = make_instance(d, k, m, gamma, rng)
    S = np.empty((reps, d, m))
    for e in range(m):
        Y = rng.choice(np.array([-1.0, 1.0]), size=(reps, n))
        X = Y[..., None] * inst.W[:, e] + rng.standard_normal((reps, n, d))
        S[:, :, e] = np.einsum("rn,rnd->rd", Y, X) / n
    return RawCheck(S, inst.W, n)
