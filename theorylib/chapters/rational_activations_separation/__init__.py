"""Chapter 'rational-activations-separation': Rational Neural Networks have Expressivity Advantages (paper 18 of the
ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="rational-activations-separation",
    title="Rational neural networks have expressivity advantages",
    paper=18,
    params=(
        Param("seed", 0, "int", "draws the random evaluation points added to every grid", low=0),
        Param("ell_list", [1e-2, 1e-6, 1e-10], "float_list", "left ends ell of the sign experiment",
              low=1e-12, high=0.5, min_len=1, max_len=6),
        Param("k_sign", 8, "int", "sign networks of depth 1..k_sign are measured", low=1, high=10),
        Param("n_grid", 100_000, "int", "log-spaced grid points of every sup-norm", low=10_000, high=400_000),
        Param("n_random", 1000, "int", "random log-uniform points added to every grid", low=0, high=20_000),
        Param("eps_min", 1e-14, "float", "smallest target error of the depth experiment", low=1e-14,
              high=1e-3),
        Param("n_eps", 27, "int", "target errors, log-spaced in [eps_min, 0.1]", low=3, high=60),
        Param("k_list", [2, 4, 8, 16, 32, 64, 128], "int_list", "pieces of the PL fits (LP)", low=1, high=256,
              min_len=2, max_len=10, increasing=True),
        Param("M_per_piece", 64, "int", "LP grid points per piece", low=2, high=256),
        Param("m_max", 12, "int", "sawtooth networks with m = 1..m_max levels (2m ReLU neurons)", low=1,
              high=14),
    ),
    relations=(
        Relation(("ell_list",), "the values of ell_list are distinct (to 6 significant digits)",
                 lambda v: len({f"{x:g}" for x in v["ell_list"]}) == len(v["ell_list"]),
                 violating={"ell_list": [1e-2, 1e-2]}, satisfying={"ell_list": [1e-2, 1e-3]}),
    ),
    alternatives={
        "A": {"ell_list": [1e-3, 1e-8], "n_grid": 40_000, "eps_min": 1e-10, "n_eps": 15,
              "k_list": [2, 4, 8, 16, 32, 64], "m_max": 10},
        "B": {"seed": 1, "ell_list": [1e-4, 1e-12], "n_grid": 200_000, "eps_min": 1e-13, "n_eps": 40,
              "M_per_piece": 128},
    },
    proves=(
        "a rational network of 1 + 3(k - 1) neurons of type <= (2, 1) (scaled Newton for the sign) approximates "
        "|x| and ReLU to eps with k = O(log log 1/eps), while a network of N two-piece PL neurons needs "
        "N >= log2(1/(8 eps))/2 to approximate the one-neuron rational x^2"
    ),
    checks=(
        "the exact sign error 1 - ell_k of the networks, their measured depth against K(eps, eps), the LP "
        "minimax 1/(8k^2) of PL fits to x^2, and the exact error 2^(-2m-2) and 2^m pieces of the ReLU sawtooth"
    ),
)
