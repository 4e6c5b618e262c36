"""Chapter 'dpo-choice-models': DPO as a proper score for human choice models (paper 5 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(
    slug="dpo-choice-models",
    title="DPO as a proper score for human choice models",
    paper=5,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("K", 6, "int", "number of responses to the one context", low=3, high=8),
        Param("beta", 0.5, "float", "KL-regularization strength of the normative objective", low=0.05, high=5.0),
        Param("reward_scale", 1.0, "float", "r* ~ reward_scale N(0, I), centered", low=0.1, high=3.0),
        Param("max_gap", 2.0, "float", "r* is shrunk so that max |r*_i - r*_j| <= max_gap", low=0.2, high=2.0),
        Param("N_grid", [1000, 2000, 4000, 8000, 16000], "int_list", "comparisons per replicate in the rate "
              "experiment", low=1000, high=64000, min_len=3, max_len=8, increasing=True),
        Param("R", 600, "int", "replicates per N in the rate experiment", low=100, high=2000),
        Param("gamma_rate", 2.0, "float", "margin of the margin-DPO loss fitted to Bradley-Terry data in the "
              "rate experiment", low=1.0, high=3.0),
        Param("gamma_grid", [0.0, 0.5, 1.0, 2.0], "float_list", "margins gamma", low=0.0, high=3.0,
              min_len=1, max_len=6, increasing=True),
        Param("p_grid", [0.55, 0.7, 0.9], "float_list", "win probabilities of the two-response margin check",
              low=0.05, high=0.95, min_len=1, max_len=8, increasing=True),
        Param("n_inits", 20, "int", "random starts of every population fit", low=1, high=50),
        Param("alpha_len", 0.3, "float", "length bias of the annotator", low=0.0, high=1.0),
        Param("N_k2", 20000, "int", "comparisons per reward gap in the two-response check", low=2000,
              high=200_000),
    ),
    alternatives={
        "A": {"seed": 1, "K": 4, "beta": 0.1, "reward_scale": 1.5, "max_gap": 1.8},
        "B": {"seed": 2, "K": 8, "beta": 1.0, "reward_scale": 0.5, "N_grid": [2000, 4000, 8000, 16000, 32000]},
    },
    proves=(
        "tabular DPO with any strictly proper score and any compliant link recovers the normative optimum "
        "exactly when the link is the annotators' choice model, convex or not; closed forms under "
        "misspecification on trees, margins and length correction as choice models, Fisher and sandwich "
        "asymptotics"
    ),
    checks=(
        "one context with K responses: exact population minimizers for every (choice model, loss) pair "
        "of the grid, closed forms to rounding, the curvature sign by finite differences, and by simulation "
        "the N^(-1/2) rate with its Fisher and sandwich constants and the misspecified limit"
    ),
)
