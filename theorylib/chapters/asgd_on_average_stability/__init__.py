"""Chapter 'asgd-on-average-stability': on-average model stability of asynchronous SGD (paper 16).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="asgd-on-average-stability",
    title="Sharper generalization guarantees for asynchronous SGD",
    paper=16,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d", 3, "int", "dimension of w and z", low=1, high=5),
        Param("sigma", 0.8, "float", "noise level: z ~ N(mu, sigma^2 I_d)", low=0.1, high=3.0),
        Param("m", 4, "int", "workers of the stability cells (C1)", low=2, high=16),
        Param("n", 32, "int", "samples per worker (C1: at least ceil(12/(eta m)); C2)", low=4, high=64),
        Param("eta", 0.1, "float", "step size of C1 and C2", low=0.01, high=0.5),
        Param("tau", 3, "int", "maximal delay (C1, C2, C3, C5); the schedule is tau_t = min(t, tau)", low=0,
              high=6),
        Param("T", 200, "int", "steps of C1 and C2", low=20, high=300),
        Param("R_c1", 1500, "int", "replicates per stability cell (C1)", low=300, high=5000),
        Param("R_gap", 2000, "int", "replicates per gap cell (C2)", low=300, high=10000),
        Param("p_dom", 0.55, "float", "participation of the dominant worker (C1, C2)", low=0.2, high=0.9),
        Param("T_small", 32, "int", "steps of the rate experiment, T << N (C3)", low=8, high=64),
        Param("R_rate", 2000, "int", "replicates per sample size (C3)", low=300, high=5000),
        Param("eta_small", 2e-3, "float", "step size of the sharpness experiment (C4)", low=1e-4, high=0.01),
        Param("T_bound", 128, "int", "steps of the sharpness experiment (C4); T/N runs over 1/16 .. 64", low=64,
              high=128, multiple_of=64),
        Param("tau_bound", 2, "int", "the delayed run of the sharpness experiment (C4; the other has 0)",
              low=1, high=3),
        Param("R_bound", 500, "int", "replicates per sample size (C4)", low=200, high=2000),
        Param("c0", 0.5, "float", "step size eta = c0 / sqrt(N), T = N (C5)", low=0.1, high=2.0),
        Param("r0sq", 4.0, "float", "||w_0 - mu||^2 (all runs)", low=0.0, high=25.0),
        Param("R_excess", 400, "int", "replicates per sample size (C5)", low=100, high=1000),
    ),
    alternatives={
        "A": {"seed": 1, "d": 5, "sigma": 0.5, "m": 8, "n": 16, "eta": 0.05, "tau": 5},
        "B": {"seed": 2, "d": 2, "m": 2, "n": 64, "eta": 0.2, "tau": 0, "p_dom": 0.7},
    },
    relations=(
        Relation(("eta", "tau"), "eta <= 2 / (1 + 2 tau) (the stability theorem's step size, L = 1)",
                 lambda v: v["eta"] * (1 + 2 * v["tau"]) <= 2, violating={"eta": 0.4},
                 satisfying={"eta": 0.2}),
        # C5's largest step is c0 / sqrt(64) (its smallest sample size, model.N_GRID_EXCESS[0] = 64); beyond
        # the theorem's condition the delayed recursion can diverge (at c0 = 2, tau = 6 it does)
        Relation(("c0", "tau"), "c0 / 8 <= 2 / (1 + 2 tau): C5's largest step eta = c0 / sqrt(64) obeys the "
                 "stability theorem's step size", lambda v: v["c0"] * (1 + 2 * v["tau"]) <= 16,
                 violating={"c0": 2.0, "tau": 6}, satisfying={"c0": 1.2, "tau": 6}),
    ),
    proves=(
        "For convex L-smooth losses, asynchronous SGD with arbitrary delays <= tau and worker participation q "
        "has on-average model stability <= 8 e L eta^2 q_max (1 + tau + q_max T) sum_t E F_S^q, hence an "
        "optimistic generalization bound; for the Gaussian mean the stability, gap and excess risk are exact"
    ),
    checks=(
        "Coupled ASGD runs on the Gaussian mean: exact stability with delays and participation, the gap "
        "d sigma^2 Q (1 - phi_T), the 1/N rate, the bound's sharpness over T/N, the excess-risk rates"
    ),
)
