"""Hierarchies learned from the whole stream: the chain versus the tree (C5), random-feature blocks (C6).

* **Hierarchies on hidden leaves.** :func:`chain_labels` (``l_1 = x_{pi(1)} x_{pi(2)}``,
  ``l_j = l_{j-1} x_{pi(j+1)}``: d - 1 labels of degree 2, 3, ..., d) and :func:`tree_labels` (the binary
  parity tree, level 1 first), both on an ordered subset ``pi`` of the inputs that the learner is not told.
* **The whole-stream quadratic stack** (C5): the stream ``h = (x, s)`` starts at ``s = 0``; each block
  fits *all* labels by least squares on the degree-<=2 monomials of the whole stream, under the uniform law
  on the cube (the population optimum, computed exactly by enumerating the cube), and writes the dead-zone
  rounding of its outputs into the label slots (:func:`dead_zone`: sign where |v| >= 1/2, else 0). No level
  partition, no teacher forcing. :func:`closure_run` records, after each block, which slots equal their
  label on every input and which are 0 on every input.
* **Random-feature blocks** (C6): each block is a layer of frozen random ReLU neurons of the whole stream
  with a per-label linear read-out fitted by ridge regression (a convex problem, solved exactly) on fresh
  samples, writing the dead-zone rounding of its outputs into the label slots (:func:`rf_experiment`).

Never imports ``theory``. Everything random takes an explicit ``rng: np.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int

from .model import all_labels, check_pm1, enumerate_cube, label_levels, random_signs, tree_depth

DEAD_ZONE = 0.5
RF_RIDGE = 1e-4  # C6: the ridge penalty of the read-outs (a fixed design choice, not tuned per run)


def dead_zone(v: np.ndarray) -> np.ndarray:
    """Round to {-1, 0, +1}: sign(v) where |v| >= 1/2, else 0 (a slot not learned stays 0)."""
    v = np.asarray(v, dtype=float)
    return (np.sign(v) * (np.abs(v) >= DEAD_ZONE)).astype(np.int8)


def hidden_order(d: int, n_in: int, rng: np.random.Generator) -> np.ndarray:
    """A hidden ordered subset of d of the n_in inputs (the leaves, in the hierarchy's order)."""
    d, n_in = check_int("d", d, low=2), check_int("n_in", n_in, low=2)
    if n_in < d:
        raise ValueError(f"n_in = {n_in} must be >= d = {d}")
    return rng.permutation(n_in)[:d]


def chain_labels(X: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """The chain on the leaves pi = leaves: l_j = prod_{a <= j+1} x_{pi(a)}, j = 1..d-1; shape (n, d - 1)."""
    X = check_pm1(X, "X")
    Z = X[:, np.asarray(leaves)].astype(np.int64)
    if Z.shape[1] < 2:
        raise ValueError("the chain needs at least 2 leaves")
    return np.cumprod(Z, axis=1)[:, 1:].astype(np.int8)


def tree_labels(X: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """The binary parity tree on the leaves (d a power of two), its d - 1 labels level 1 first."""
    X = check_pm1(X, "X")
    return all_labels(X[:, np.asarray(leaves)]).astype(np.int8)


def stream_features(H: np.ndarray) -> np.ndarray:
    """The degree-<=2 monomials (1, h_a, h_a h_b (a < b)) of each row of H (entries in {-1, 0, +1})."""
    H = np.asarray(H, dtype=float)
    n, D = H.shape
    a, b = np.triu_indices(D, k=1)
    return np.concatenate([np.ones((n, 1)), H, H[:, a] * H[:, b]], axis=1)


def population_least_squares(Phi: np.ndarray, Y: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """The fitted values Phi W of least squares over the rows of Phi (the whole cube, uniform law):
    the orthogonal projection of each column of Y onto the span of the features, by the pseudo-inverse
    of the Gram matrix (eigenvalues below rtol times the largest are dropped)."""
    G = Phi.T @ Phi
    lam, Q = np.linalg.eigh(G)
    keep = lam > rtol * lam.max()
    Qk = Q[:, keep]
    W = Qk @ ((Qk.T @ (Phi.T @ Y)) / lam[keep][:, None])
    return Phi @ W


@dataclass(frozen=True)
class ClosureRun:
    """C5 data: after each block k = 1..K, which label slots equal their label on every input (``right``)
    and which are 0 on every input (``zero``), shape (K, n_labels) each, labels in the hierarchy's order."""

    right: np.ndarray
    zero: np.ndarray

    @property
    def n_right(self) -> np.ndarray:
        """The number of labels known (right on every input) after each block."""
        return self.right.sum(axis=1)


def closure_run(X: np.ndarray, Y: np.ndarray, n_blocks: int) -> ClosureRun:
    """The whole-stream quadratic stack on the cube X (all 2^N points) with labels Y (n, n_labels): each
    block fits all labels from the current stream by :func:`population_least_squares` and writes
    :func:`dead_zone` of its outputs into the label slots."""
    X, Y = check_pm1(X, "X"), np.asarray(Y)
    n_blocks = check_positive_int("n_blocks", n_blocks)
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y must have shape ({X.shape[0]}, n_labels), got {Y.shape}")
    S = np.zeros(Y.shape, dtype=np.int8)
    right, zero = [], []
    Yf = Y.astype(float)
    for _ in range(n_blocks):
        H = np.concatenate([X, S], axis=1)
        S = dead_zone(population_least_squares(stream_features(H), Yf))
        right.append(np.all(S == Y, axis=0))
        zero.append(np.all(S == 0, axis=0))
    return ClosureRun(np.array(right), np.array(zero))


MAX_CLOSURE_INPUTS = 14


@dataclass(frozen=True)
class DepthStudy:
    """C5 data: the chain and the tree on the same hidden leaves, each run for d blocks on the cube."""

    d: int
    n_in: int
    leaves: np.ndarray
    chain: ClosureRun
    tree: ClosureRun


def depth_experiment(d: int, n_in: int, rng: np.random.Generator) -> DepthStudy:
    """Draw hidden ordered leaves (d of n_in inputs), then run the whole-stream quadratic stack for d blocks
    (one more than the chain's d - 1 labels) on the chain and on the tree over all 2^n_in inputs (n_in <= 14)."""
    tree_depth(d)
    n_in = check_int("n_in", n_in, low=d, high=MAX_CLOSURE_INPUTS)
    leaves = hidden_order(d, n_in, rng)
    X = enumerate_cube(n_in)
    chain = closure_run(X, chain_labels(X, leaves), d)
    tree = closure_run(X, tree_labels(X, leaves), d)
    return DepthStudy(d, n_in, leaves, chain, tree)


# ---------------------------------------------------------------------------------------------
# C6: random-feature blocks with a convex read-out
# ---------------------------------------------------------------------------------------------


class RandomFeatureStack:
    """Blocks of frozen random ReLU neurons relu(V_k h + b_k) of the whole stream h = (x, s) (V_k ~ N(0, 1/D),
    b_k ~ N(0, 1), D = n_in + n_labels, drawn by ``rng``) and per-label read-outs U_k fitted by ridge
    regression; block k writes dead_zone(relu(V_k h + b_k) U_k) into the label slots."""

    def __init__(self, n_in: int, n_labels: int, width: int, n_blocks: int, rng: np.random.Generator) -> None:
        self.n_in, self.n_labels = check_positive_int("n_in", n_in), check_positive_int("n_labels", n_labels)
        self.width, self.n_blocks = check_positive_int("width", width), check_positive_int("n_blocks", n_blocks)
        D = n_in + n_labels
        self.V = [rng.standard_normal((D, width)) / np.sqrt(D) for _ in range(n_blocks)]
        self.b = [rng.standard_normal(width) for _ in range(n_blocks)]
        self.U: list[np.ndarray] = []

    def features(self, k: int, X: np.ndarray, S: np.ndarray) -> np.ndarray:
        """relu(V_k h + b_k) for the streams h = (x, s)."""
        H = np.concatenate([X, S], axis=1).astype(float)
        return np.maximum(H @ self.V[k] + self.b[k], 0.0)

    def slots(self, X: np.ndarray, upto: int) -> np.ndarray:
        """The label slots after the first ``upto`` trained blocks (zeros before block 1)."""
        S = np.zeros((X.shape[0], self.n_labels), dtype=np.int8)
        for k in range(upto):
            S = dead_zone(self.features(k, X, S) @ self.U[k])
        return S


def ridge_readout(Psi: np.ndarray, Y: np.ndarray, ridge: float) -> np.ndarray:
    """argmin_U (1/n)||Psi U - Y||^2 + ridge ||U||^2 (a convex problem per label), solved exactly."""
    n, w = Psi.shape
    A = Psi.T @ Psi / n + check_positive("ridge", ridge) * np.eye(w)
    return np.linalg.solve(A, Psi.T @ Y / n)


@dataclass(frozen=True)
class RandomFeatureResult:
    """C6 data: test accuracy by level (columns) after each block (rows), and the top label's accuracy."""

    level_acc: np.ndarray
    top_acc: float
    n_test: int


def rf_experiment(d: int, n_in: int, width: int, n_train: int, ridge: float, n_test: int,
                  rng: np.random.Generator) -> RandomFeatureResult:
    """The parity tree on hidden leaves (d of n_in inputs), learned by log2(d) random-feature blocks, block k
    fitted on n_train fresh inputs streamed through the frozen, already fitted blocks 1..k-1 (the rounded
    stream, no teacher forcing, all labels at once); accuracies on n_test fresh inputs."""
    r = tree_depth(d)
    n_train, n_test = check_positive_int("n_train", n_train), check_positive_int("n_test", n_test)
    leaves = hidden_order(d, n_in, rng)
    net = RandomFeatureStack(n_in, d - 1, width, r, rng)
    X_test = random_signs((n_test, n_in), rng).astype(np.int8)
    Y_test = tree_labels(X_test, leaves)
    lv = label_levels(d)
    acc = []
    for k in range(r):
        X = random_signs((n_train, n_in), rng).astype(np.int8)
        net.U.append(ridge_readout(net.features(k, X, net.slots(X, k)), tree_labels(X, leaves), ridge))
        correct = (net.slots(X_test, k + 1) == Y_test).mean(axis=0)
        acc.append([correct[lv == i].mean() for i in range(1, r + 1)])
    top = float(np.mean(net.slots(X_test, r)[:, -1] == Y_test[:, -1]))
    return RandomFeatureResult(np.array(acc), top, n_test)
