"""A tiny causal attention language model with weight-normalised attention matrices (torch, float64).

What the chapter measures on a real model: plain SGD with decoupled weight decay, taken by hand (no optimizer
object, no state), on next-token prediction in a random Markov-chain language. W_Q, W_K, W_V and W_O are
weight-normalised, W_eff = g W / ||W||_F with the gain g a buffer (never trained, never folded into W), so the
loss is invariant to the scale of each raw matrix; gradients come from reverse-mode autodiff in the raw
matrices, which knows nothing of that invariance. Never imports ``theory``. Randomness: numpy generators
from the chapter's streams (data) and a torch generator seeded from them (initial weights).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from theorylib.core.validation import check_int, check_positive, check_positive_int, check_real

from .model import angle, sqrt_spectrum

MATRICES = ("W_Q", "W_K", "W_V", "W_O")
RMS_EPS = 1e-6
CONCENTRATION = 0.3  # Dirichlet concentration of each row of the language's transition matrix (small: predictable)


def _frob(W: torch.Tensor) -> torch.Tensor:
    return torch.sqrt(torch.sum(W * W))


class WeightNormLinear(nn.Module):
    """x -> x W_eff^T with W_eff = gain W / ||W||_F; W a trained parameter, ``gain`` a fixed buffer."""

    def __init__(self, weight: torch.Tensor, gain: float) -> None:
        super().__init__()
        if weight.ndim != 2 or not bool(torch.all(torch.isfinite(weight))) or float(_frob(weight)) == 0:
            raise ValueError("weight must be a finite nonzero matrix")
        self.weight = nn.Parameter(weight.detach().clone().to(torch.float64))
        self.register_buffer("gain", torch.tensor(float(check_positive("gain", gain)), dtype=torch.float64))

    def effective_weight(self, weight: torch.Tensor | None = None) -> torch.Tensor:
        W = self.weight if weight is None else weight
        return self.gain * W / _frob(W)

    def forward(self, x: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
        return x @ self.effective_weight(weight).T


def rms_norm(x: torch.Tensor) -> torch.Tensor:
    """RMSNorm without a gain: x / sqrt(mean(x^2) + eps) over the last axis."""
    return x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + RMS_EPS)


class TinyAttentionLM(nn.Module):
    """Token and position embeddings, one pre-RMSNorm causal attention block (one head) with a residual
    connection, a final RMSNorm and an unembedding. The four attention matrices are weight-normalised."""

    def __init__(self, vocab: int, d_model: int, seq: int, w0: float, gen: torch.Generator) -> None:
        super().__init__()
        vocab, d, seq = check_int("vocab", vocab, low=2), check_int("d_model", d_model, low=2), check_int(
            "seq", seq, low=2)
        w0 = check_positive("w0", w0)
        f64 = torch.float64
        self.tok = nn.Parameter(torch.randn(vocab, d, generator=gen, dtype=f64))
        self.pos = nn.Parameter(0.1 * torch.randn(seq, d, generator=gen, dtype=f64))
        self.unemb = nn.Parameter(torch.randn(vocab, d, generator=gen, dtype=f64) / np.sqrt(d))
        gain = float(np.sqrt(d))  # W_eff has the entry scale 1 / sqrt(d) of a standard init
        mats = {}
        for name in MATRICES:
            W = torch.randn(d, d, generator=gen, dtype=f64)
            mats[name] = WeightNormLinear(w0 * W / _frob(W), gain)
        self.attn = nn.ModuleDict(mats)
        self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))
        self.scale = 1.0 / np.sqrt(d)

    def forward(self, tokens: torch.Tensor, weights: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """Logits (batch, seq, vocab); ``weights`` replaces raw attention matrices by the given tensors."""
        w = weights or {}
        # a one-hot product rather than an index: its backward is a plain matmul (no scatter-add)
        onehot = torch.nn.functional.one_hot(tokens, self.tok.shape[0]).to(torch.float64)
        h = onehot @ self.tok + self.pos[: tokens.shape[1]]
        a = rms_norm(h)
        q = self.attn["W_Q"](a, w.get("W_Q"))
        k = self.attn["W_K"](a, w.get("W_K"))
        v = self.attn["W_V"](a, w.get("W_V"))
        n = tokens.shape[1]
        s = (q @ k.transpose(1, 2)) * self.scale
        s = s.masked_fill(self.mask[:n, :n], float("-inf"))
        h = h + self.attn["W_O"](torch.softmax(s, dim=-1) @ v, w.get("W_O"))
        return rms_norm(h) @ self.unemb.T

    def loss(self, tokens: torch.Tensor, weights: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """Mean next-token cross-entropy: positions 0..seq-1 predict tokens 1..seq."""
        logits = self.forward(tokens[:, :-1], weights)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


def markov_language(vocab: int, rng: np.random.Generator, concentration: float = CONCENTRATION) -> np.ndarray:
    """A random transition matrix: each row ~ Dirichlet(concentration) (small: a predictable language)."""
    vocab = check_int("vocab", vocab, low=2)
    check_positive("concentration", concentration)
    P = rng.dirichlet(np.full(vocab, concentration), size=vocab)
    return P / P.sum(axis=1, keepdims=True)


def markov_batch(P: np.ndarray, batch: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``batch`` sequences of ``length`` tokens of the chain P, each from a uniform first token."""
    V = P.shape[0]
    out = np.empty((batch, length), dtype=np.int64)
    out[:, 0] = rng.integers(V, size=batch)
    cdf = np.cumsum(P, axis=1)
    for j in range(1, length):
        u = rng.random(batch)
        out[:, j] = np.minimum(np.sum(cdf[out[:, j - 1]] < u[:, None], axis=1), V - 1)
    return out


def markov_entropy_rate(P: np.ndarray) -> float:
    """The chain's entropy rate sum_i pi_i H(P_i) (nats): up to the first positions of a sequence (whose first
    token is uniform, not stationary), the loss of a perfect model."""
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    pi = pi / pi.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.nansum(np.where(P > 0, P * np.log(P), 0.0), axis=1)
    return float(pi @ ent)


def build_model(vocab: int, d_model: int, seq: int, w0: float, rng: np.random.Generator) -> TinyAttentionLM:
    """The model with initial weights from a torch generator seeded from ``rng`` (the chapter's stream)."""
    gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
    model = TinyAttentionLM(vocab, d_model, seq, w0, gen)
    trained = {name for name, _ in model.named_parameters()}
    # a trainable gain folded into W would break the scale invariance: the gains must be buffers
    if any(name.endswith("gain") for name in trained):
        raise ValueError(f"a weight-normalised gain is a trained parameter: {sorted(trained)}")
    return model


def train_sgd_track(model: TinyAttentionLM, P: np.ndarray, steps: int, batch: int, lr: float, lam: float,
                    rng: np.random.Generator, *, spectra: bool = False) -> dict[str, np.ndarray]:
    """Plain SGD with decoupled weight decay on every parameter, p <- (1 - lr lam) p - lr grad, by hand.

    Each step draws a fresh minibatch of ``batch`` sequences of seq + 1 tokens. Measured, per step t < steps
    and attention matrix m (axis 1, in the order of MATRICES): R (steps+1, 4) = ||W_t||_F^2 (numpy, from the
    iterates); ghat2 (steps, 4) = ||grad||^2 of the same minibatch loss at the point where every raw attention
    matrix is replaced by W / ||W||_F (a second autodiff gradient); g2 (steps, 4) = ||g_t||^2 of the raw
    gradient (so R_t g2 / ghat2 - 1 is the rounding gap of the two gradient evaluations); radial (steps, 4) =
    |<g_t, W_t>| / (||g_t|| ||W_t||); tan (steps, 4) = tan angle(W_t, W_{t+1}); loss (steps,) the minibatch loss; with
    ``spectra``, sqrt_p (steps+1, 4, d) = sigma(W_t) / ||W_t||_F from SVDs. The model is trained in place.
    """
    steps, batch = check_positive_int("steps", steps), check_positive_int("batch", batch)
    lr, lam = check_positive("lr", lr), check_real("lam", lam, low=0.0)
    if lr * lam >= 1:
        raise ValueError(f"lr * lam = {lr * lam} must be < 1")
    seq = int(model.mask.shape[0])
    mats = [model.attn[m].weight for m in MATRICES]
    params = list(model.parameters())
    where = [next(i for i, p in enumerate(params) if p is W) for W in mats]
    c = 1.0 - lr * lam
    k = len(MATRICES)
    R = np.empty((steps + 1, k))
    ghat2, g2, radial, tan = (np.empty((steps, k)) for _ in range(4))
    loss = np.empty(steps)
    sq = None

    def current() -> np.ndarray:
        return np.stack([W.detach().numpy().copy() for W in mats])

    W_now = current()
    R[0] = np.sum(W_now**2, axis=(1, 2))
    if spectra:
        sq = np.empty((steps + 1, k, W_now.shape[-1]))
        sq[0] = sqrt_spectrum(W_now)
    for t in range(steps):
        tokens = torch.from_numpy(markov_batch(P, batch, seq + 1, rng))
        L = model.loss(tokens)
        grads = torch.autograd.grad(L, params)
        # the gradient at the unit-norm point, same minibatch, other parameters unchanged
        units = {m: (W / _frob(W)).detach().requires_grad_(True) for m, W in zip(MATRICES, mats, strict=True)}
        unit_grads = torch.autograd.grad(model.loss(tokens, units), [units[m] for m in MATRICES])
        g_mats = np.stack([grads[i].numpy() for i in where])
        ghat2[t] = np.array([float(np.sum(u.numpy() ** 2)) for u in unit_grads])
        g2[t] = np.sum(g_mats**2, axis=(1, 2))
        gn = np.sqrt(g2[t])
        radial[t] = np.abs(np.sum(g_mats * W_now, axis=(1, 2))) / (gn * np.sqrt(R[t]))
        loss[t] = float(L.detach())
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p.mul_(c).sub_(lr * g)
        W_next = current()
        R[t + 1] = np.sum(W_next**2, axis=(1, 2))
        tan[t] = np.tan(angle(W_now, W_next))
        if spectra:
            sq[t + 1] = sqrt_spectrum(W_next)
        W_now = W_next
    out = {"R": R, "ghat2": ghat2, "g2": g2, "radial": radial, "tan": tan, "loss": loss}
    if spectra:
        out["sqrt_p"] = sq
    return out
