"""The model of chapter 'rational-activations-separation': the networks and every measured value.

Never imports ``theory``: a mutation of the theory cannot move a measurement. The networks are built
from their weights (the scaled Newton schedule is the construction, computed here on its own) and
measured by evaluating them: sup-norm errors on grids with refined maxima, an LP for the best
piecewise-linear fit, exact piece counts on dyadic grids.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real


def _check_unit(name: str, value: float) -> float:
    return check_real(name, value, 0.0, 1.0, open_low=True, open_high=True)


def newton_weights(ell: float, k: int) -> np.ndarray:
    """The k coefficients ell_0..ell_{k-1} of the scaled Newton maps F_j(y) = (y + ell_j/y)/(1 + ell_j)."""
    ell, k = _check_unit("ell", ell), check_positive_int("k", k)
    out = np.empty(k)
    out[0] = ell
    for j in range(1, k):
        out[j] = 2.0 * math.sqrt(out[j - 1]) / (1.0 + out[j - 1])
    return out


def sign_net(x: np.ndarray, ell: float, k: int) -> np.ndarray:
    """s_k(x) = F_{k-1}(...F_0(x)): k rational neurons of type (2, 1), t -> (t^2 + ell_j)/((1 + ell_j) t)."""
    y = np.asarray(x, dtype=float)
    if np.any(y == 0):
        raise ValueError("sign_net has a pole at x = 0; use abs_net there")
    for lj in newton_weights(ell, k):
        y = (y * y + lj) / ((1.0 + lj) * y)
    return y


def abs_net(x: np.ndarray, ell: float, k: int) -> np.ndarray:
    """h_k(x) = x s_k(x) without the pole: h_1 = (x^2 + ell)/(1 + ell), h_{j+1} = (h_j + ell_j x^2/h_j)/(1 + ell_j)."""
    x = np.asarray(x, dtype=float)
    w = newton_weights(ell, k)
    u = x * x
    h = (u + w[0]) / (1.0 + w[0])
    for lj in w[1:]:
        h = (h + lj * u / h) / (1.0 + lj)
    return h


def relu_net(x: np.ndarray, eps: float, k: int, B: float = 1.0) -> np.ndarray:
    """ReLU(x) ~ (x + B h_k(x/B))/2 on [-B, B], with ell = eps."""
    B = check_positive("B", B)
    x = np.asarray(x, dtype=float)
    return 0.5 * (x + B * abs_net(x / B, eps, k))


def rational_neurons(k: int) -> int:
    """Neurons of the |x| network of depth k: one square, then a reciprocal and two squares per step."""
    return 1 + 3 * (check_positive_int("k", k) - 1)


@dataclass(frozen=True)
class Neuron:
    """t = w . [1, x, out_0, ..., out_{i-1}], output P(t)/Q(t) (coefficients highest degree first)."""

    weights: tuple[float, ...]
    P: tuple[float, ...]
    Q: tuple[float, ...]


@dataclass(frozen=True)
class RationalNetwork:
    """A DAG of univariate rational neurons on a scalar input; the output is an affine readout."""

    neurons: tuple[Neuron, ...]
    readout: tuple[float, ...]

    @property
    def n_neurons(self) -> int:
        return len(self.neurons)

    @property
    def n_params(self) -> int:
        """Affine weights, activation coefficients and readout weights, counted one by one."""
        return sum(len(n.weights) + len(n.P) + len(n.Q) for n in self.neurons) + len(self.readout)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        vals = [np.ones_like(x), x]
        for n in self.neurons:
            t = sum(w * v for w, v in zip(n.weights, vals, strict=False))
            vals.append(np.polyval(n.P, t) / np.polyval(n.Q, t))
        return sum(w * v for w, v in zip(self.readout, vals, strict=False))


def build_abs_network(ell: float, k: int) -> RationalNetwork:
    """h_k as a network: u = x^2, then per step r = 1/h_j and u r = ((u + r)^2 - (u - r)^2)/4.

    Every h_j is an affine combination of earlier outputs; 1 + 3(k - 1) neurons of type <= (2, 1).
    """
    w = newton_weights(ell, k)
    sq, rec = (1.0, 0.0, 0.0), (1.0,)
    neurons = [Neuron((0.0, 1.0), sq, (1.0,))]  # out 0 = u = x^2 (index 2 in vals)
    # h as a coefficient vector over vals = [1, x, out_0, ...]
    h = np.zeros(3)
    h[0], h[2] = w[0] / (1.0 + w[0]), 1.0 / (1.0 + w[0])
    for lj in w[1:]:
        n0 = len(neurons) + 2  # index in vals of the reciprocal neuron's output
        neurons.append(Neuron(tuple(h), rec, (1.0, 0.0)))
        plus = np.zeros(n0 + 1)
        plus[2], plus[n0] = 1.0, 1.0
        minus = plus.copy()
        minus[n0] = -1.0
        neurons.append(Neuron(tuple(plus), sq, (1.0,)))
        neurons.append(Neuron(tuple(minus), sq, (1.0,)))
        new = np.zeros(n0 + 3)
        new[: h.size] = h / (1.0 + lj)
        new[n0 + 1], new[n0 + 2] = lj / (4.0 * (1.0 + lj)), -lj / (4.0 * (1.0 + lj))
        h = new
    return RationalNetwork(tuple(neurons), tuple(h))


def sup_error(f: Callable[[np.ndarray], np.ndarray], grid: np.ndarray, n_refine: int = 4) -> tuple[float, float]:
    """(max |f|, argmax) over ``grid`` (sorted), the n_refine largest interior local maxima refined by
    bounded Brent search (xatol 1e-15 relative). Returns the largest value found."""
    if not callable(f):
        raise ValueError("f must be callable")
    n_refine = check_int("n_refine", n_refine, low=0)
    g = np.asarray(grid, dtype=float)
    if g.ndim != 1 or g.size < 3 or np.any(np.diff(g) <= 0):
        raise ValueError("grid must be a strictly increasing 1-d array of at least 3 points")
    v = np.abs(f(g))
    i = int(np.argmax(v))
    best, arg = float(v[i]), float(g[i])
    loc = np.flatnonzero((v[1:-1] >= v[:-2]) & (v[1:-1] >= v[2:])) + 1
    loc = loc[np.argsort(-v[loc], kind="stable")][:n_refine]
    for i in loc:
        a, b = g[i - 1], g[i + 1]
        res = optimize.minimize_scalar(lambda t: -abs(float(f(np.array([t]))[0])), bounds=(a, b),
                                       method="bounded", options={"xatol": 1e-15 * max(abs(a), abs(b))})
        if -res.fun > best:
            best, arg = float(-res.fun), float(res.x)
    return best, arg


def log_grid(lo: float, hi: float, n: int, rng: np.random.Generator, n_random: int = 0) -> np.ndarray:
    """n log-spaced points on [lo, hi] (both included) and n_random log-uniform ones, sorted."""
    lo, hi = check_positive("lo", lo), check_positive("hi", hi)
    if not lo < hi:
        raise ValueError(f"need lo < hi, got [{lo}, {hi}]")
    n = check_int("n", n, low=3)
    pts = np.geomspace(lo, hi, n)
    extra = np.exp(rng.uniform(math.log(lo), math.log(hi), check_int("n_random", n_random, low=0)))
    return np.unique(np.clip(np.concatenate([pts, extra]), lo, hi))


def sign_sup_error(ell: float, k: int, grid: np.ndarray) -> float:
    """Measured sup_{[ell, 1]} (1 - s_k(x)) of the sign network on ``grid`` (refined)."""
    return sup_error(lambda x: 1.0 - sign_net(x, ell, k), grid)[0]


def abs_sup_error(eps: float, k: int, grid: np.ndarray) -> float:
    """Measured sup_{[-1, 1]} |h_k(x) - |x|| of the |x| network (even: grid on [0, 1], 0 included)."""
    return sup_error(lambda x: abs_net(x, eps, k) - np.abs(x), grid)[0]


def measured_depth(eps: float, grid: np.ndarray, k_max: int = 64) -> tuple[int, list[float]]:
    """min{k : measured sup |h_k - |x|| <= eps} (ell = eps), and the errors seen on the way."""
    eps = _check_unit("eps", eps)
    errs = []
    for k in range(1, check_positive_int("k_max", k_max) + 1):
        errs.append(abs_sup_error(eps, k, grid))
        if errs[-1] <= eps:
            return k, errs
    raise RuntimeError(f"no depth <= {k_max} reached eps = {eps}")


def best_pl_error_lp(f: Callable[[np.ndarray], np.ndarray], k: int, M: int, a: float = 0.0, b: float = 1.0,
                     scale: float = 1.0) -> float:
    """min over continuous PL g with k equispaced pieces of max |f - g| on the grid of knots and M points per
    piece (HiGHS LP, tolerances 1e-10); the LP is solved for scale * f and the optimum divided by scale."""
    if not callable(f):
        raise ValueError("f must be callable")
    k, M = check_positive_int("k", k), check_int("M", M, low=2)
    a, b = check_real("a", a), check_real("b", b)
    if not a < b:
        raise ValueError(f"need a < b, got [{a}, {b}]")
    scale = check_positive("scale", scale)
    n = k * M + 1
    x = a + (b - a) * np.arange(n) / (k * M)
    piece = np.minimum(np.arange(n) // M, k - 1)
    lam = (np.arange(n) - piece * M) / M
    rows = np.concatenate([np.arange(n), np.arange(n)])
    cols = np.concatenate([piece, piece + 1])
    vals = np.concatenate([1.0 - lam, lam])
    G = sparse.csr_matrix((vals, (rows, cols)), shape=(n, k + 1))
    one = sparse.csr_matrix(np.ones((n, 1)))
    A = sparse.vstack([sparse.hstack([G, -one]), sparse.hstack([-G, -one])]).tocsr()
    y = scale * np.asarray(f(x), dtype=float)
    c = np.zeros(k + 2)
    c[-1] = 1.0
    res = optimize.linprog(c, A_ub=A, b_ub=np.concatenate([y, -y]), bounds=[(None, None)] * (k + 2),
                           method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                                    "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"LP failed: {res.message}")
    return float(res.x[-1]) / scale


@dataclass(frozen=True)
class ReLUNetwork:
    """A DAG of ReLU neurons on a scalar input: neuron i reads w . [1, x, out_0, ..., out_{i-1}]."""

    weights: tuple[tuple[float, ...], ...]
    readout: tuple[float, ...]

    @property
    def n_neurons(self) -> int:
        return len(self.weights)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        vals = [np.ones_like(x), x]
        for w in self.weights:
            vals.append(np.maximum(sum(c * v for c, v in zip(w, vals, strict=False)), 0.0))
        return sum(c * v for c, v in zip(self.readout, vals, strict=False))


def sawtooth_network(m: int) -> ReLUNetwork:
    """f_m = x - sum_{s=1}^m g_s / 4^s, g_s = tent^(s), tent(t) = 2 ReLU(t) - 4 ReLU(t - 1/2): 2m neurons."""
    m = check_positive_int("m", m)
    weights: list[tuple[float, ...]] = []
    g = np.array([0.0, 1.0])  # g_0 = x over vals [1, x]
    out = np.zeros(2 + 2 * m)
    out[1] = 1.0
    for s in range(1, m + 1):
        width = 2 + len(weights)
        t = np.zeros(width)
        t[: g.size] = g
        shifted = t.copy()
        shifted[0] -= 0.5
        weights += [tuple(t), tuple(shifted)]
        g = np.zeros(width + 2)
        g[width], g[width + 1] = 2.0, -4.0
        out[width], out[width + 1] = -2.0 / 4.0**s, 4.0 / 4.0**s
    return ReLUNetwork(tuple(weights), tuple(out))


def dyadic_grid(level: int) -> np.ndarray:
    """The points i 2^{-level}, i = 0..2^level, of [0, 1] (exact in binary floating point)."""
    level = check_int("level", level, low=1, high=40)
    return np.arange(2**level + 1) / 2.0**level


def count_pieces(values: np.ndarray, grid: np.ndarray, tol: float = 0.0) -> int:
    """Linear pieces of the function sampled on ``grid``: 1 + the kinks, a kink being a run of adjacent slope
    changes larger than tol (a kink strictly between two grid points changes the slope twice in a row).
    Exact when the kinks lie on the grid or at least two grid cells apart."""
    g, v = np.asarray(grid, dtype=float), np.asarray(values, dtype=float)
    if g.shape != v.shape or g.ndim != 1 or g.size < 2:
        raise ValueError("grid and values must be 1-d arrays of the same length >= 2")
    slopes = np.diff(v) / np.diff(g)
    idx = np.flatnonzero(np.abs(np.diff(slopes)) > tol)
    return 1 + int(idx.size - np.count_nonzero(np.diff(idx) == 1))


def random_relu_dag(N: int, rng: np.random.Generator) -> ReLUNetwork:
    """N ReLU neurons with standard normal weights on [1, x, earlier outputs], random readout."""
    N = check_positive_int("N", N)
    weights = tuple(tuple(rng.standard_normal(2 + i)) for i in range(N))
    return ReLUNetwork(weights, tuple(rng.standard_normal(2 + N)))
