"""Chapter 'lowrank-residual-coresets': Data selection by low-rank approximation and residual sampling
(paper 10 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="lowrank-residual-coresets",
    title="Data selection by low-rank approximation and residual sampling",
    paper=10,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("n", 4000, "int", "points (rows of the embedding matrix)", low=500, high=40_000),
        Param("d", 60, "int", "embedding dimension (before the bias coordinate)", low=10, high=200),
        Param("k", 5, "int", "signal rank (the bias adds one more direction)", low=1, high=20),
        Param("spectrum", "linear", "str", "signal scales: 'linear' 5..2 or 'geometric' 5 * 0.6^j",
              choices=("linear", "geometric")),
        Param("noise_list", [0.02, 0.04, 0.08, 0.16, 0.32], "float_list", "noise levels nu of the Phi sweep",
              low=0.005, high=1.0, min_len=3, max_len=8, increasing=True),
        Param("noise", 0.08, "float", "noise level of the exactness and m-sweep experiments",
              low=0.005, high=1.0),
        Param("rounds", 3, "int", "rounds of adaptive row sampling, 2 (k + 1) rows each", low=1, high=6),
        Param("m", 64, "int", "residual samples per estimate (the Phi sweep and the guarantees)",
              low=8, high=4096),
        Param("m_list", [16, 32, 64, 128, 256, 512, 1024], "int_list", "sample sizes of the m sweep",
              low=4, high=2048, min_len=3, max_len=10, increasing=True),
        Param("reps", 3000, "int", "independent estimates per cell", low=500, high=10_000),
        Param("delta", 0.05, "float", "failure probability of the guarantees", low=0.001, high=0.2),
        Param("enum_n", 14, "int", "rows of the enumerated volume-sampling matrix (8 columns)", low=8, high=20),
    ),
    alternatives={
        "A": {"seed": 1, "n": 20_000, "d": 100, "k": 10, "rounds": 4},
        "B": {"seed": 2, "n": 2000, "d": 30, "k": 3, "m": 256, "spectrum": "geometric"},
    },
    relations=(
        Relation(("k", "rounds", "d"), "2 (k + 1) rounds <= d (the selected rows stay independent)",
                 lambda v: 2 * (v["k"] + 1) * v["rounds"] <= v["d"],
                 violating={"k": 9, "rounds": 4}, satisfying={"k": 4, "rounds": 4}),
    ),
    proves=(
        "volume sampling's exact expected cost, the adaptive-sampling bound, and the weighted coreset "
        "from residual sampling: unbiased, exact variance, Hoeffding and relative-error guarantees"
    ),
    checks=(
        "exact enumeration on a 14 x 8 matrix, and synthetic low-rank-plus-noise embeddings with "
        "linear and constructed angular losses, swept over the noise level and the sample size"
    ),
)
