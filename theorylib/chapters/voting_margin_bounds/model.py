"""The model of chapter 'voting-margin-bounds': every measured value.

Sparsification of a voting classifier (sampling k hypotheses from its weights), exact binomial
tails of an empirical frequency, the random-label ("random hash") instances, their largest
attainable training margin by linear programming with column generation, the fresh-sample
error of the voting classifier the linear program returns, and the exact law of the training
error of empirical risk minimization over a large class of independent noisy hypotheses.

Never imports ``theory``: a mutation of the theory cannot move a measurement.
Random functions take an explicit ``rng``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from theorylib.core.validation import (
    check_array,
    check_int,
    check_positive_int,
    check_probability,
    check_real,
)

# ------------------------------------------------------------------------------------------------
# sparsification


def signs_for_margins(alpha: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Values h(x_p) in {-1, +1} (shape (points, N)) whose alpha-margins are close to ``targets``.

    For each target gamma the hypotheses are taken in decreasing weight and put on the side +1 while
    the weight there stays <= (1 + gamma)/2 (greedy); the realized margin sum_h alpha_h h(x_p) is
    what :func:`realized_margins` returns and what any prediction must use.
    """
    alpha = check_array("alpha", alpha, ndim=1)
    targets = check_array("targets", targets, ndim=1)
    if np.any(alpha < 0) or abs(alpha.sum() - 1) > 1e-12:
        raise ValueError("alpha must be a probability vector")
    if np.any(np.abs(targets) > 1):
        raise ValueError("targets must lie in [-1, 1]")
    order = np.argsort(-alpha, kind="stable")
    H = -np.ones((targets.size, alpha.size), dtype=np.int8)
    for p, g in enumerate(targets):
        goal, mass = (1 + g) / 2, 0.0
        for j in order:
            if mass + alpha[j] <= goal:
                H[p, j] = 1
                mass += alpha[j]
    return H


def realized_margins(alpha: np.ndarray, H: np.ndarray) -> np.ndarray:
    """gamma_p = sum_h alpha_h h(x_p) (labels y = +1)."""
    return np.asarray(H, dtype=float) @ np.asarray(alpha, dtype=float)


def sparsify(alpha: np.ndarray, H: np.ndarray, k: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """Margins y g(x_p) of ``reps`` independent k-averages g = (1/k) sum_t h_t, h_t iid ~ alpha.

    The k hypotheses are drawn from alpha (their counts are one multinomial draw per replicate), so
    the law of g is sampled, not assumed. Returns shape (reps, points).
    """
    alpha = check_array("alpha", alpha, ndim=1)
    k, reps = check_positive_int("k", k), check_positive_int("reps", reps)
    H = check_array("H", H, ndim=2)
    if H.shape[1] != alpha.size:
        raise ValueError(f"H must have {alpha.size} columns; got {H.shape}")
    counts = rng.multinomial(k, alpha / alpha.sum(), size=reps)
    return counts @ H.T / k


def margin_counts(margins: np.ndarray, k: int) -> np.ndarray:
    """Histogram of B = k (y g + 1)/2 in {0, ..., k} for each point: shape (points, k + 1)."""
    k = check_positive_int("k", k)
    b = np.rint(k * (np.asarray(margins, dtype=float) + 1) / 2).astype(int)
    if np.any(b < 0) or np.any(b > k):
        raise ValueError("margins must lie in [-1, 1]")
    return np.stack([np.bincount(b[:, p], minlength=k + 1) for p in range(b.shape[1])])


# ------------------------------------------------------------------------------------------------
# exact binomial tails


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(B = j), j = 0..n, B ~ Bin(n, p) (scipy)."""
    n, p = check_positive_int("n", n), check_probability("p", p)
    return stats.binom.pmf(np.arange(n + 1), n, p)


def exact_margin_tail(k: int, gamma: float, level: float) -> float:
    """P(y g <= level) exactly, for the k-average g with B = k (y g + 1)/2 ~ Bin(k, (1 + gamma)/2).

    y g <= level iff B <= floor(k (1 + level)/2) (up to 1e-9 for the rounding of the threshold).
    """
    k = check_positive_int("k", k)
    gamma = check_real("gamma", gamma, low=-1.0, high=1.0)
    return float(stats.binom.cdf(np.floor(k * (1 + level) / 2 + 1e-9), k, (1 + gamma) / 2))


def exact_lower_deviation(n: int, p: float, delta: float) -> float:
    """The exact smallest deviation t* with P(p_hat <= p - t) <= delta for every t > t*.

    p_hat = B/n with B ~ Bin(n, p). With j* the smallest j whose CDF exceeds delta,
    P(p_hat <= p - t) = F(floor(n (p - t))) <= delta iff n (p - t) < j*, i.e. t > p - j*/n.
    """
    n, p = check_positive_int("n", n), check_probability("p", p)
    delta = check_real("delta", delta, low=0.0, high=1.0, open_low=True, open_high=True)
    cdf = stats.binom.cdf(np.arange(n + 1), n, p)
    j_star = int(np.argmax(cdf > delta))
    return float(p - j_star / n)


def binomial_log_cdf(j: int, n: int, p: float) -> float:
    """ln P(B <= j), B ~ Bin(n, p), exactly (scipy's regularized incomplete beta; no normal approximation)."""
    n, p = check_positive_int("n", n), check_probability("p", p)
    return float(stats.binom.logcdf(check_int("j", j, low=0), n, p))


def lower_quantile_count(n: int, p: float, log_delta: float) -> int:
    """j* = the smallest count j with ln P(Bin(n, p) <= j) > ``log_delta`` (bisection on the exact CDF).

    Then t* = p - j*/n is the exact smallest deviation with P(p_hat <= p - t) <= delta for t > t*
    (as in :func:`exact_lower_deviation`, for n too large to tabulate the whole CDF).
    """
    n, p = check_positive_int("n", n), check_probability("p", p)
    log_delta = check_real("log_delta", log_delta, high=0.0, open_high=True)
    lo, hi = -1, n  # invariant: cdf(lo) <= delta (lo = -1: empty), cdf(hi) > delta
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if stats.binom.logcdf(mid, n, p) > log_delta:
            hi = mid
        else:
            lo = mid
    return hi


def clopper_pearson_upper(j: int, n: int, log_delta: float) -> float:
    """The exact upper confidence limit: the p with P_p(Bin(n, p) <= j) = delta (j < n).

    p = the upper-delta quantile of Beta(j + 1, n - j) (the binomial-beta identity); at j = 0 it is
    1 - delta^(1/n) = -expm1(ln(delta)/n), computed in that form.
    """
    n = check_positive_int("n", n)
    j = check_int("j", j, low=0)
    log_delta = check_real("log_delta", log_delta, high=0.0, open_high=True)
    if j >= n:
        raise ValueError(f"j must be < n; got j={j}, n={n}")
    if j == 0:
        return float(-np.expm1(log_delta / n))
    return float(stats.beta.isf(np.exp(log_delta), j + 1, n - j))


def sparsification_events(H: np.ndarray, k: int) -> tuple[int, int]:
    """Counted by enumeration: the ordered k-tuples of a class and the distinct margin levels of their averages.

    ``H`` (points, |H|) holds the values y h(x) in {-1, +1}. Every ordered k-tuple of columns is formed
    and averaged; returns (number of tuples, number of distinct values of y g(x) over all tuples and
    points), the two counts behind the union over C_k and its margin thresholds.
    """
    H = check_array("H", H, ndim=2)
    k = check_positive_int("k", k)
    if H.shape[1] ** k > 200_000:
        raise ValueError("too many tuples to enumerate")
    tuples = np.array(list(itertools.product(range(H.shape[1]), repeat=k)), dtype=int)
    margins = H[:, tuples].sum(axis=2) / k  # (points, tuples)
    levels = np.unique(np.rint(margins * k).astype(int))
    return int(tuples.shape[0]), int(levels.size)


# ------------------------------------------------------------------------------------------------
# random-label instances and the largest attainable margin


def random_label_instance(n: int, N0: int, rng: np.random.Generator) -> np.ndarray:
    """W0 in {-1, +1}^{n x N0}: N0 base hypotheses, each an independent fair sign at each of n points.

    Labels are y = +1, so W0[i, j] = y_i h_j(x_i); the class is H = H0 with its negations (|H| = 2 N0).
    """
    n, N0 = check_positive_int("n", n), check_positive_int("N0", N0)
    return (2 * rng.integers(0, 2, size=(n, N0), dtype=np.int8) - 1).astype(np.int8)


@dataclass(frozen=True)
class MaxMargin:
    """The largest attainable margin theta* = max_{alpha in simplex} min_i (W alpha)_i of a class.

    ``columns``/``signs``/``weights``: the support of the primal optimum (column j of W0 with sign s);
    ``q``: the dual optimum (a distribution over the n points); ``dual_value`` = max_j |q^T W0_j|,
    which equals ``theta`` at optimality (strong duality); ``iterations`` of column generation.
    """

    theta: float
    dual_value: float
    columns: np.ndarray
    signs: np.ndarray
    weights: np.ndarray
    q: np.ndarray
    iterations: int


def _restricted_lp(A: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """max t s.t. A alpha >= t 1, alpha in the simplex (HiGHS); returns (t, alpha, q)."""
    n, m = A.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-A, np.ones((n, 1))])
    A_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    res = optimize.linprog(c, A_ub=A_ub, b_ub=np.zeros(n), A_eq=A_eq, b_eq=[1.0],
                           bounds=[(0, None)] * m + [(None, None)], method="highs")
    if res.status != 0:
        raise RuntimeError(f"restricted LP failed: {res.message}")
    q = np.clip(-res.ineqlin.marginals, 0, None)
    return float(-res.fun), res.x[:m], q / q.sum()


def max_margin_lp(W0: np.ndarray, *, tol: float = 1e-10, add: int = 32, max_iter: int = 200) -> MaxMargin:
    """theta*(S) for H = H0 with negations, by column generation on the dual.

    Start from the ``add`` columns of largest |row sum|; solve the restricted LP; price every column of
    +-W0 with the restricted dual q (max_j |q^T W0_j|); add the ``add`` best-priced columns; stop when
    no column prices above the restricted value + ``tol``. At the end primal and dual values agree
    (the dual q certifies theta* <= max_j |q^T W0_j|, the primal alpha certifies theta* >= t).
    """
    W0 = check_array("W0", W0, ndim=2)
    n, N0 = W0.shape
    add = check_int("add", add, low=1)
    colsum = W0.sum(axis=0)
    first = np.argsort(-np.abs(colsum), kind="stable")[:add]
    active = {(int(j), 1 if colsum[j] >= 0 else -1) for j in first}
    for it in range(1, max_iter + 1):
        cols = sorted(active)
        idx = np.array([j for j, _ in cols])
        sg = np.array([s for _, s in cols], dtype=float)
        t, alpha, q = _restricted_lp(W0[:, idx] * sg)
        price = q @ W0
        # rounded before ranking, so that a last-bit difference in the sum cannot reorder tied columns
        best = np.argsort(-np.round(np.abs(price), 9), kind="stable")[:add]
        dual = float(np.abs(price).max())
        new = {(int(j), 1 if price[j] >= 0 else -1) for j in best if abs(price[j]) > t + tol}
        new -= active
        if not new:
            keep = alpha > 0
            return MaxMargin(t, dual, idx[keep], sg[keep], alpha[keep] / alpha[keep].sum(), q, it)
        active |= new
    raise RuntimeError("column generation did not converge")


def attainable_margins(n_list: list[int], N_power: float, reps: int, seed: int, rng_for) -> dict:
    """theta*(S) on ``reps`` random-label instances per n (N0 = round(n^N_power) base hypotheses).

    Instance (n, r) uses its own stream ``rng_for(seed, "C3", n, r)``. Returns a dict with the
    arrays ``n``, ``N0`` and ``theta`` (shape (len(n_list), reps)) and the solutions ``sol``.
    """
    N0s, theta, sols = [], np.zeros((len(n_list), reps)), []
    for a, n in enumerate(n_list):
        N0 = int(round(n**N_power))
        N0s.append(N0)
        row = []
        for r in range(reps):
            W0 = random_label_instance(n, N0, rng_for(seed, "C3", f"p{N_power}", str(n), str(r)))
            s = max_margin_lp(W0)
            theta[a, r] = s.theta
            row.append(s)
        sols.append(row)
    return {"n": np.array(n_list), "N0": np.array(N0s), "theta": theta, "sol": sols}


def fresh_error(sol: MaxMargin, n_test: int, rng: np.random.Generator) -> tuple[float, float]:
    """L_D(f) of the LP's voting classifier on ``n_test`` fresh points, ties counted as errors.

    At a fresh point every base hypothesis shows a fresh fair sign, so f(x) = sum_j s_j alpha_j eps_j.
    Returns (error rate, its standard error).
    """
    n_test = check_positive_int("n_test", n_test)
    eps = 2.0 * rng.integers(0, 2, size=(n_test, sol.weights.size), dtype=np.int8) - 1.0
    f = eps @ (sol.signs * sol.weights)
    err = (f <= 1e-12).astype(float)
    m = float(err.mean())
    return m, float(np.sqrt(max(m * (1 - m), 1.0 / n_test) / n_test))


# ------------------------------------------------------------------------------------------------
# empirical risk minimization over independent noisy hypotheses


def erm_error_law(n: int, N0: int, p: float) -> np.ndarray:
    """Exact law of n tau, tau = min_j p_hat_j, for N0 independent hypotheses of true error p.

    Each base hypothesis errs at each point independently with probability p (labels y = +1,
    h_j(x) = -1 with probability p, independently over j and x), so its training-error count is
    Bin(n, p), independently over j, and P(n tau >= j) = P(Bin(n, p) >= j)^N0. The minimizer has
    true error p exactly (at a fresh point its value is a fresh Bernoulli(p) error). Returns the
    probabilities of n tau = 0, ..., n.
    """
    n, N0 = check_positive_int("n", n), check_positive_int("N0", N0)
    p = check_probability("p", p)
    j = np.arange(n + 2)
    with np.errstate(divide="ignore"):
        surv = np.exp(N0 * np.log1p(-stats.binom.cdf(j - 1, n, p)))
    return np.clip(surv[:-1] - surv[1:], 0.0, None)
