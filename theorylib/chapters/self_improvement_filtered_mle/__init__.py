"""Chapter 'self-improvement-filtered-mle': A Task-Centric Theory for Iterative Self-Improvement with Easy-to-Hard
Curricula (paper 11 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="self-improvement-filtered-mle",
    title="A Task-Centric Theory for Iterative Self-Improvement with Easy-to-Hard Curricula",
    paper=11,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d", 10, "int", "prompt dimension; the skip rule updates only with N >= 2d accepted pairs",
              low=4, high=16),
        Param("sigma", 0.8, "float", "sampling temperature: the policy's answer noise", low=0.5, high=2.0),
        Param("tau", 1.6, "float", "verifier tolerance", low=1.0, high=4.0),
        Param("n", 100, "int", "tasks per round", low=50, high=400),
        Param("T", 12, "int", "rounds of the curriculum experiment", low=4, high=30),
        Param("e0", 25.0, "float", "initial squared error |theta_0 - theta*|^2 of the curriculum experiment",
              low=5.0, high=100.0),
        Param("R_accept", 400, "int", "replicates per cell of the acceptance experiment", low=100, high=4000),
        Param("R_onestep", 4000, "int", "replicates per cell of the one-step experiment", low=1000, high=40000),
        Param("n_stall", 250, "int", "tasks per round of the hard-only stall experiment", low=50, high=1000),
        Param("R_curr", 400, "int", "replicates per schedule of the curriculum experiment", low=100, high=4000),
        Param("m_eval", 1000, "int", "fresh hard tasks that measure each final policy's reward", low=200,
              high=10000),
        Param("n_sweep", [100, 200, 400, 800], "int_list", "tasks per round in the plateau experiment",
              low=50, high=3200, min_len=3, max_len=6, increasing=True),
        Param("T_plateau", 30, "int", "rounds of the plateau experiment", low=10, high=100),
        Param("burn", 10, "int", "rounds discarded before averaging the plateau", low=5, high=50),
        Param("R_plateau", 200, "int", "replicates per n of the plateau experiment", low=50, high=2000),
        Param("n_boot", 2000, "int", "bootstrap resamples of the plateau slope", low=500, high=20000),
    ),
    alternatives={
        "A1": {"seed": 1, "d": 6, "tau": 1.2, "n": 80, "e0": 16.0, "n_stall": 150},
        "A2": {"seed": 2, "d": 16, "sigma": 1.0, "tau": 2.0, "n": 200, "e0": 40.0, "n_stall": 600},
    },
    relations=(
        Relation(("burn", "T_plateau"), "burn + 5 <= T_plateau",
                 lambda v: v["burn"] + 5 <= v["T_plateau"], violating={"burn": 30}, satisfying={"burn": 10}),
        Relation(("n_sweep", "d", "sigma", "tau"),
                 "min(n_sweep) tau / sqrt(sigma^2 + tau^2) >= 4 d (an easy-only plateau exists)",
                 lambda v: min(v["n_sweep"]) * v["tau"] / (v["sigma"] ** 2 + v["tau"] ** 2) ** 0.5 >= 4 * v["d"],
                 violating={"d": 16, "n_sweep": [50, 100, 200]}, satisfying={"n_sweep": [100, 200, 400]}),
    ),
    proves=(
        "in a linear-Gaussian policy with a soft verifier, reward-filtered MLE has an exact filtered law, "
        "an exact one-step mean map (feedback loop through the accepted count, Theta(1/n) plateau) and a "
        "data-optimal difficulty k*(J) that grows as the model improves (easy-to-hard)"
    ),
    checks=(
        "by simulation with a Bernoulli verifier and least squares: acceptance J(e)^k, the noise energy "
        "and the exact one-step mean, the 1/n plateau slope, the exact stall law of hard-only training, and "
        "the greedy easy-to-hard curriculum beating the fixed mixture and easy-only training"
    ),
)
