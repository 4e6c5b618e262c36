"""Chapter 'adversarial-vit-benign-overfitting' (paper 15 of the ICML 2026 list).

Benign overfitting in adversarial training for vision transformers.

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(
    slug="adversarial-vit-benign-overfitting",
    title="Benign overfitting in adversarial training for vision transformers",
    paper=15,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d", 400, "int", "patch dimension", low=100, high=800),
        Param("P", 4, "int", "patches per input (patch 0 carries the signal)", low=2, high=8),
        Param("sigma", 1.0, "float", "noise level of the noise patches", low=0.5, high=2.0),
        Param("N", 32, "int", "training samples", low=8, high=64),
        Param("rho", 0.1, "float", "label-flip probability of the one-step and attention experiments",
              low=0.0, high=0.2),
        Param("eps", 0.5, "float", "Frobenius budget of the attack on the whole input", low=0.0, high=1.0),
        Param("M_test", 40000, "int", "attacked test points of the Monte-Carlo risk check", low=5000,
              high=400_000),
        Param("R_onestep", 400, "int", "training sets per cell of the one-step check", low=100, high=4000),
        Param("K_test", 16, "int", "fresh attacked test points per training set in the one-step check",
              low=1, high=64),
        Param("R_att", 200, "int", "training sets per grid point of the attention check", low=50,
              high=2000),
        Param("R_prec", 40000, "int", "small training sets of the main cell of the precise increment check",
              low=10000, high=200_000),
        Param("n_attack", 20, "int", "random models on which PGD is run", low=5, high=200),
        Param("T", 1500, "int", "adversarial-GD steps of the long runs", low=500, high=5000),
        Param("lr_v_scale", 0.5, "float", "the step of v is lr_v_scale P^2 / d", low=0.1, high=1.0),
        Param("lr_s", 1.0, "float", "step of the attention scores", low=0.1, high=2.0),
        Param("rho_long", 0.0, "float", "label-flip probability of the long runs", low=0.0, high=0.1),
        Param("mu_mult_benign", 2.0, "float", "||mu|| of the benign runs, in units of sigma sqrt(d / N)",
              low=1.5, high=4.0),
        Param("mu_mult_harmful", 0.5, "float", "||mu|| of the harmful runs, in units of sigma sqrt(d / N)",
              low=0.25, high=0.6),
        Param("n_runs", 3, "int", "independent training sets per regime in the long runs", low=1, high=10),
        Param("M_long", 4000, "int", "attacked test points per long-run model", low=1000, high=40000),
        Param("N_phase", [4, 8, 16, 32], "int_list", "training-set sizes of the phase-boundary experiment",
              low=2, high=64, min_len=3, increasing=True),
        Param("seeds_phase", 6, "int", "independent training sets per N and architecture in the phase "
              "boundary", low=3, high=12),
        Param("T_phase", 1000, "int", "adversarial-GD steps of the phase-boundary runs", low=500, high=3000),
        Param("n_grid", 33, "int", "log-spaced signal norms of the phase-boundary grid", low=9, high=65),
    ),
    alternatives={
        "A1": {"seed": 1, "d": 600, "P": 3, "eps": 0.25},
        "A2": {"seed": 2, "d": 300, "P": 6, "sigma": 1.5, "eps": 0.6},
    },
    proves=(
        "for positional attention and a Frobenius attack: the exact inner maximization and robust risk, the "
        "exact law of the one-step robust error, the N SNR^2 threshold at which attention turns to the "
        "signal (proportional to N^(-1/2)), against the N^(-1/4) of one pooling step"
    ),
    checks=(
        "PGD against the closed-form attack, Monte-Carlo robust risk, the one-step law over training sets, the "
        "attention threshold by regression and the two terms of the increment resolved on small training sets, "
        "benign versus harmful robust interpolation in long GD runs, and the exponents of the phase boundary "
        "over N for learned and frozen attention"
    ),
)
