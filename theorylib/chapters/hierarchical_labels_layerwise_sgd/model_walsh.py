"""Whole-stream blocks on the uniform cube, computed through Walsh characters (C5c, C5d, C7).

On ``x ~ Unif{±1}^N`` every input and every label of a parity hierarchy is a character
``chi_S(x) = prod_{a in S} x_a``, stored here as a bitmask ``S`` (bit ``a`` for input ``a``), and the product
of two characters is ``chi_{A xor B}``. Under the uniform law ``E[chi_A chi_B] = 1[A = B]``: this is all the
model uses, so the population least-squares fit of a block is computed without enumerating the cube.

* **The whole-stream quadratic stack, symbolically** (C5c, C5d): a stream entry is a signed character
  ``(mask, sign)`` or ``None`` (the constant 0 of a slot not learned); :func:`stream_monomials` lists the
  monomials ``1, h_a, h_a h_b (a < b)``; :func:`symbolic_block` builds the exact Gram matrix
  ``E[phi phi^T]`` and cross-moments ``E[phi l_j]`` from the bitmasks, solves the normal equations
  numerically (minimal-norm solution through the eigen-decomposition of the singular Gram), collects the
  fitted function's coefficient on each distinct character and decides the dead-zone rounding of every
  slot from a bound on its coefficients (:func:`round_expansion`); :func:`symbolic_closure_run` records,
  block by block, which slots equal their label on every input and which read 0.
* **SGD on a block with colliding features** (C7): :func:`collision_sgd_study` runs independent batch-1
  SGD runs of the whole-stream block of the chain at one level (inputs and the correct lower labels) and
  measures each run's exact test error by enumerating the cube.

Never imports ``theory``. Everything random takes an explicit ``rng: np.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theorylib.core.claims import strict_max
from theorylib.core.validation import check_int, check_positive, check_positive_int

from .model import enumerate_cube, random_signs, tree_depth
from .model_deep import DEAD_ZONE, ClosureRun, chain_labels, hidden_order, stream_features

MAX_MASK_INPUTS = 62  # bitmasks in int64
MAX_SGD_INPUTS = 14  # C7 enumerates the cube of the block's inputs

Entry = tuple[int, int] | None  # (character bitmask, sign) or None for the constant 0


def chain_masks(leaves: Sequence[int]) -> list[int]:
    """The supports of the chain on the ordered leaves, S_j = {pi(1), ..., pi(j+1)}, j = 1..d-1, as bitmasks."""
    lv = [int(a) for a in leaves]
    if len(lv) < 2:
        raise ValueError("the chain needs at least 2 leaves")
    masks, m = [], 1 << lv[0]
    for a in lv[1:]:
        m |= 1 << a
        masks.append(m)
    return masks


def tree_masks(leaves: Sequence[int]) -> list[int]:
    """The supports of the binary parity tree on the leaves (a power of two of them), level 1 first, in the
    order of :func:`.model_deep.tree_labels`."""
    tree_depth(len(leaves), "the number of leaves")
    level, masks = [1 << int(a) for a in leaves], []
    while len(level) > 1:
        level = [level[2 * i] | level[2 * i + 1] for i in range(len(level) // 2)]
        masks.extend(level)
    return masks


def stream_monomials(entries: Sequence[Entry]) -> list[Entry]:
    """The degree-<=2 monomials 1, h_a, h_a h_b (a < b) of a symbolic stream, in the order of
    :func:`.model_deep.stream_features`; a monomial with a 0 entry is None."""
    ents = list(entries)
    out: list[Entry] = [(0, 1), *ents]
    for a in range(len(ents)):
        for b in range(a + 1, len(ents)):
            ea, eb = ents[a], ents[b]
            out.append(None if ea is None or eb is None else (ea[0] ^ eb[0], ea[1] * eb[1]))
    return out


def round_expansion(chars: np.ndarray, coef: np.ndarray) -> Entry:
    """The dead-zone rounding of f = sum_C coef_C chi_C (distinct characters ``chars``), on every input:
    with C0 the largest |coef| and rest the sum of the other |coef|, |f - coef_C0 chi_C0| <= rest, so
    dz(f) = sign(coef_C0) chi_C0 if |coef_C0| - rest >= 1/2 and dz(f) = 0 if |coef_C0| + rest < 1/2.
    Otherwise the bound does not decide it (ValueError)."""
    coef = np.asarray(coef, dtype=float)
    if coef.size == 0:
        return None
    i = int(np.argmax(np.abs(coef)))
    top = float(abs(coef[i]))
    rest = float(np.abs(coef).sum() - top)
    if top - rest >= DEAD_ZONE:
        return (int(chars[i]), 1 if coef[i] > 0 else -1)
    if top + rest < DEAD_ZONE:
        return None
    raise ValueError(f"the dead-zone rounding is not decided by the coefficients (top {top:.3g}, rest {rest:.3g})")


@dataclass(frozen=True)
class SymbolicBlock:
    """One block's result: the new slots, the number of non-zero monomials p and of distinct characters q
    among them, the numerical rank of the Gram matrix (its eigenvalues kept), and ``offset``: the largest
    distance (sum of |coefficient - nearest of 0, ±1 on one character|) of a fitted function's expansion
    from the entry it was rounded to (rounding error only)."""

    slots: list[Entry]
    p: int
    q: int
    offset: float
    rank: int = 0


def symbolic_block(entries: Sequence[Entry], targets: Sequence[int], rtol: float = 1e-9) -> SymbolicBlock:
    """One whole-stream block: the population least-squares fit of the labels chi_T (T in ``targets``) on the
    degree-<=2 monomials of the stream, by the normal equations G W = c with the exact moments
    G_ab = E[phi_a phi_b] = s_a s_b 1[A_a = A_b] and c_aj = E[phi_a chi_Tj] = s_a 1[A_a = T_j] (monomials
    that are 0 left out), solved by the pseudo-inverse of G (eigenvalues below rtol times the largest
    dropped); then the dead-zone rounding of each fitted function (:func:`round_expansion`)."""
    mons = [e for e in stream_monomials(entries) if e is not None]
    A = np.array([m for m, _ in mons], dtype=np.int64)
    s = np.array([sg for _, sg in mons], dtype=float)
    T = np.asarray(list(targets), dtype=np.int64)
    G = (A[:, None] == A[None, :]) * np.outer(s, s)
    c = (A[:, None] == T[None, :]) * s[:, None]
    lam, Q = np.linalg.eigh(G)
    keep = lam > rtol * lam.max()
    W = Q[:, keep] @ ((Q[:, keep].T @ c) / lam[keep][:, None])
    chars, cls = np.unique(A, return_inverse=True)
    out: list[Entry] = []
    offset = 0.0
    for j in range(T.size):
        coef = np.bincount(cls, weights=s * W[:, j], minlength=chars.size)
        e = round_expansion(chars, coef)
        exact = np.zeros_like(coef)
        if e is not None:
            exact[np.searchsorted(chars, e[0])] = e[1]
        offset = strict_max([offset, np.abs(coef - exact).sum()])
        out.append(e)
    return SymbolicBlock(out, int(A.size), int(chars.size), offset, int(keep.sum()))


@dataclass(frozen=True)
class SymbolicClosureRun(ClosureRun):
    """A :class:`.model_deep.ClosureRun` computed through characters, with the monomial and character counts
    of the last block, the numerical rank of its Gram matrix, and the largest rounding ``offset`` over all
    blocks and slots."""

    p_last: int = 0
    q_last: int = 0
    offset: float = 0.0
    rank_last: int = 0


def symbolic_closure_run(n_in: int, targets: Sequence[int], n_blocks: int) -> SymbolicClosureRun:
    """The whole-stream quadratic stack on x ~ Unif{±1}^n_in with labels chi_T (T in ``targets``), computed
    by :func:`symbolic_block`: the stream starts at (x, 0); after each block, which slots equal their label
    on every input (``right``: the entry is (T_j, +1)) and which are 0 on every input (``zero``)."""
    n_in = check_int("n_in", n_in, low=2, high=MAX_MASK_INPUTS)
    T = [int(t) for t in targets]
    if not T or any(t <= 0 or t >> n_in for t in T):
        raise ValueError(f"targets must be non-empty subsets of the {n_in} inputs (bitmasks)")
    n_blocks = check_positive_int("n_blocks", n_blocks)
    inputs: list[Entry] = [(1 << a, 1) for a in range(n_in)]
    slots: list[Entry] = [None] * len(T)
    right, zero, offset = [], [], 0.0
    for _ in range(n_blocks):
        blk = symbolic_block(inputs + slots, T)
        slots, offset = blk.slots, strict_max([offset, blk.offset])
        right.append([e == (t, 1) for e, t in zip(slots, T, strict=True)])
        zero.append([e is None for e in slots])
    return SymbolicClosureRun(np.array(right), np.array(zero), blk.p, blk.q, offset, blk.rank)


@dataclass(frozen=True)
class SymbolicDepthStudy:
    """C5c, C5d data: the chain and the tree on the same hidden leaves (d of n_in inputs), each run for d
    blocks of the whole-stream quadratic stack, computed through characters."""

    d: int
    n_in: int
    leaves: np.ndarray
    chain: SymbolicClosureRun
    tree: SymbolicClosureRun


def symbolic_depth_experiment(d: int, n_in: int, rng: np.random.Generator) -> SymbolicDepthStudy:
    """Draw hidden ordered leaves (d of n_in inputs), then run the stack symbolically for d blocks on the
    chain and on the tree (:func:`symbolic_closure_run`)."""
    tree_depth(d)
    n_in = check_int("n_in", n_in, low=d, high=MAX_MASK_INPUTS)
    leaves = hidden_order(d, n_in, rng)
    chain = symbolic_closure_run(n_in, chain_masks(leaves), d)
    tree = symbolic_closure_run(n_in, tree_masks(leaves), d)
    return SymbolicDepthStudy(d, n_in, leaves, chain, tree)


# ---------------------------------------------------------------------------------------------
# C7: batch-1 SGD on a whole-stream block with colliding features
# ---------------------------------------------------------------------------------------------


def chain_block_features(X: np.ndarray, leaves: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
    """The block of the chain at ``level`` k: the degree-<=2 monomials of the stream (x, l_1, ..., l_{k-1})
    (the slots of the labels not yet learned are 0 and drop out) and its target l_k."""
    L = chain_labels(X, leaves)
    k = check_int("level", level, low=1, high=L.shape[1])
    H = np.concatenate([X, L[:, : k - 1]], axis=1)
    return stream_features(H), L[:, k - 1].astype(float)


def collision_checkpoints(p: int) -> tuple[int, ...]:
    """C7's checkpoints, fixed in advance in units of the feature count p: p/2, p, 2p, 4p."""
    p = check_positive_int("p", p)
    return (p // 2, p, 2 * p, 4 * p)


@dataclass(frozen=True)
class CollisionStudy:
    """C7 data: the block's leaves and level, its p features, the step eta = 1/p, the checkpoints, and the
    mean, Monte-Carlo SE and sample skewness over R runs of the exact test error E_x (phi(x)^T w_t - l_k(x))^2
    per checkpoint."""

    n_in: int
    leaves: np.ndarray
    level: int
    p: int
    eta: float
    checkpoints: tuple[int, ...]
    mean: np.ndarray
    se: np.ndarray
    R: int
    skew: np.ndarray


def sample_skewness(err: np.ndarray) -> np.ndarray:
    """Per column of ``err`` (runs x checkpoints), the sample skewness m3 / m2^(3/2) of the runs (central
    moments with divisor R; 0 where every run has the same value)."""
    c = err - err.mean(axis=0)
    m2, m3 = np.mean(c**2, axis=0), np.mean(c**3, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0) ** 1.5, 0.0)


def collision_sgd_study(d: int, n_in: int, R: int, rng: np.random.Generator) -> CollisionStudy:
    """The R runs of :func:`collision_run_errors`, summarised per checkpoint: mean, SE = sd/sqrt(R) and
    sample skewness of the runs' exact test errors."""
    n_in, leaves, level, p, eta, ts, err = collision_run_errors(d, n_in, R, rng)
    mean, se = err.mean(axis=0), err.std(axis=0, ddof=1) / np.sqrt(err.shape[0])
    return CollisionStudy(n_in, leaves, level, p, eta, ts, mean, se, err.shape[0], sample_skewness(err))


def collision_run_errors(d: int, n_in: int, R: int, rng: np.random.Generator
                         ) -> tuple[int, np.ndarray, int, int, float, tuple[int, ...], np.ndarray]:
    """Hidden ordered leaves (d of n_in inputs); the chain's block at level k = d // 2 (its stream: the inputs
    and the correct labels 1..k-1); R independent batch-1 SGD runs from w = 0, w <- w - eta phi (phi^T w - y)
    with eta = 1/p and a fresh uniform input per step (all runs in parallel, one stream ``rng``); at each
    checkpoint the exact test error of every run, by enumerating the 2^n_in inputs. Returns n_in, the leaves,
    the level, p, eta, the checkpoints and the errors (R x checkpoints)."""
    n_in = check_int("n_in", n_in, low=d, high=MAX_SGD_INPUTS)
    R = check_int("R", R, low=2)
    leaves = hidden_order(d, n_in, rng)
    level = max(d // 2, 1)
    cube = enumerate_cube(n_in)
    Phi_c, y_c = chain_block_features(cube, leaves, level)
    p = Phi_c.shape[1]
    eta = 1.0 / p
    ts = collision_checkpoints(p)
    W = np.zeros((R, p))
    errs = []
    for t in range(ts[-1] + 1):
        if t in ts:
            errs.append(np.mean((Phi_c @ W.T - y_c[:, None]) ** 2, axis=0))
        if t == ts[-1]:
            break
        X = random_signs((R, n_in), rng).astype(np.int8)
        F, y = chain_block_features(X, leaves, level)
        r = np.einsum("ij,ij->i", F, W) - y
        W -= check_positive("eta", eta) * F * r[:, None]
    return n_in, leaves, level, p, eta, ts, np.stack(errs, axis=1)
