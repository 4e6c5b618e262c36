"""The experiments of chapter 'attention-query-learning': every measured value of the claims C1-C7.

Each ``run_...`` runs a learner of :mod:`.model` against its oracle and returns what was measured (the
learner's output, the oracle's counter, errors under noise and adversaries). No tolerance and no
prediction is computed here, and nothing here imports the chapter's ``theory``: the claims
(:mod:`.claims`) read every prediction from the theory and every floating-point tolerance from
:mod:`.tolerances`.

Where an experiment needs the estimator's sensitivity to its answers (to condition the noise instances on
``max_ab ||J_ab||_1 <= J_max``, and for the adversaries of C4, which perturb each answer by ``tau`` times
the sign of its effect), it *measures* it, by central differences of the learner itself
(:func:`measured_jacobian`), never from the closed form that C3 and C4 test.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.rates import LogLogFit, fit_loglog
from theorylib.core.validation import check_int, check_positive, check_positive_int

from .model import (
    AdversarySchedule,
    GaussianNoiseOn,
    QueryOracle,
    SketchInfo,
    TransformerFit,
    TransformerOracle,
    attention_weights,
    bilinear_measurements,
    learn_full,
    learn_low_rank,
    learn_rank_one_probes,
    learn_transformer,
    learn_value_vector,
    margin_offset,
    multihead_jacobian,
    multihead_oracle,
    random_full_instance,
    relu_net,
)

# ---- C1: Theorem 1 -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class FullRun:
    """Algorithm 1 on one random instance of dimension d, with value-query amplitude s."""

    d: int
    A: np.ndarray
    u: np.ndarray
    A_hat: np.ndarray
    u_hat: np.ndarray
    n_queries: int
    s: float

    @property
    def max_err(self) -> float:
        """max(max_ab |A_hat - A|, max_j |u_hat - u|)."""
        return float(max(np.max(np.abs(self.A_hat - self.A)), np.max(np.abs(self.u_hat - self.u))))


def run_full(d: int, rng: np.random.Generator, *, A_scale: float, u_scale: float, s: float = 1.0) -> FullRun:
    """A fresh instance of dimension d and Algorithm 1 run against an exact counting oracle."""
    A, u = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
    oracle = QueryOracle(A, u)
    A_hat, u_hat = learn_full(oracle, d, s=s)
    return FullRun(d, A, u, A_hat, u_hat, oracle.n_queries, float(s))


# ---- C1-C2: Theorem 2 --------------------------------------------------------------------------------

@dataclass(frozen=True)
class SketchRun:
    """Algorithm 2 with sketch size k on one rank-r instance."""

    d: int
    r: int
    k: int
    A: np.ndarray
    u: np.ndarray
    A_hat: np.ndarray
    u_err: float
    n_queries: int
    info: SketchInfo

    @property
    def max_err(self) -> float:
        return float(max(np.max(np.abs(self.A_hat - self.A)), self.u_err))

    @property
    def rel_err(self) -> float:
        return float(np.linalg.norm(self.A_hat - self.A) / np.linalg.norm(self.A))


def run_sketch(A: np.ndarray, u: np.ndarray, r: int, k: int, rng: np.random.Generator) -> SketchRun:
    """Run :func:`~.model.learn_low_rank` with sketch size k; the learner's basis comes from ``rng``."""
    oracle = QueryOracle(A, u)
    A_hat, u_hat, info = learn_low_rank(oracle, u.size, k, rng)
    return SketchRun(u.size, int(r), int(k), A, u, A_hat, float(np.max(np.abs(u_hat - u))), oracle.n_queries,
                     info)


def run_sketches(A: np.ndarray, u: np.ndarray, r: int, rng: np.random.Generator) -> list[SketchRun]:
    """The sketch at every size k = 1, ..., 2r on one instance (the learners draw their bases from ``rng``)."""
    r = check_positive_int("r", r)
    return [run_sketch(A, u, r, k, rng) for k in range(1, 2 * r + 1)]


# ---- the dimension of the rank-r parameters (the lower bound of the Remark) ----------------------

@dataclass(frozen=True)
class TangentRank:
    """The measured rank of the differential of (U, V, u) -> (U V^T, u) at one random point.

    ``singular_values`` of the (d^2 + d) x (2 d r + d) Jacobian, ``tol`` the rank threshold (numpy's
    ``matrix_rank`` rule: s_1 max(shape) eps) and ``rank`` the number of singular values above it.
    """

    d: int
    r: int
    rank: int
    singular_values: np.ndarray
    tol: float

    @property
    def gap(self) -> tuple[float, float]:
        """(smallest singular value kept, largest dropped): how far the rank decision is from a tie."""
        S = self.singular_values
        return float(S[self.rank - 1]), float(S[self.rank]) if self.rank < S.size else 0.0


def parametrization_jacobian(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """d(vec(U V^T), u) / d(U, V, u), shape (d^2 + d, 2 d r + d): the tangent map of the rank-r parameters.

    d(U V^T) / dU_ij = e_i V_j^T and d(U V^T) / dV_ij = U_j e_i^T (U_j, V_j the j-th columns); u maps to itself.
    """
    d, r = U.shape
    eye = np.eye(d)
    JU = np.einsum("ai,bj->abij", eye, V).reshape(d * d, d * r)
    JV = np.einsum("aj,bi->abij", U, eye).reshape(d * d, d * r)
    top = np.concatenate([JU, JV, np.zeros((d * d, d))], axis=1)
    bottom = np.concatenate([np.zeros((d, 2 * d * r)), eye], axis=1)
    return np.concatenate([top, bottom], axis=0)


def tangent_rank(d: int, r: int, rng: np.random.Generator) -> TangentRank:
    """The dimension of {(A, u): rank A = r}, measured as the numerical rank of the tangent map
    :func:`parametrization_jacobian` at Gaussian factors U, V (d x r)."""
    d = check_positive_int("d", d)
    r = check_int("r", r, low=1, high=d)
    U, V = rng.standard_normal((d, r)), rng.standard_normal((d, r))
    J = parametrization_jacobian(U, V)
    S = np.linalg.svd(J, compute_uv=False)
    tol = float(S[0] * max(J.shape) * np.finfo(float).eps)
    return TangentRank(d, r, int(np.sum(S > tol)), S, tol)


# ---- the measured sensitivity of Algorithm 1 to its answers ------------------------------------------

def run_adversaries(A: np.ndarray, u: np.ndarray, schedules: Sequence[Sequence[np.ndarray]],
                    s: float = 1.0) -> np.ndarray:
    """A_hat - A for a batch of adversaries (one learner copy each, batched in one oracle call per stage).

    A schedule for Algorithm 1 with repeats = 1 is [value-query errors (d,), bilinear-query errors (d, d + 1)]
    (column 0 = base queries, column b + 1 = direction e_b).
    """
    batch = (len(schedules),)
    stacked = [np.stack([np.broadcast_to(sch[t], schedules[0][t].shape) for sch in schedules])[None]
               for t in range(2)]
    oracle = QueryOracle(A, u, noise=AdversarySchedule(stacked))
    A_hat, _ = learn_full(oracle, u.size, s=s, batch=batch)
    return A_hat - A


@dataclass(frozen=True)
class MeasuredJacobian:
    """Central differences of Algorithm 1's A_hat_ab in the answers it depends on.

    A_hat_ab depends only on the d value queries (``value[a, b]``, shape (d,)), on row a's base query
    (``base[a, b]``) and on probe (a, b) (``probe[a, b]``); every other answer leaves it bit for bit unchanged.
    """

    value: np.ndarray      # (d, d, d)
    base: np.ndarray       # (d, d)
    probe: np.ndarray      # (d, d)
    h: float

    def l1(self) -> np.ndarray:
        """The measured ||J_ab||_1, shape (d, d)."""
        return np.abs(self.probe) + np.abs(self.base) + np.abs(self.value).sum(-1)

    def sign_schedule(self, a: int, b: int, tau: float) -> list[np.ndarray]:
        """The adversary tau sign(J_ab) on exactly the answers entry (a, b) depends on (zero elsewhere)."""
        d = self.probe.shape[0]
        xi_m = np.zeros((d, d + 1))
        xi_m[a, 0] = tau * np.sign(self.base[a, b])
        xi_m[a, b + 1] = tau * np.sign(self.probe[a, b])
        return [tau * np.sign(self.value[a, b]), xi_m]


def measured_jacobian(A: np.ndarray, u: np.ndarray, *, h: float = 1e-6, s: float = 1.0) -> MeasuredJacobian:
    """d A_hat / d xi by central differences of Algorithm 1 (2 (d + d(d + 1)) learner runs in one batch)."""
    h = check_positive("h", h)
    d = u.size
    m = d + d * (d + 1)
    schedules = []
    for sign in (1.0, -1.0):
        for i in range(m):
            e = np.zeros(m)
            e[i] = sign * h
            schedules.append([e[:d], e[d:].reshape(d, d + 1)])
    err = run_adversaries(A, u, schedules, s=s).reshape(2, m, d, d)
    fd = (err[0] - err[1]) / (2 * h)                                   # (m, d, d): d A_hat_ab / d xi_i
    rows = d + np.arange(d)[:, None] * (d + 1)                         # index of row a's base query
    aa, bb = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    return MeasuredJacobian(np.moveaxis(fd[:d], 0, -1), fd[rows, aa, bb], fd[rows + bb + 1, aa, bb], h)


def conditioned_full_instance(d: int, rng: np.random.Generator, *, J_max: float, A_scale: float = 2.0,
                              u_scale: float = 1.0, s: float = 1.0, max_tries: int = 1000
                              ) -> tuple[np.ndarray, np.ndarray]:
    """(A, u) from :func:`~.model.random_full_instance` conditioned on max_ab ||J_ab||_1 <= J_max.

    Rejection sampling on the *measured* ||J_ab||_1 (:func:`measured_jacobian`, with the value-query
    amplitude s the experiment uses); an instance on which the exact learner itself cannot run (a probe
    probability that rounds to 0 or 1) is rejected too. This is the instance of C3 and C4: Theorem 3 is a
    first-order statement, and its "norm and margin conditions" are what keeps ||J||_1, and with it
    sigma ||J||_1, small.
    """
    J_max = check_positive("J_max", J_max)
    max_tries = check_int("max_tries", max_tries, low=1)
    for _ in range(max_tries):
        A, u = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
        try:
            l1 = measured_jacobian(A, u, s=s).l1()
        except ValueError:
            continue
        if np.max(l1) <= J_max:
            return A, u
    raise ValueError(f"no instance with max ||J_ab||_1 <= J_max = {J_max} in {max_tries} draws: raise J_max "
                     "or lower A_scale")


# ---- C3: i.i.d. noise --------------------------------------------------------------------------------

@dataclass(frozen=True)
class NoiseRun:
    """Algorithm 1 under i.i.d. N(0, sigma^2) output noise, R replicates per repeat count n."""

    A: np.ndarray
    u: np.ndarray
    sigma: float
    s: float
    n_list: tuple[int, ...]
    sq_err: np.ndarray            # (R, len(n_list)): ||A_hat - A||_F^2 per replicate
    n_queries: int                # the oracle's counter after all runs
    source: str = "all"           # which answers are noisy: "all", "values" (one-token) or "probes" (two-token)

    @property
    def R(self) -> int:
        return self.sq_err.shape[0]

    def mse(self) -> np.ndarray:
        return self.sq_err.mean(axis=0)

    def mse_se(self) -> np.ndarray:
        return self.sq_err.std(axis=0, ddof=1) / math.sqrt(self.R)


NOISE_SOURCES = {"values": 1, "probes": 2}   # the queries' number of tokens


def run_noise(A: np.ndarray, u: np.ndarray, sigma: float, n_list: Sequence[int], R: int,
              rng: np.random.Generator, *, s: float = 1.0, source: str = "all") -> NoiseRun:
    """R independent runs of Algorithm 1 per n (one batched call per stage), each query asked n times.

    ``source="all"``: every answer is noisy; ``"values"`` or ``"probes"``: only the answers to the value
    queries (one token) or to the two-token probes (:class:`~.model.GaussianNoiseOn`).
    """
    R = check_int("R", R, low=2)
    if source == "all":
        oracle = QueryOracle(A, u, noise="gaussian", sigma=sigma, rng=rng)
    elif source in NOISE_SOURCES:
        oracle = QueryOracle(A, u, noise=GaussianNoiseOn(sigma, rng, NOISE_SOURCES[source]))
    else:
        raise ValueError(f"source must be 'all', 'values' or 'probes', got {source!r}")
    cols = []
    for n in n_list:
        A_hat, _ = learn_full(oracle, u.size, s=s, repeats=int(n), batch=(R,))
        cols.append(np.sum((A_hat - A) ** 2, axis=(-2, -1)))
    return NoiseRun(A, u, float(sigma), float(s), tuple(int(n) for n in n_list), np.stack(cols, axis=1),
                    oracle.n_queries, source)


def rms_rate_fit(run: NoiseRun, rng: np.random.Generator) -> LogLogFit:
    """Log-log fit of the mean squared error against n with a bootstrap over replicates (columns independent).

    The RMS exponent is half the fitted MSE exponent, and so is its SE.
    """
    return fit_loglog(np.asarray(run.n_list, dtype=float), replicates=run.sq_err, paired=False, rng=rng)


# ---- C4: adversarial noise ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AdversaryRun:
    """Worst-entry and random-sign adversaries on one instance (Algorithm 1, value-query amplitude s)."""

    A: np.ndarray
    u: np.ndarray
    s: float
    J: MeasuredJacobian
    worst: tuple[int, int]
    taus: np.ndarray
    err_plus: np.ndarray          # (len(taus),): A_hat - A at the worst entry, adversary +tau sign(J)
    err_minus: np.ndarray         # same with -tau sign(J)
    tau_adv: float
    kappa: np.ndarray             # (d, d): per-entry second-order coefficient at tau_adv
    random_err: np.ndarray        # (n_adv, d, d): errors under random-sign adversaries at tau_adv

    @property
    def odd_slope(self) -> np.ndarray:
        """(err(+tau) - err(-tau)) / (2 tau) = ||J||_1 + O(tau^2): the first-order coefficient."""
        return (self.err_plus - self.err_minus) / (2 * self.taus)

    @property
    def kappa_worst(self) -> np.ndarray:
        """The worst entry's second-order coefficient at each tau: the even part over tau^2 times the odd part."""
        return _kappa(self.err_plus, self.err_minus, self.taus)


def _kappa(e_plus: np.ndarray, e_minus: np.ndarray, tau: np.ndarray | float) -> np.ndarray:
    """kappa = g2 / g1 from g(+tau) = g1 tau + g2 tau^2 + ..., g(-tau): (e+ + e-) / (tau (e+ - e-))."""
    return (e_plus + e_minus) / (tau * (e_plus - e_minus))


def run_adversarial(A: np.ndarray, u: np.ndarray, taus: Sequence[float], tau_adv: float, n_adv: int,
                    rng: np.random.Generator, *, s: float = 1.0) -> AdversaryRun:
    """Adversaries against Algorithm 1 (Theorem 3(1)), built from the learner's measured sensitivity.

    Worst entry (a*, b*) = argmax of the measured ||J_ab||_1: the adversaries +-tau sign(J_a*b*) at each tau.
    At tau_adv: for every entry the two adversaries +-tau sign(J_ab), whose even part gives the per-entry
    second-order coefficient kappa_ab, and n_adv adversaries with i.i.d. random signs on every query.
    The learner asks its value queries with amplitude s.
    """
    tau_adv = check_positive("tau_adv", tau_adv)
    n_adv = check_positive_int("n_adv", n_adv)
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or np.any(~(taus > 0)):
        raise ValueError("taus must be a non-empty list of positive tolerances")
    s = check_positive("amplitude s", s)
    J = measured_jacobian(A, u, s=s)
    d = u.size
    L1 = J.l1()
    a, b = np.unravel_index(int(np.argmax(L1)), L1.shape)
    sched = [J.sign_schedule(a, b, sg * t) for sg in (1.0, -1.0) for t in taus]
    err = run_adversaries(A, u, sched, s=s)[:, a, b].reshape(2, taus.size)
    pm = [J.sign_schedule(i, j, sg * tau_adv) for sg in (1.0, -1.0) for i in range(d) for j in range(d)]
    e_pm = run_adversaries(A, u, pm, s=s).reshape(2, d, d, d, d)
    ii, jj = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    kappa = _kappa(e_pm[0][ii, jj, ii, jj], e_pm[1][ii, jj, ii, jj], tau_adv)
    signs = rng.choice([-1.0, 1.0], size=(n_adv, d + d * (d + 1)))
    rand = [[tau_adv * sg[:d], tau_adv * sg[d:].reshape(d, d + 1)] for sg in signs]
    random_err = run_adversaries(A, u, rand, s=s)
    return AdversaryRun(A, u, float(s), J, (int(a), int(b)), taus, err[0], err[1], tau_adv, kappa, random_err)


# ---- C4c: the learner's finite-tau certificate --------------------------------------------------------

@dataclass(frozen=True)
class CertificateRun:
    """Adversaries with tolerances ``tau`` (one per learner copy) against Algorithm 1, with what the learner
    saw: its value vector ``u_hat`` (n, d) and its probes ``D`` (n, d, d + 1; column 0 the base query), and
    its errors ``err`` = A_hat - A (n, d, d). ``A``, ``u``, ``s``: the instance and the amplitude."""

    A: np.ndarray
    u: np.ndarray
    s: float
    tau: np.ndarray
    u_hat: np.ndarray
    D: np.ndarray
    err: np.ndarray


def run_certificates(A: np.ndarray, u: np.ndarray, J: MeasuredJacobian, taus: Sequence[float], n_random: int,
                     rng: np.random.Generator, *, s: float = 1.0) -> CertificateRun:
    """At every tau: the adversaries +-tau sign(J_ab) of every entry (d^2 pairs, from the *measured*
    sensitivity J) and ``n_random`` adversaries with i.i.d. random signs on every answer."""
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or np.any(~(taus > 0)):
        raise ValueError("taus must be a non-empty list of positive tolerances")
    n_random = check_int("n_random", n_random, low=0)
    d = u.size
    schedules, tau_of = [], []
    for t in taus:
        for sg in (1.0, -1.0):
            schedules += [J.sign_schedule(a, b, sg * t) for a in range(d) for b in range(d)]
        for signs in rng.choice([-1.0, 1.0], size=(n_random, d + d * (d + 1))):
            schedules.append([t * signs[:d], t * signs[d:].reshape(d, d + 1)])
        tau_of += [t] * (2 * d * d + n_random)
    batch = (len(schedules),)
    stacked = [np.stack([np.broadcast_to(sch[k], schedules[0][k].shape) for sch in schedules])[None]
               for k in range(2)]
    oracle = QueryOracle(A, u, noise=AdversarySchedule(stacked))
    u_hat = learn_value_vector(oracle, d, s=s, batch=batch)
    eye = np.eye(d)
    D = bilinear_measurements(oracle, u_hat, eye, eye, raw=True)
    return CertificateRun(A, u, float(s), np.asarray(tau_of), u_hat, D, D[..., 1:] - D[..., :1] - A)


@dataclass(frozen=True)
class ProbeCertificateRun:
    """One adversary per probe (a, k) of Algorithm 1 and tolerance (column k = 0: row a's base query), with what
    the learner saw (``u_hat`` (n, d), ``D`` (n, d, d + 1)) and the probe's logit error ``err`` (n,):
    D_ak - e_a^T A w_k, w_k the learner's own direction (v0_hat, v0_hat + e_b), so e_a^T A w_k = logit p."""

    A: np.ndarray
    u: np.ndarray
    s: float
    tau: np.ndarray
    probe: np.ndarray             # (n, 2): (a, k) of the probe each adversary targets
    u_hat: np.ndarray
    D: np.ndarray
    err: np.ndarray


def run_probe_certificates(A: np.ndarray, u: np.ndarray, taus: Sequence[float], *,
                           s: float = 1.0) -> ProbeCertificateRun:
    """At every tau, for every probe (a, k) of Algorithm 1, the two adversaries that move its computed
    probability P = p + (xi - delta^T (e_a + p w)) / m furthest (Lemma 1's algebra, delta = u_hat - u): probe
    error -g tau, value-query errors g tau sign(e_a + p w) (so delta = g (tau/s) sign(e_a + p w)), g = +-1, with
    p and w at the noiseless design; every other answer exact. The learner is run on each (one batch)."""
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or np.any(~(taus > 0)):
        raise ValueError("taus must be a non-empty list of positive tolerances")
    s = check_positive("amplitude s", s)
    d = u.size
    v0, _ = margin_offset(u, np.eye(d))
    dirs = v0[None, :] + np.concatenate([np.zeros((1, d)), np.eye(d)])           # (d + 1, d)
    p = 0.5 * (1.0 + np.tanh(0.5 * (A @ dirs.T)))                                # (d, d + 1)
    schedules, meta = [], []
    for t in taus:
        for g in (1.0, -1.0):
            for a in range(d):
                for k in range(d + 1):
                    xi_m = np.zeros((d, d + 1))
                    xi_m[a, k] = -g * t
                    schedules.append([g * t * np.sign(np.eye(d)[a] + p[a, k] * dirs[k]), xi_m])
                    meta.append((t, a, k))
    batch = (len(schedules),)
    stacked = [np.stack([sch[j] for sch in schedules])[None] for j in range(2)]
    oracle = QueryOracle(A, u, noise=AdversarySchedule(stacked))
    u_hat = learn_value_vector(oracle, d, s=s, batch=batch)
    eye = np.eye(d)
    D = bilinear_measurements(oracle, u_hat, eye, eye, raw=True)
    v0_hat, _ = margin_offset(u_hat, eye)
    dirs_hat = v0_hat[:, None, :] + np.concatenate([np.zeros((1, d)), eye])[None]  # (n, d + 1, d)
    idx = np.asarray([(a, k) for _, a, k in meta])
    n = np.arange(len(meta))
    logit_p = np.einsum("nb,nb->n", A[idx[:, 0]], dirs_hat[n, idx[:, 1]])
    err = D[n, idx[:, 0], idx[:, 1]] - logit_p
    return ProbeCertificateRun(A, u, float(s), np.asarray([m[0] for m in meta]), idx, u_hat, D, err)


# ---- Proposition 4 (unit-tested): multi-head --------------------------------------------------------

@dataclass(frozen=True)
class TwoHeads:
    """A two-head model ((A, A), (u1, u2)) with shared attention and a shift w _|_ u1 - u2."""

    A: np.ndarray
    u1: np.ndarray
    u2: np.ndarray
    w: np.ndarray

    @property
    def theta(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        return (self.A, self.A), (self.u1, self.u2)


def orthogonal_shift(u1: np.ndarray, u2: np.ndarray, norm: float, rng: np.random.Generator) -> np.ndarray:
    """A random w with w . (u1 - u2) = 0 and ||w|| = norm."""
    g = rng.standard_normal(u1.size)
    e = u1 - u2
    if np.any(e != 0):
        g = g - (g @ e) / (e @ e) * e
    return norm * g / np.linalg.norm(g)


def random_two_heads(d: int, w_norm: float, rng: np.random.Generator, *, A_scale: float = 2.0,
                     u_scale: float = 1.0) -> TwoHeads:
    """A ~ N(0, A_scale^2/d) entries, u1, u2 ~ N(0, u_scale^2 I/d), w _|_ u1 - u2 with ||w|| = w_norm."""
    A, u1 = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
    u2 = rng.standard_normal(d) * (u_scale / math.sqrt(d))
    return TwoHeads(A, u1, u2, orthogonal_shift(u1, u2, w_norm, rng))


def random_sequences(n: int, L_max: int, d: int, rng: np.random.Generator) -> list[np.ndarray]:
    """n sequences with lengths uniform in 1..L_max and N(0, I) tokens, grouped by length:
    a list whose entry L - 1 has shape (n_L, L, d)."""
    n = check_positive_int("n", n)
    L_max = check_positive_int("L_max", L_max)
    lengths = rng.integers(1, L_max + 1, size=n)
    return [rng.standard_normal((int(np.sum(lengths == L)), L, d)) for L in range(1, L_max + 1)]


@dataclass(frozen=True)
class FunctionGap:
    """max |f_theta - f_theta'| over the sequences, max |f_theta|, and the rounding scale
    max_X sum_h sum_i s_hi |u_h|^T |x_i| summed over the heads of both models."""

    max_diff: float
    max_f: float
    scale: float
    L_max: int


def function_gap(theta, theta2, sequences: Sequence[np.ndarray]) -> FunctionGap:
    """Evaluate two multi-head models on the same sequences (grouped by length, as :func:`random_sequences`)."""
    heads = [*zip(*theta, strict=True), *zip(*theta2, strict=True)]
    diff, fmax, scale, L_max = 0.0, 0.0, 0.0, 0
    for X in sequences:
        if X.shape[0] == 0:
            continue
        f1 = multihead_oracle(X, *theta)
        f2 = multihead_oracle(X, *theta2)
        diff = max(diff, float(np.max(np.abs(f1 - f2))))
        fmax = max(fmax, float(np.max(np.abs(f1))))
        absX = np.abs(X)
        sc = sum(np.einsum("bn,bn->b", attention_weights(X, A), absX @ np.abs(v)) for A, v in heads)
        scale = max(scale, float(np.max(sc)))
        L_max = max(L_max, X.shape[1])
    return FunctionGap(diff, fmax, scale, L_max)


def param_distance_mod_perm(theta, theta2) -> float:
    """min over head permutations pi of sqrt(sum_h ||A_h - A'_pi(h)||_F^2 + ||u_h - u'_pi(h)||^2)."""
    (As, us), (Bs, vs) = theta, theta2
    H = len(As)
    if not (len(us) == H and len(Bs) == H and len(vs) == H):
        raise ValueError("both parameter sets need the same number of heads and one u per A")
    best = math.inf
    for perm in itertools.permutations(range(H)):
        dist2 = sum(np.sum((As[h] - Bs[perm[h]]) ** 2) + np.sum((us[h] - vs[perm[h]]) ** 2) for h in range(H))
        best = min(best, float(dist2))
    return math.sqrt(best)


# ---- C7: two heads, the rank of the answers' Jacobian -------------------------------------------------

@dataclass(frozen=True)
class HeadsRank:
    """The singular values ``sv`` of the Jacobian of two-head answers to ``n`` random two-token sequences in
    the 2 (d^2 + d) parameters (:func:`~.model.multihead_jacobian`), at distinct or at shared attention."""

    d: int
    n: int
    shared: bool
    sv: np.ndarray

    @property
    def tol(self) -> float:
        """numpy's rank threshold s_1 max(shape) eps."""
        return float(self.sv[0] * max(self.n, 2 * (self.d * self.d + self.d)) * np.finfo(float).eps)

    @property
    def rank(self) -> int:
        return int(np.sum(self.sv > self.tol))

    @property
    def gap(self) -> tuple[float, float]:
        """(the smallest singular value kept, the largest dropped; 0 when none is dropped)."""
        k = self.rank
        return float(self.sv[k - 1]), float(self.sv[k]) if k < self.sv.size else 0.0

    @property
    def margins(self) -> tuple[float, float]:
        """``gap`` over the threshold ``tol``: how far the decision is from a tie on either side."""
        kept, dropped = self.gap
        return kept / self.tol, dropped / self.tol


def heads_jacobian_rank(d: int, n: int, rng: np.random.Generator, *, shared: bool, A_scale: float = 2.0,
                        u_scale: float = 1.0) -> HeadsRank:
    """Two random heads (A_h, u_h) as :func:`~.model.random_full_instance` (A_2 = A_1 if ``shared``), n
    two-token sequences with N(0, I) tokens, and the singular values of the answers' Jacobian."""
    d = check_int("d", d, low=2)
    n = check_positive_int("n", n)
    A1, u1 = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
    A2, u2 = random_full_instance(d, rng, A_scale=A_scale, u_scale=u_scale)
    if shared:
        A2 = A1
    X = rng.standard_normal((n, 2, d))
    J = multihead_jacobian(X, [A1, A2], [u1, u2])
    return HeadsRank(d, n, bool(shared), np.linalg.svd(J, compute_uv=False))


# ---- C5: the paper's O(rd) learner (random rank-one probes, alternating least squares) -----------------

@dataclass(frozen=True)
class ProbeRun:
    """:func:`~.model.learn_rank_one_probes` with m probes on one rank-r instance, and the local
    injectivity of its measurements: the singular values of the probe operator restricted to the tangent
    space of the rank-r matrices at A (:func:`probe_tangent_operator`)."""

    d: int
    r: int
    m: int
    A: np.ndarray
    u: np.ndarray
    A_hat: np.ndarray
    Q: np.ndarray
    W: np.ndarray
    n_queries: int
    tangent_sv: np.ndarray

    @property
    def rel_err(self) -> float:
        return float(np.linalg.norm(self.A_hat - self.A) / np.linalg.norm(self.A))

    @property
    def tangent_rank(self) -> int:
        """Numerical rank of the tangent operator (numpy's rule s_1 max(shape) eps)."""
        S = self.tangent_sv
        return int(np.sum(S > S[0] * max(self.m, 2 * self.d * self.r) * np.finfo(float).eps))


def probe_tangent_operator(A: np.ndarray, Q: np.ndarray, W: np.ndarray, r: int) -> np.ndarray:
    """(X, Y) -> (q_i^T (X V^T + U Y^T) w_i)_i, shape (m, 2 d r), with A = U S V^T (top r): the probes'
    differential along the rank-r matrices at A (its image is the tangent space's image)."""
    U, _, Vt = np.linalg.svd(np.asarray(A, dtype=float))
    U, V = U[:, :r], Vt[:r].T
    m = Q.shape[0]
    X = np.einsum("ia,ij->iaj", Q, W @ V).reshape(m, -1)
    Y = np.einsum("ib,ij->ibj", W, Q @ U).reshape(m, -1)
    return np.concatenate([X, Y], axis=1)


def run_probes(A: np.ndarray, u: np.ndarray, r: int, m: int, rng: np.random.Generator, *,
               iters: int = 80) -> ProbeRun:
    """The O(rd) learner with m probes against an exact counting oracle (its probes drawn from ``rng``)."""
    oracle = QueryOracle(A, u)
    A_hat, _, Q, W = learn_rank_one_probes(oracle, u.size, r, m, rng, iters=iters)
    S = np.linalg.svd(probe_tangent_operator(A, Q, W, r), compute_uv=False)
    return ProbeRun(u.size, int(r), int(m), A, u, A_hat, Q, W, oracle.n_queries, S)


def run_probe_grid(A: np.ndarray, u: np.ndarray, r: int, m_list: Sequence[int], trials: int,
                   rng: np.random.Generator, *, iters: int = 80) -> list[ProbeRun]:
    """``trials`` independent probe designs at every m of ``m_list`` on one instance."""
    trials = check_positive_int("trials", trials)
    return [run_probes(A, u, r, int(m), rng, iters=iters) for m in m_list for _ in range(trials)]



# ---- C6: the one-layer Transformer reduction (an FFN learner, then the single-head probes) ----------------

@dataclass(frozen=True)
class TransformerRun:
    """:func:`~.model.learn_transformer` on one random one-layer Transformer: the truth (A; a, W, b of the
    FFN), the fit, the oracle's counter and the largest |g_hat - g| over ``n_test`` fresh inputs."""

    A: np.ndarray
    a: np.ndarray
    W: np.ndarray
    b: np.ndarray
    fit: TransformerFit
    n_queries: int
    answer_err: float


def run_transformer(d: int, h: int, rng: np.random.Generator, *, A_scale: float, n_test: int = 200
                    ) -> TransformerRun:
    """A random Transformer (W, a, b standard normal; A with variance A_scale^2/d), learnt from queries."""
    d, h = check_positive_int("d", d), check_positive_int("h", h)
    W = rng.standard_normal((h, d))
    b = rng.standard_normal(h)
    a = rng.standard_normal(h)
    A = A_scale * rng.standard_normal((d, d)) / np.sqrt(d)
    oracle = TransformerOracle(A, a, W, b)
    fit = learn_transformer(oracle, d, rng)
    X = 3.0 * rng.standard_normal((n_test, d))
    err = float(np.max(np.abs(relu_net(X, fit.relu.a, fit.relu.W, fit.relu.b) - relu_net(X, a, W, b))))
    return TransformerRun(A, a, W, b, fit, oracle.n_queries, err)
