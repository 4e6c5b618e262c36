"""Chapter 'invariant-subspace-rate': minimax rates and a phase transition for invariant subspaces (paper 6).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="invariant-subspace-rate",
    title="Minimax rates and a phase transition for invariant subspaces",
    paper=6,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d", 12, "int", "ambient dimension of the rate experiments (C1, C2)", low=3, high=24),
        Param("k", 4, "int", "dimension of the invariant subspace V (C1, C2)", low=1, high=20),
        Param("m", 24, "int", "number of environments |E| (C1, the n- and gamma-sweeps of C2)", low=3, high=64),
        Param("m_b", 9, "int", "number of environments of the second sweep of C1b (few environments)", low=2,
              high=64),
        Param("gamma", 0.5, "float", "separation: the shifts' covariance is gamma^2 on U (C1, C2)", low=0.2,
              high=1.5),
        Param("reps_exact", 40000, "int", "Monte-Carlo replicates per point of C1 (both sweeps)", low=4000,
              high=200_000),
        Param("reps_rate", 4000, "int", "Monte-Carlo replicates per point of C2", low=1000, high=100_000),
        Param("T_d", 40, "int", "ambient dimension of the transition experiment (C3)", low=6, high=48),
        Param("T_k", 10, "int", "dimension of V in the transition experiment (C3)", low=1, high=40),
        Param("T_m", 32, "int", "number of environments in the transition experiment (C3)", low=3, high=96),
        Param("eps", 0.25, "float", "success means dist^2 <= eps (C3)", low=0.05, high=1.0),
        Param("reps_trans", 4000, "int", "Monte-Carlo replicates per sample size of C3", low=1000, high=100_000),
    ),
    alternatives={
        "A": {"seed": 1, "d": 10, "k": 5, "m": 8, "m_b": 6, "gamma": 0.7, "T_d": 30, "T_k": 5, "T_m": 28},
        "B": {"seed": 2, "d": 20, "k": 1, "m": 24, "m_b": 20, "gamma": 0.3, "T_d": 40, "T_k": 10, "T_m": 48,
              "eps": 0.5},
    },
    relations=(
        Relation(("k", "d"), "1 <= k <= d - 1", lambda v: v["k"] <= v["d"] - 1,
                 violating={"k": 12}, satisfying={"k": 6}),
        Relation(("m", "d", "k"), "m >= d - k + 1 (the shifts span a (d - k)-dimensional U with sum zero)",
                 lambda v: v["m"] >= v["d"] - v["k"] + 1, violating={"m": 8}, satisfying={"m": 9}),
        Relation(("m_b", "d", "k"), "m_b >= d - k + 1 (as for m)", lambda v: v["m_b"] >= v["d"] - v["k"] + 1,
                 violating={"m_b": 8}, satisfying={"m_b": 9}),
        Relation(("T_k", "T_d"), "1 <= T_k <= T_d - 1", lambda v: v["T_k"] <= v["T_d"] - 1,
                 violating={"T_k": 40}, satisfying={"T_k": 20}),
        Relation(("T_m", "T_d", "T_k"), "T_m >= T_d - T_k + 1",
                 lambda v: v["T_m"] >= v["T_d"] - v["T_k"] + 1, violating={"T_m": 30}, satisfying={"T_m": 31}),
        Relation(("T_d", "T_k", "eps"),
                 "100 <= K <= 400 and K / eps >= 500 for K = T_k (T_d - T_k): the chi-square regime of C3",
                 lambda v: 100 <= v["T_k"] * (v["T_d"] - v["T_k"]) <= 400
                 and v["T_k"] * (v["T_d"] - v["T_k"]) / v["eps"] >= 500,
                 violating={"eps": 0.8}, satisfying={"eps": 0.5}),
    ),
    proves=(
        "For label-induced shifts across m environments, the spectral estimator of the invariant subspace has "
        "risk k(d-k)/(n m gamma^2) (1 + (m-d)/(n m gamma^2)) with a chi-square law, and no estimator beats "
        "min(1/48, n*/(64 n)): a transition at n* = k(d-k)/(m gamma^2) (pointwise in the instance)"
    ),
    checks=(
        "Gaussian environments with a balanced design: the exact constant and second-order term, the "
        "exponents in n, m and gamma, the chi-square transition, and the sufficient statistic"
    ),
)
