"""Chapter 'voting-margin-bounds': Tight Margin-Based Generalization Bounds for Voting Classifiers over
Finite Hypothesis Sets (paper 8 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

MAX_CLASS = 40_000  # base hypotheses N0 of the largest random-label class (memory and LP time)

CHAPTER = Chapter(
    slug="voting-margin-bounds",
    title="Tight Margin-Based Generalization Bounds for Voting Classifiers over Finite Hypothesis Sets",
    paper=8,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("k_list", [8, 32, 128], "int_list", "sizes k of the sparsifications (C1)", low=1, high=512,
              min_len=1, max_len=4, increasing=True),
        Param("reps_sparsify", 20000, "int", "sparsifications drawn per size k (C1)", low=2000, high=100_000),
        Param("theta_sparsify", 0.5, "float", "margin theta of the Hoeffding tails (C1b)", low=0.05, high=1.0),
        Param("n_chernoff", [50, 200, 1000, 5000], "int_list", "sample sizes of the exact Chernoff grid (C2)",
              low=10, high=20_000, min_len=1, max_len=6, increasing=True),
        Param("n_list", [16, 23, 32, 45, 64, 90, 128], "int_list", "training-set sizes of the random-label "
              "instances (C3, C4)", low=8, high=160, min_len=3, max_len=10, increasing=True),
        Param("N_power", 2.0, "float", "N0 = n^N_power base hypotheses (|H| = 2 N0, negations included)",
              low=1.25, high=2.5),
        Param("seeds_per_n", 8, "int", "random-label instances per n", low=3, high=20),
        Param("n_pool", [32, 64], "int_list", "sizes n of the class-size comparison (C3b)", low=8, high=160,
              min_len=1, max_len=4, increasing=True),
        Param("power_list", [1.5, 2.0, 2.5], "float_list", "powers N0 = n^a compared in C3b", low=1.25,
              high=2.5, min_len=2, max_len=4, increasing=True),
        Param("n_test", 20000, "int", "fresh test points per instance (C4)", low=2000, high=200_000),
        Param("delta", 0.05, "float", "failure probability of the bounds (C4)", low=0.001, high=0.2),
    ),
    relations=(
        Relation(("n_list", "N_power"), f"round(max(n_list)^N_power) <= {MAX_CLASS}",
                 lambda v: round(max(v["n_list"]) ** v["N_power"]) <= MAX_CLASS,
                 violating={"N_power": 2.5}, satisfying={"N_power": 2.1}),
        Relation(("n_pool", "power_list"), f"round(max(n_pool)^max(power_list)) <= {MAX_CLASS}",
                 lambda v: round(max(v["n_pool"]) ** max(v["power_list"])) <= MAX_CLASS,
                 violating={"n_pool": [32, 128]}, satisfying={"n_pool": [32, 60]}),
    ),
    alternatives={
        "A": {"seed": 1, "N_power": 1.5, "seeds_per_n": 6},
        "B": {"seed": 2, "N_power": 2.5, "n_list": [16, 23, 32, 45, 64], "k_list": [16, 64, 256]},
    },
    proves=(
        "an explicit relative margin bound L_D <= tau + 2 eta_k + sqrt(2 (tau + eta_k) Lambda_k / n) "
        "+ 2 Lambda_k / n for voting classifiers over a finite class, via sparsification and a "
        "multiplicative Chernoff bound, with the ln|H|/theta^2 fast term at tau = 0; the paper's tight "
        "bound is stated and cited"
    ),
    checks=(
        "the exact binomial law of sparsified margins, Hoeffding and Chernoff tails exactly and by "
        "simulation, the attainable margin of random-label classes (theta* ~ sqrt(ln(N0/n)/n), by LP), "
        "that the proved bound survives the random-label falsification test a 1/theta capacity fails, "
        "and, exactly, that it holds at tau > 0 for empirical risk minimization over a large class"
    ),
)
