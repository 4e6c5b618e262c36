"""The model of chapter 'asgd-on-average-stability': data, asynchronous SGD runs and coupled runs.

Never imports ``theory``: a mutation of the theory cannot move a measurement. Random functions take an
explicit ``rng``. The loss is f(w; z) = ||w - z||^2 / 2 (gradient w - z), z ~ N(mu, sigma^2 I_d), mu = 0;
all arrays are float64 and vectorised over R replicates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int

# The sweeps (fixed grids, never computed from a law under test).
M_GRID = (2, 4, 8, 16)  # workers, C2
N_GRID_RATE = (256, 512, 1024, 2048, 4096)  # sample sizes, C3
TN_GRID_BOUND = (1 / 16, 1 / 4, 1.0, 4.0, 16.0, 64.0)  # T/N, C4
N_GRID_EXCESS = (64, 128, 256, 512, 1024, 2048, 4096)  # sample sizes, C5


def worker_probs(m: int, p_dom: float | None = None) -> np.ndarray:
    """Worker participation p: uniform 1/m, or p_1 = p_dom and the rest equal."""
    m = check_positive_int("m", m)
    if p_dom is None:
        return np.full(m, 1.0 / m)
    if m < 2 or not 0 < p_dom < 1:
        raise ValueError(f"a dominant worker needs m >= 2 and 0 < p_dom < 1, got m = {m}, p_dom = {p_dom}")
    return np.concatenate([[p_dom], np.full(m - 1, (1 - p_dom) / (m - 1))])


def participation_probs(p: np.ndarray, n: int) -> np.ndarray:
    """Per-sample probabilities q_k = p_{j(k)} / n (worker j holds samples j n .. j n + n - 1)."""
    p = np.asarray(p, dtype=float)
    n = check_positive_int("n", n)
    if p.ndim != 1 or np.any(p < 0) or abs(p.sum() - 1) > 1e-12:
        raise ValueError("p must be a probability vector (entries >= 0 summing to 1)")
    return np.repeat(p / n, n)


def delay_schedule(T: int, tau: int, kind: str = "const", rng: np.random.Generator | None = None) -> np.ndarray:
    """Delays tau_t in {0, ..., min(t, tau)}: ``const`` tau_t = min(t, tau), or ``random`` (uniform)."""
    T = check_positive_int("T", T)
    tau = check_int("tau", tau, low=0)
    cap = np.minimum(np.arange(T), tau)
    if kind == "const":
        return cap
    if kind == "random":
        if rng is None:
            raise ValueError("random delays need an explicit rng")
        return rng.integers(0, cap + 1)
    raise ValueError(f"kind = {kind!r} must be 'const' or 'random'")


def sample_indices(q: np.ndarray, R: int, T: int, rng: np.random.Generator) -> np.ndarray:
    """(R, T) iid sample indices i_t with P(i_t = k) = q_k."""
    q = np.asarray(q, dtype=float)
    cdf = np.cumsum(q)
    cdf[-1] = 1.0
    idx = np.searchsorted(cdf, rng.random((check_positive_int("R", R), check_positive_int("T", T))),
                          side="right")
    return np.minimum(idx, q.size - 1)


def first_occurrence(idx: np.ndarray) -> np.ndarray:
    """first[r, t] = the first position s with idx[r, s] == idx[r, t] (one coupled run per such s)."""
    idx = np.asarray(idx)
    R, T = idx.shape
    order = np.argsort(idx, axis=1, kind="stable")
    srt = np.take_along_axis(idx, order, axis=1)
    new = np.ones((R, T), dtype=bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    # position (in sorted order) of the start of each run of equal values
    start = np.where(new, np.arange(T)[None, :], 0)
    start = np.maximum.accumulate(start, axis=1)
    first_sorted = np.take_along_axis(order, start, axis=1)
    first = np.empty_like(first_sorted)
    np.put_along_axis(first, order, first_sorted, axis=1)
    return first


@dataclass(frozen=True)
class Draws:
    """What a run sees: z at the drawn positions (R, T, d), the slot of each position, the slot weights
    q_{i_s} on first occurrences (0 elsewhere), and the independent copies z' of each slot (R, T, d)."""

    z: np.ndarray
    first: np.ndarray
    weight: np.ndarray
    z_prime: np.ndarray


def lazy_draws(q: np.ndarray, R: int, T: int, d: int, sigma: float, rng: np.random.Generator) -> Draws:
    """Only the drawn samples, consistent on repeated indices (the N - |drawn| others never matter for
    the stability): indices iid from q, z_k ~ N(0, sigma^2 I_d) drawn once per distinct index."""
    q = np.asarray(q, dtype=float)
    idx = sample_indices(q, R, T, rng)
    first = first_occurrence(idx)
    g = sigma * rng.standard_normal((R, T, d))
    z = np.take_along_axis(g, first[:, :, None], axis=1)
    weight = np.where(first == np.arange(T)[None, :], q[idx], 0.0)
    return Draws(z, first, weight, sigma * rng.standard_normal((R, T, d)))


def full_data(q: np.ndarray, R: int, T: int, d: int, sigma: float, rng: np.random.Generator
              ) -> tuple[Draws, np.ndarray]:
    """The whole sample S (R, N, d) and the draws of a run on it (for risks that need every z_k)."""
    q = np.asarray(q, dtype=float)
    Z = sigma * rng.standard_normal((R, q.size, d))
    idx = sample_indices(q, R, T, rng)
    first = first_occurrence(idx)
    weight = np.where(first == np.arange(T)[None, :], q[idx], 0.0)
    z = np.take_along_axis(Z, idx[:, :, None], axis=1)
    return Draws(z, first, weight, sigma * rng.standard_normal((R, T, d))), Z


def asgd_run(z: np.ndarray, delays: np.ndarray, eta: float, w0: np.ndarray, average: bool = False
             ) -> np.ndarray:
    """ASGD w_{t+1} = w_t - eta (w_{t - tau_t} - z_t) on draws z (..., T, d); a ring buffer of tau + 1
    iterates. Returns w_T, or the average of w_0 .. w_{T-1}."""
    z = np.asarray(z, dtype=float)
    eta = check_positive("eta", eta)
    T = z.shape[-2]
    dl = np.asarray(delays)
    if dl.shape != (T,) or np.any(dl < 0) or np.any(dl > np.arange(T)):
        raise ValueError("delays must have shape (T,) with 0 <= tau_t <= t")
    B = int(dl.max()) + 1
    w = np.broadcast_to(np.asarray(w0, dtype=float), z.shape[:-2] + z.shape[-1:]).copy()
    ring = np.empty((B,) + w.shape)
    total = np.zeros_like(w)
    for t in range(T):
        ring[t % B] = w
        total += w
        w = w - eta * (ring[(t - dl[t]) % B] - z[..., t, :])
    return total / T if average else w


@dataclass(frozen=True)
class Coupled:
    """Per replicate: the stability sum_k q_k ||w_T - w_T^(k)||^2, the final iterate w_T, and
    sum_t F_S^q(w_{t - tau_t}) (when the sample's weighted mean and spread are given)."""

    stability: np.ndarray
    w_final: np.ndarray
    sum_emp_risk: np.ndarray | None


CHUNK = 2_000_000  # float64 elements of one chunk's ring buffer of coupled runs (bounded memory)


def coupled_stability(dr: Draws, delays: np.ndarray, eta: float, w0: np.ndarray,
                      emp: tuple[np.ndarray, np.ndarray] | None = None) -> Coupled:
    """Coupled runs in chunks of replicates (see :func:`coupled_chunk`); the result does not depend on the
    chunking (replicates are independent)."""
    R, T, d = dr.z.shape
    B = int(np.max(delays)) + 1 if np.size(delays) else 1
    step = max(1, CHUNK // (B * T * d))
    parts = []
    for a in range(0, R, step):
        sl = slice(a, a + step)
        sub = Draws(dr.z[sl], dr.first[sl], dr.weight[sl], dr.z_prime[sl])
        parts.append(coupled_chunk(sub, delays, eta, w0, None if emp is None else (emp[0][sl], emp[1][sl])))
    sums = None if emp is None else np.concatenate([c.sum_emp_risk for c in parts])
    return Coupled(np.concatenate([c.stability for c in parts]), np.concatenate([c.w_final for c in parts]), sums)


def coupled_chunk(dr: Draws, delays: np.ndarray, eta: float, w0: np.ndarray,
                  emp: tuple[np.ndarray, np.ndarray] | None = None) -> Coupled:
    """Run ASGD on S and, with the same indices and delays, one run per distinct drawn index k on S^(k)
    (z_k replaced by its copy z'_k); return sum_k q_k ||w_T - w_T^(k)||^2 per replicate.

    ``emp = (zbar_q, c_q)`` (shapes (R, d), (R,)): F_S^q(w) = ||w - zbar_q||^2 / 2 + c_q, accumulated at
    the delayed points w_{t - tau_t}.
    """
    eta = check_positive("eta", eta)
    R, T, d = dr.z.shape
    dl = np.asarray(delays)
    if dl.shape != (T,) or np.any(dl < 0) or np.any(dl > np.arange(T)):
        raise ValueError("delays must have shape (T,) with 0 <= tau_t <= t")
    B = int(dl.max()) + 1
    w = np.broadcast_to(np.asarray(w0, dtype=float), (R, d)).copy()
    v = np.broadcast_to(w[:, None, :], (R, T, d)).copy()  # slot j: the run with z_{i_j} -> z'_{i_j}
    ring_w, ring_v = np.empty((B, R, d)), np.empty((B, R, T, d))
    rows = np.arange(R)
    sum_f = np.zeros(R) if emp is not None else None
    for t in range(T):
        ring_w[t % B], ring_v[t % B] = w, v
        wd, vd = ring_w[(t - dl[t]) % B], ring_v[(t - dl[t]) % B]
        zt = dr.z[:, t, :]
        if emp is not None:
            sum_f += 0.5 * np.sum((wd - emp[0]) ** 2, axis=1) + emp[1]
        gv = vd - zt[:, None, :]
        j = dr.first[:, t]
        gv[rows, j] += zt - dr.z_prime[rows, j]  # the perturbed slot sees z'_k instead of z_k
        w = w - eta * (wd - zt)
        v = v - eta * gv
    stab = np.einsum("rj,rj->r", dr.weight, np.sum((v - w[:, None, :]) ** 2, axis=2))
    return Coupled(stab, w, sum_f)


def weighted_moments(Z: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(zbar_q, c_q) with F_S^q(w) = sum_k q_k ||w - z_k||^2 / 2 = ||w - zbar_q||^2 / 2 + c_q."""
    q = np.asarray(q, dtype=float)
    zbar = np.einsum("k,rkd->rd", q, Z)
    c = 0.5 * (np.einsum("k,rk->r", q, np.sum(Z**2, axis=2)) - np.sum(zbar**2, axis=1))
    return zbar, c


def gap_with_control(w: np.ndarray, Z: np.ndarray, q: np.ndarray) -> np.ndarray:
    """F(w) - F_S^q(w) plus the mean-zero control variate sum_k q_k ||z_k - mu||^2 / 2 - d sigma^2 / 2.

    With mu = 0, F(w) = ||w||^2 / 2 + d sigma^2 / 2, the sum is exactly sum_k q_k <w, z_k>.
    """
    zbar, _ = weighted_moments(Z, q)
    return np.sum(w * zbar, axis=1)


def w_start(d: int, r0sq: float) -> np.ndarray:
    """w_0 with ||w_0 - mu||^2 = r0sq (mu = 0), along the diagonal."""
    return np.full(check_positive_int("d", d), np.sqrt(r0sq / d))


# ---------------------------------------------------------------- the experiments (one per claim)


def c1_sample_size(n: int, m: int, eta: float) -> int:
    """Per-worker size n1 = max(n, ceil(12 / (eta m))), so that N = m n1 >= 12 / eta (the Q S2 term of
    the stability then dominates the Q3 term by a factor about eta N / 2 >= 6, and the delays show)."""
    return max(check_positive_int("n", n), math.ceil(12 / (check_positive("eta", eta) * m)))


def run_stability(q: np.ndarray, delays: np.ndarray, eta: float, d: int, sigma: float, r0sq: float, R: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Per replicate sum_k q_k ||w_T - w_T^(k)||^2 from coupled ASGD runs on the whole sample."""
    dr, _ = full_data(q, R, np.asarray(delays).size, d, sigma, rng)
    return coupled_stability(dr, delays, eta, w_start(d, r0sq)).stability


def run_gap(q: np.ndarray, delays: np.ndarray, eta: float, d: int, sigma: float, r0sq: float, R: int,
            rng: np.random.Generator) -> np.ndarray:
    """Per replicate F(w_T) - F_S^q(w_T) plus its mean-zero control variate."""
    dr, Z = full_data(q, R, np.asarray(delays).size, d, sigma, rng)
    w = asgd_run(dr.z, delays, eta, w_start(d, r0sq))
    return gap_with_control(w, Z, q)


def run_rate(N_grid: tuple[int, ...], T: int, tau: int, eta: float, d: int, sigma: float, r0sq: float, R: int,
             seed_rng) -> np.ndarray:
    """(R, len(N_grid)) stability of balanced runs of T steps, lazily drawn data, one stream per N
    (``seed_rng(N)`` returns it)."""
    dl = delay_schedule(T, tau)
    out = np.empty((R, len(N_grid)))
    for i, N in enumerate(N_grid):
        dr = lazy_draws(np.full(N, 1.0 / N), R, T, d, sigma, seed_rng(N))
        out[:, i] = coupled_stability(dr, dl, eta, w_start(d, r0sq)).stability
    return out


def run_bound(N_grid: tuple[int, ...], T: int, tau: int, eta: float, d: int, sigma: float, r0sq: float, R: int,
              seed_rng) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per N: the stability and sum_t F_S(w_{t - tau_t}) per replicate (balanced, whole sample)."""
    dl = delay_schedule(T, tau)
    stabs, sums = [], []
    for N in N_grid:
        q = np.full(N, 1.0 / N)
        dr, Z = full_data(q, R, T, d, sigma, seed_rng(N))
        c = coupled_stability(dr, dl, eta, w_start(d, r0sq), emp=weighted_moments(Z, q))
        stabs.append(c.stability)
        sums.append(c.sum_emp_risk)
    return stabs, sums


def run_excess(N_grid: tuple[int, ...], tau: int, c0: float, d: int, sigma: float, r0sq: float, R: int,
               seed_rng) -> tuple[np.ndarray, np.ndarray]:
    """(R, len(N_grid)) excess risks ||w - mu||^2 / 2 of the last iterate and of the average, under
    eta = c0 / sqrt(N), T = N, balanced participation."""
    last, avg = np.empty((R, len(N_grid))), np.empty((R, len(N_grid)))
    for i, N in enumerate(N_grid):
        q = np.full(N, 1.0 / N)
        dr, _ = full_data(q, R, N, d, sigma, seed_rng(N))
        dl = delay_schedule(N, tau)
        eta = c0 / math.sqrt(N)
        last[:, i] = 0.5 * np.sum(asgd_run(dr.z, dl, eta, w_start(d, r0sq)) ** 2, axis=1)
        avg[:, i] = 0.5 * np.sum(asgd_run(dr.z, dl, eta, w_start(d, r0sq), average=True) ** 2, axis=1)
    return last, avg
