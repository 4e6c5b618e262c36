"""Declaration of the chapter 'hellinger-tv-mixtures'."""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="hellinger-tv-mixtures",
    title="Hellinger versus total variation for Gaussian location mixtures",
    paper=7,
    params=(
        Param("M", 1.0, "float", "mixing measures live on [-M, M]", low=0.25, high=2.0),
        Param("L_max", 38, "int", "largest L of the sweep L = 6, 6 + L_step, ... (pairs match L tilted moments)",
              low=26, high=50),
        Param("L_step", 4, "int", "step of the L sweep (every L of the finite-difference pair is even)", low=2,
              high=8, multiple_of=2),
        Param("n_random_pairs", 200, "int", "random discrete pairs in the inequality test bed", low=10, high=2000),
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("n_cheb_max", 31, "int", "largest degree n of the paper's Chebyshev construction (n = 11, 15, ...)",
              low=15, high=39),
        Param("quad_panels", 40, "int", "Gauss-Legendre panels on [0, X] for the measured TV and H", low=20, high=160),
        Param("quad_nodes", 20, "int", "Gauss-Legendre nodes per panel", low=10, high=40),
    ),
    alternatives={
        "A": {"M": 0.5, "L_max": 46},
        "B": {"M": 2.0, "L_max": 30},
    },
    relations=(
        # the asymptotic fits (C2, C3) run over the L >= 10 of the sweep and need at least 5 of them
        Relation(("L_max", "L_step"), "at least 5 values L >= 10 in the sweep 6, 6 + L_step, ..., <= L_max",
                 lambda v: sum(L >= 10 for L in range(6, v["L_max"] + 1, v["L_step"])) >= 5,
                 violating={"L_step": 8, "L_max": 40}, satisfying={"L_step": 8, "L_max": 46}),
    ),
    proves=(
        'For Gaussian location mixtures with mixing measures on a ball of R^d, H ≤ TV^(1 - o(1)) with an '
        'explicit bound; a tilted moment-matching pair shows that the loss in the exponent is sharp up to '
        'its constant'
    ),
    checks=(
        'one dimension: closed forms and asymptotics of TV and H for the tilted pair, at high precision, '
        'and the inequalities on random pairs; two dimensions: a product of tilted pairs'
    ),
)
