"""Chapter 'heavy-tail-clipped-sgd': Stability and Generalization of Nonconvex Optimization with Heavy-Tailed
Noise (paper 4 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

import math

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation


def _informative(v: dict) -> bool:
    """2 tau0 H_{n_small} E|N(0,1)| < Var N(0,1) = 1: the first-moment bound lies below the exact unclipped
    gap at Gaussian noise, which the bound experiment always includes (so the relation is necessary), and
    then at every Student-t noise (so it is sufficient): t_nu = Z S with S = (V/nu)^(-1/2), V ~ chi2_nu
    independent of Z ~ N(0,1), E S >= (E V/nu)^(-1/2) = 1 by Jensen, so Var t / E|t| = E S^2 / (E|Z| E S)
    >= E S / E|Z| >= 1 / E|Z|."""
    harmonic = sum(1.0 / k for k in range(1, int(v["n_small"]) + 1))
    return 2.0 * v["tau0"] * harmonic * math.sqrt(2.0 / math.pi) < 1.0


CHAPTER = Chapter(
    slug="heavy-tail-clipped-sgd",
    title="Stability and Generalization of Nonconvex Optimization with Heavy-Tailed Noise",
    paper=4,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("lam", 1.0, "float", "curvature lambda of the loss (lam/2)||w||^2 - <w, z>", low=0.25, high=4.0),
        Param("d", 3, "int", "dimension of the exact-gap and stability experiments", low=1, high=8),
        Param("n", 100, "int", "sample size (= number of SGD steps) of the exact-gap, stability and "
              "small-tau experiments", low=60, high=300),
        Param("n_small", 30, "int", "sample size of the bound experiment", low=10, high=100),
        Param("tau0", 0.15, "float", "clipping level of the bound experiment", low=0.01, high=0.5),
        Param("nus", [4.5, 6.0, 10.0], "float_list", "Student-t degrees of freedom of the bound experiment "
              "(> 4: finite 4th moments)", low=4.5, high=100.0, min_len=1, max_len=5, increasing=True),
        Param("R_gap", 20000, "int", "replicates per setting of the gap experiments", low=5000, high=100_000),
        Param("R_pair", 4000, "int", "coupled pairs per setting of the stability experiment", low=1000,
              high=20000),
        Param("tau_small", [0.01, 0.02, 0.04, 0.08], "float_list", "clipping levels of the small-tau "
              "experiment", low=0.005, high=0.1, min_len=3, max_len=6, increasing=True),
        Param("R_small", 80000, "int", "replicates of the small-tau experiment", low=20000, high=200_000),
        Param("pareto_nu", 1.5, "float", "tail index of the Pareto law of the truncation experiment", low=1.2,
              high=1.9),
        Param("R_trunc", 4_000_000, "int", "Pareto draws of the truncation experiment", low=1_000_000,
              high=20_000_000),
        Param("tau_trunc", [3.0, 10.0, 30.0, 100.0], "float_list", "truncation levels", low=1.0, high=1000.0,
              min_len=3, max_len=6, increasing=True),
        Param("nu_grad", 1.5, "float", "tail index of the symmetric Pareto noise of the gradient-gap "
              "experiment", low=1.3, high=1.6),
        Param("R_grad", 20000, "int", "replicates per sample size of the gradient-gap experiment", low=5000,
              high=100_000),
    ),
    alternatives={
        "A": {"seed": 1, "d": 2, "n": 60, "n_small": 20, "tau0": 0.1, "nus": [5.0, 8.0], "pareto_nu": 1.3,
              "nu_grad": 1.4},
        "B": {"seed": 2, "lam": 0.5, "d": 5, "n": 150, "n_small": 40, "tau0": 0.12, "pareto_nu": 1.8},
    },
    relations=(
        Relation(("tau0", "n_small"), "2 tau0 H(n_small) sqrt(2/pi) < 1 (the bound below the unclipped gap)",
                 _informative, violating={"tau0": 0.3}, satisfying={"tau0": 0.1}),
    ),
    proves=(
        "for clipped SGD on a strongly convex quadratic-linear loss with heavy-tailed noise: the exact gap of "
        "unclipped SGD, pathwise stability 2 tau sum eta, a first-moment gap bound sharp up to 2 as tau -> 0, "
        "the truncation lemma, the n^(1/p-1) rate of the gradient gap, and pathwise stability in gradients "
        "of clipped SGD for least squares"
    ),
    checks=(
        "by simulation: the exact unclipped gap, the pathwise bound and its sharpness, the gap bound at "
        "Student-t noise, the small-tau constant, Pareto truncation exponents and the heavy-tailed "
        "gradient-gap exponent, and the least-squares stability in gradients"
    ),
)
