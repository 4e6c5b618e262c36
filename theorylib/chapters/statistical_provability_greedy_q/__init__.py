"""Chapter 'statistical-provability-greedy-q': Statistical provability of greedy provers (paper 13 of the ICML
2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="statistical-provability-greedy-q",
    title="Statistical provability of greedy provers",
    paper=13,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("S", 40, "int", "states of the random MDPs (goal, dead and S - 2 live)", low=5, high=100),
        Param("A", 4, "int", "tactics (actions) of the random MDPs", low=2, high=8),
        Param("H", 12, "int", "horizon (proof budget) of the random MDPs", low=1, high=30),
        Param("n_mdps", 50, "int", "random MDPs per experiment (C1 and C2)", low=5, high=500),
        Param("q_noise", 0.2, "float", "sd of the Gaussian action-value error in C2", low=0.01, high=1.0),
        Param("K", 4, "int", "tactics per step of the binary chain (one live, K - 1 fatal)", low=2, high=10),
        Param("sigma_q", 0.35, "float", "sd of the score noise on the binary chain", low=0.2, high=2.0),
        Param("L_list", [1, 2, 4, 8, 16, 32, 64], "int_list", "lengths of the binary chain", low=1,
              high=128, min_len=2, max_len=10, increasing=True),
        Param("n_episodes", 20000, "int", "simulated episodes per length", low=1000, high=200_000),
        Param("n_inst", 400, "int", "stochastic-chain instances", low=100, high=2000),
        Param("L_chain", 8, "int", "length of the stochastic chain", low=1, high=20),
        Param("p_low", 0.5, "float", "tactic success probabilities are U(p_low, 1)", low=0.05, high=0.95),
        Param("m_list", [512, 1024, 2048, 4096], "int_list", "Monte-Carlo labels per state and tactic",
              low=16, high=16384, min_len=2, max_len=8, increasing=True),
        Param("m_small", [8, 16, 32], "int_list", "small label budgets, added to m_list in C4a only", low=2,
              high=256, min_len=1, max_len=6, increasing=True),
        Param("R_rep", 200, "int", "independent label draws per m", low=5, high=1000),
        Param("n_boot", 2000, "int", "bootstrap resamples for the slope", low=200, high=20000),
        Param("eps_wc", 0.05, "float", "uniform action-value error of the worst-case chain", low=0.001,
              high=0.25),
        Param("eta_wc", 0.01, "float", "slack of the worst-case chain (0 < eta < 2 eps)", low=1e-4, high=0.4),
        Param("L_wc", [2, 8, 32], "int_list", "lengths of the worst-case chain", low=1, high=256,
              min_len=1, max_len=8, increasing=True),
    ),
    alternatives={
        "A1": {"seed": 1, "S": 30, "H": 8, "K": 3, "sigma_q": 0.3, "L_chain": 6, "p_low": 0.6},
        "A2": {"seed": 2, "K": 6, "sigma_q": 0.4, "n_inst": 300, "m_list": [1024, 2048, 4096, 8192]},
    },
    relations=(
        Relation(("eps_wc", "eta_wc"), "eta_wc < 2 eps_wc", lambda v: v["eta_wc"] < 2 * v["eps_wc"],
                 violating={"eta_wc": 0.2}, satisfying={"eta_wc": 0.05}),
        Relation(("m_small", "m_list"), "max(m_small) < min(m_list)",
                 lambda v: max(v["m_small"]) < min(v["m_list"]),
                 violating={"m_list": [16, 512, 1024]}, satisfying={"m_small": [4, 64]}),
    ),
    proves=("A reachability MDP's optimal value is syntactic provability; the provability gap of a greedy prover "
            "equals its occupancy-weighted action gaps and is at most twice its occupancy-weighted errors, "
            "i.e. 2 eps times its mean truncated proof length; a bounded density of the action gap at 0 (margin "
            "exponent 1) gives the fast 1/m rate of the Monte-Carlo label noise"),
    checks=("Exact identities on random MDPs, closed forms on a binary chain (simulated), the exact "
            "Monte-Carlo-label gap and its rate, and a chain where the bound is attained up to eta"),
)
