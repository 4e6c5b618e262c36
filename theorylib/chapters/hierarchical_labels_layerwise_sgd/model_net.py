"""The residual network of C4, trained layerwise (torch, CPU, float64).

The tree sits on a hidden ordered subset of the inputs (:func:`hidden_leaves`). :class:`ResidualLabelNet`
has blocks ``h <- h + P U relu(V h + b)`` writing to the label slots of the stream ``(x, labels)``;
:func:`train_layerwise` (block by block, earlier blocks frozen, squared loss on all labels) and
:func:`train_end_to_end` (all blocks at once, top label only: the no-hint baseline). Gradients are
written out by hand (two matrix products per layer, checked against autograd in the tests): this halves
the per-step cost on one core.

Reproducibility across machines. The weights are drawn by numpy's ``rng`` (bit-identical everywhere;
torch's vectorised normal sampler differs between CPU capabilities by up to 1e-6) and training runs in
float64. A last-bit difference of a matrix product (BLAS kernel, SIMD level) then stays at the 1e-15 level
over the whole run instead of flipping the sign of test outputs that lie within 1e-6 of zero, which a
float32 run does (the baseline's accuracy moved by 4 of 8192 test points between two CPU capabilities).

Never imports ``theory``. Everything random takes an explicit ``rng: np.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorylib.core.validation import check_int, check_positive, check_positive_int

from .model import all_labels, check_pm1, label_levels, random_signs, round_pm1, tree_depth


def hidden_leaves(d: int, n_in: int, rng: np.random.Generator) -> np.ndarray:
    """A hidden ordered subset of d of the n_in input coordinates: the leaves of the parity tree, so that
    label l^(1)_j pairs inputs leaves[2j], leaves[2j+1]. The learner is not told which."""
    tree_depth(d)
    if n_in < d:
        raise ValueError(f"n_in = {n_in} must be >= d = {d}")
    return rng.permutation(n_in)[:d]


class ResidualLabelNet:
    """A residual stream h = (x, label slots) in R^{n_in + (d-1)} and blocks
    ``h <- h + P U_k relu(V_k h + b_k)``, with P writing into the d - 1 label slots only.

    Weights are float64 torch tensors: V_k ~ N(0, 1/D) (D = n_in + d - 1), b_k = 0, U_k ~ N(0, 1/width),
    drawn by ``rng`` (so two nets built from equal rngs are equal, on every machine).
    """

    def __init__(self, d: int, width: int, n_blocks: int, rng: np.random.Generator, n_in: int | None = None) -> None:
        import torch

        self.r = tree_depth(d)
        n_in = d if n_in is None else n_in
        if width < 1 or n_blocks < 1 or n_in < d:
            raise ValueError(f"width = {width} and n_blocks = {n_blocks} must be >= 1 and n_in = {n_in} >= d = {d}")
        self.d, self.n_in, self.n, self.width, self.n_blocks = d, n_in, d - 1, width, n_blocks
        D = n_in + d - 1
        self.V, self.b, self.U = [], [], []
        for _ in range(n_blocks):
            self.V.append(torch.from_numpy(rng.standard_normal((width, D)) / np.sqrt(D)))
            self.b.append(torch.zeros(width, dtype=torch.float64))
            self.U.append(torch.from_numpy(rng.standard_normal((self.n, width)) / np.sqrt(width)))

    def stream(self, X: np.ndarray):
        """The initial stream (x, 0) as a float64 tensor."""
        import torch

        X = check_pm1(X, "X")
        if X.shape[1] != self.n_in:
            raise ValueError(f"X has {X.shape[1]} columns, the net expects n_in = {self.n_in}")
        H = torch.zeros(X.shape[0], self.n_in + self.n, dtype=torch.float64)
        H[:, : self.n_in] = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))
        return H

    def block(self, k: int, H):
        """Apply block k: H + P U_k relu(V_k H + b_k)."""
        import torch

        out = H.clone()
        out[:, self.n_in :] += torch.relu(torch.addmm(self.b[k], H, self.V[k].T)) @ self.U[k].T
        return out

    def forward(self, H, upto: int | None = None):
        """The stream after blocks 0..upto-1 (all blocks by default)."""
        import torch

        with torch.no_grad():
            for k in range(self.n_blocks if upto is None else upto):
                H = self.block(k, H)
        return H

    def predict(self, X: np.ndarray, upto: int | None = None) -> np.ndarray:
        """Rounded label slots (ties -> +1) after ``upto`` blocks, shape (n, d - 1), int8."""
        return round_pm1(self.forward(self.stream(X), upto)[:, self.n_in :].numpy())

    def state(self) -> list[np.ndarray]:
        """All weights as numpy arrays (for comparisons)."""
        return [t.numpy().copy() for t in (*self.V, *self.b, *self.U)]


def _check_train(steps: int, lr: float, batch: int) -> tuple[int, float, int]:
    return check_int("steps", steps, low=0), check_positive("lr", lr), check_positive_int("batch", batch)


def _leaves(net: ResidualLabelNet, leaves: np.ndarray | None) -> np.ndarray:
    lv = np.arange(net.d) if leaves is None else np.asarray(leaves)
    if lv.shape != (net.d,) or lv.min() < 0 or lv.max() >= net.n_in or np.unique(lv).size != net.d:
        raise ValueError(f"leaves must be {net.d} distinct input indices in [0, {net.n_in})")
    return lv


def train_layerwise(net: ResidualLabelNet, steps: int, lr: float, batch: int, rng: np.random.Generator,
                    X_test: np.ndarray | None = None, leaves: np.ndarray | None = None) -> np.ndarray | None:
    """Train block k = 0, 1, ... in turn by plain SGD on (1/2B) sum ||label slots - labels||^2 over all
    d - 1 labels (the tree on the inputs ``leaves``), the earlier blocks frozen, fresh samples each step.
    With X_test, returns the level accuracies after each block, shape (n_blocks, r)."""
    import torch

    steps, lr, batch = _check_train(steps, lr, batch)
    lv = _leaves(net, leaves)
    n0 = net.n_in
    acc = []
    for k in range(net.n_blocks):
        X = random_signs((steps * batch, n0), rng)
        Y = torch.from_numpy(all_labels(X[:, lv]).astype(np.float64))
        H_all = net.forward(net.stream(X), upto=k)  # frozen earlier blocks, one pass
        V, b, U = net.V[k], net.b[k], net.U[k]
        for s in range(steps):
            sl = slice(s * batch, (s + 1) * batch)
            H, y = H_all[sl], Y[sl]
            a = torch.addmm(b, H, V.T)
            z = torch.relu(a)
            g = (H[:, n0:] + z @ U.T - y) / batch
            da = (g @ U) * (a > 0)
            U.sub_(lr * (g.T @ z))
            V.sub_(lr * (da.T @ H))
            b.sub_(lr * da.sum(0))
        if X_test is not None:
            acc.append(level_accuracy_row(net.predict(X_test, upto=k + 1), X_test[:, lv]))
    return None if X_test is None else np.array(acc)


def level_accuracy_row(pred: np.ndarray, X_leaves: np.ndarray) -> np.ndarray:
    """Mean accuracy of the predicted label slots within each level 1..r (X_leaves: the tree's inputs)."""
    truth = all_labels(X_leaves)
    lv = label_levels(X_leaves.shape[1])
    correct = (pred == truth).mean(axis=0)
    return np.array([correct[lv == i].mean() for i in range(1, lv.max() + 1)])


def level_accuracy(net: ResidualLabelNet, X: np.ndarray, leaves: np.ndarray | None = None) -> np.ndarray:
    """Accuracy by level (columns) after each block (rows), shape (n_blocks, r)."""
    lv = _leaves(net, leaves)
    return np.array([level_accuracy_row(net.predict(X, upto=k + 1), X[:, lv]) for k in range(net.n_blocks)])


def top_accuracy(net: ResidualLabelNet, X: np.ndarray, leaves: np.ndarray | None = None) -> float:
    """Accuracy of the rounded top slot on X."""
    lv = _leaves(net, leaves)
    return float(np.mean(net.predict(X)[:, -1] == np.prod(X[:, lv], axis=1)))


def train_end_to_end(net: ResidualLabelNet, steps: int, lr: float, batch: int, rng: np.random.Generator,
                     X_eval: np.ndarray | None = None, n_evals: int = 10,
                     leaves: np.ndarray | None = None) -> np.ndarray | None:
    """The no-hint baseline: all blocks trained jointly by plain SGD on (1/2B) sum (top slot - y)^2 with
    y the parity of the inputs ``leaves`` (only the top label is given). With X_eval, returns
    (step, top accuracy) at n_evals + 1 checkpoints."""
    import torch

    steps, lr, batch = _check_train(steps, lr, batch)
    lv = _leaves(net, leaves)
    n0, K = net.n_in, net.n_blocks
    curve = []
    marks = set(np.linspace(0, steps, n_evals + 1).astype(int).tolist()) if X_eval is not None else set()
    chunk = 500
    for s in range(steps + 1):
        if s in marks:
            curve.append((s, top_accuracy(net, X_eval, lv)))
        if s == steps:
            break
        if s % chunk == 0:  # fresh samples, drawn a chunk at a time
            X = random_signs((min(chunk, steps - s) * batch, n0), rng)
            Hx = net.stream(X)
            Yx = torch.from_numpy(np.prod(X[:, lv], axis=1).astype(np.float64))
        sl = slice((s % chunk) * batch, (s % chunk + 1) * batch)
        H, y = Hx[sl], Yx[sl]
        Hs, As, Zs = [H], [], []
        for k in range(K):
            a = torch.addmm(net.b[k], H, net.V[k].T)
            z = torch.relu(a)
            H = H.clone()
            H[:, n0:] += z @ net.U[k].T
            As.append(a)
            Zs.append(z)
            Hs.append(H)
        # g: the loss gradient w.r.t. the label slots of the stream (the input part x is fixed, so its
        # gradient is never needed, nor the stream gradient below block 0)
        g = torch.zeros(H.shape[0], net.n, dtype=H.dtype)
        g[:, -1] = (H[:, -1] - y) / batch
        for k in reversed(range(K)):
            da = (g @ net.U[k]) * (As[k] > 0)
            gU, gV, gb = g.T @ Zs[k], da.T @ Hs[k], da.sum(0)
            if k:
                g = g + da @ net.V[k][:, n0:]
            net.U[k].sub_(lr * gU)
            net.V[k].sub_(lr * gV)
            net.b[k].sub_(lr * gb)
    return None if X_eval is None else np.array(curve, dtype=float)


@dataclass(frozen=True)
class NetResult:
    """C4 data: accuracy by level after each block (hinted), top accuracies, the baseline's curve."""

    level_acc: np.ndarray
    hinted_top: float
    baseline_top: float
    baseline_curve: np.ndarray
    n_test: int
    leaves: np.ndarray


def net_experiment(d: int, width: int, n_blocks: int, steps: int, batch: int, lr: float, n_test: int,
                   rng: np.random.Generator, baseline: bool = True, n_in: int | None = None) -> NetResult:
    """The tree sits on a hidden ordered subset of d of the n_in = 2d (default) inputs. Layerwise training of
    a fresh net (steps per block) and, with ``baseline``, a second fresh net trained end to end on the top
    label alone for the same total n_blocks * steps SGD steps at the same lr. Both are evaluated on one
    set of n_test fresh inputs (the baseline's curve too, at each of its checkpoints)."""
    n_test = check_positive_int("n_test", n_test)
    n_in = 2 * d if n_in is None else n_in
    leaves = hidden_leaves(d, n_in, rng)
    X_test = random_signs((n_test, n_in), rng)
    net = ResidualLabelNet(d, width, n_blocks, rng, n_in=n_in)
    acc = train_layerwise(net, steps, lr, batch, rng, X_test=X_test, leaves=leaves)
    hinted = top_accuracy(net, X_test, leaves)
    if not baseline:
        return NetResult(acc, hinted, float("nan"), np.zeros((0, 2)), n_test, leaves)
    base = ResidualLabelNet(d, width, n_blocks, rng, n_in=n_in)
    curve = train_end_to_end(base, n_blocks * steps, lr, batch, rng, X_eval=X_test,
                             leaves=leaves)
    return NetResult(acc, hinted, top_accuracy(base, X_test, leaves), curve, n_test, leaves)
