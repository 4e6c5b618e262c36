"""Chapter 'sosd-norm-growth': the stability of the singular distribution (paper 17 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="sosd-norm-growth",
    title="The Stability of Singular Distribution: norm growth freezes the spectrum",
    paper=17,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("r", 32, "int", "size r x r of the aligned model's matrices (C2, C5)", low=4, high=64),
        Param("kappa_small", 0.05, "float", "first effective step eta alpha^2 / ||W_0||^2 of the slow aligned run",
              low=0.005, high=0.2),
        Param("kappa_big", 0.8, "float", "first effective step of the fast aligned run (<= 1: no overshoot)",
              low=0.3, high=1.0),
        Param("T_aligned", 2000, "int", "GD steps of each aligned run", low=500, high=5000),
        Param("d", 12, "int", "the noise model's matrices are d x d (C1, C3, C4, C6)", low=4, high=24),
        Param("B", 4, "int", "minibatch size of the noise model", low=1, high=64),
        Param("S", 16, "int", "independent runs (seeds) of the noise model, simulated as one batch", low=4, high=64),
        Param("T_noise", 8192, "int", "SGD steps of each noise-model run", low=2048, high=32768),
        Param("eta", 0.05, "float", "SGD learning rate of the noise model", low=0.005, high=0.2),
        Param("lam", 0.01, "float", "decoupled weight decay of the weight-decay runs (C1, C4)", low=0.001, high=0.1),
        Param("alpha", 1.0, "float", "output scale of the normalised layer x -> alpha W x / ||W||", low=0.25,
              high=4.0),
        Param("w0_scale", 1.0, "float", "Frobenius norm of the noise model's start W_0", low=0.25, high=4.0),
        Param("T_muon", 256, "int", "steps of the Muon run (C6; 4 of the S runs)", low=64, high=2048),
        Param("T_autograd", 256, "int", "steps of the autodiff runs of the noise model (C4b)", low=32, high=2048),
        Param("vocab", 16, "int", "vocabulary of the Transformer's Markov-chain language (C1, C2c)", low=4, high=64),
        Param("d_model", 32, "int", "width of the Transformer; W_Q, W_K, W_V, W_O are d_model x d_model", low=8,
              high=48),
        Param("seq", 16, "int", "context length of the Transformer", low=4, high=64),
        Param("batch", 32, "int", "sequences per SGD minibatch of the Transformer", low=4, high=128),
        Param("T_tf", 400, "int", "SGD steps of each Transformer run", low=50, high=2000),
        Param("lr_tf", 0.3, "float", "the Transformer's SGD learning rate", low=0.01, high=1.0),
        Param("lam_tf", 0.01, "float", "decoupled weight decay of the Transformer's second run", low=0.001,
              high=0.1),
        Param("w0_tf", 1.0, "float", "Frobenius norm of each raw attention matrix at the start (sets the first "
              "effective step lr / ||W||^2)", low=0.25, high=4.0),
    ),
    alternatives={
        "A": {"seed": 1, "r": 16, "kappa_small": 0.1, "d": 8, "B": 8, "eta": 0.1, "lam": 0.005},
        "B": {"seed": 2, "r": 48, "kappa_small": 0.02, "d": 16, "B": 2, "eta": 0.02, "lam": 0.05,
              "T_noise": 12288},
    },
    relations=(
        Relation(("T_noise", "eta", "lam"),
                 "T_noise * eta * lam >= 4: the window [T/2, T] of C4 starts after 8 relaxation times 1/(4 eta lam)",
                 lambda v: v["T_noise"] * v["eta"] * v["lam"] >= 4,
                 violating={"T_noise": 4096}, satisfying={"lam": 0.02}),
    ),
    proves=(
        "For scale-invariant losses, SGD grows ||W|| exactly "
        "(||W'||^2 = (1-eta lam)^2 ||W||^2 + eta^2 ghat^2/||W||^2), "
        "so the spectral steps obey a log-norm budget, shrink like t^(-1/2) (||W|| ~ t^(1/4)) or settle at "
        "sqrt(2 eta lam) with weight decay; in an aligned model the root-loss decrease is bounded, sharply, "
        "by the Hellinger variation of the spectrum"
    ),
    checks=(
        "A tiny causal attention language model with weight-normalised W_Q, W_K, W_V, W_O: the exact norm and "
        "angle identities and the budget per matrix; a normalised linear layer: the sharp budget and the "
        "loss-spectrum bound against the exact 2-D recursion, the t^(1/4) exponent, the weight-decay "
        "equilibrium and its (eta, lam) invariance, and the universal bound for Muon updates"
    ),
)
