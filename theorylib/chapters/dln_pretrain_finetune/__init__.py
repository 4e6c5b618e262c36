"""Chapter 'dln-pretrain-finetune': A theory of how pretraining shapes inductive bias in fine-tuning
(paper 2 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation


def _lam(v: dict) -> float:
    return v["alpha_large"] ** 2 - v["alpha_small"] ** 2


CHAPTER = Chapter(
    slug="dln-pretrain-finetune",
    title="A Theory of How Pretraining Shapes Inductive Bias in Fine-Tuning",
    paper=2,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d", 40, "int", "number of features (input dimension)", low=10, high=80),
        Param("k_pre", 10, "int", "nonzero entries of the pretraining target beta*_P (its support S)", low=2,
              high=20),
        Param("k_ft", 3, "int", "nonzero entries of the fine-tuning target beta*_F", low=1, high=10),
        Param("n_pre", 160, "int", "pretraining samples (n_pre >= 2 d: a unique, well-conditioned interpolator)",
              low=20, high=320),
        Param("n_ft", 6, "int", "fine-tuning samples of the projection and leakage experiments (C2, C3)",
              low=2, high=20),
        Param("nft_grid", [4, 8], "int_list", "fine-tuning sample sizes of the risk experiment (C4)", low=2,
              high=20, min_len=1, max_len=4, increasing=True),
        Param("alpha_small", 0.3, "float", "the smaller layer scale at initialization", low=0.05, high=1.5),
        Param("alpha_large", 1.0, "float", "the larger layer scale at initialization", low=0.1, high=2.0),
        Param("alpha_h", 0.05, "float", "scale of the re-initialized head (C2, C4)", low=0.005, high=0.2),
        Param("alpha_h_grid", [0.01, 0.005, 0.0025, 0.00125], "float_list",
              "re-initialized head scales of the leakage experiment (C3)", low=0.0003, high=0.05, min_len=2,
              max_len=6),
        Param("eta", 0.01, "float", "smallest GD step; C2 also runs 2 eta and 4 eta, C1, C3, C4 also 2 eta",
              low=0.0025, high=0.01),
        Param("n_seeds", 8, "int", "independent designs (pretraining and fine-tuning tasks)", low=2, high=16),
        Param("loss_tol", 1e-20, "float", "GD runs until every loss is below this", low=1e-26, high=1e-16),
        Param("max_steps", 600_000, "int", "cap on GD steps of one run (the run reports convergence)",
              low=10_000, high=2_000_000),
    ),
    alternatives={
        "A": {"seed": 1, "d": 60, "k_pre": 12, "k_ft": 4, "n_pre": 240, "n_ft": 8, "nft_grid": [5, 9],
              "alpha_small": 0.2, "alpha_large": 1.2},
        "B": {"seed": 2, "d": 30, "k_pre": 8, "k_ft": 2, "n_pre": 120, "n_ft": 5, "nft_grid": [3, 6],
              "alpha_small": 0.5, "alpha_large": 0.9},
    },
    relations=(
        Relation(("k_pre", "k_ft", "d"), "k_ft <= k_pre and k_ft <= d - k_pre (subset and new-feature tasks)",
                 lambda v: v["k_ft"] <= v["k_pre"] and v["k_ft"] <= v["d"] - v["k_pre"],
                 violating={"d": 12}, satisfying={"d": 40}),
        Relation(("n_pre", "d"), "n_pre >= 2 d (pretraining has a unique interpolator, reached fast)",
                 lambda v: v["n_pre"] >= 2 * v["d"], violating={"n_pre": 60}, satisfying={"n_pre": 160}),
        Relation(("n_ft", "nft_grid", "k_pre"),
                 "n_ft and every nft_grid value <= k_pre - 2 (X_F,S of full row rank and well conditioned: "
                 "a square X_F,S makes fine-tuning converge too slowly)",
                 lambda v: max([v["n_ft"], *v["nft_grid"]]) <= v["k_pre"] - 2, violating={"n_ft": 9},
                 satisfying={"n_ft": 6}),
        Relation(("alpha_small", "alpha_large"),
                 "alpha_large^2 - alpha_small^2 >= 0.2 (lambda away from 0; with alpha_h <= 0.2 the reset "
                 "geometry lambda - alpha_h^2 stays >= 0.16)",
                 lambda v: _lam(v) >= 0.2, violating={"alpha_small": 0.95}, satisfying={"alpha_small": 0.3}),
    ),
    proves=(
        "Gradient flow on a diagonal linear network fine-tunes to a Bregman projection whose per-feature "
        "geometry is set by pretraining and the layer scales; with a re-initialized head, a smaller first "
        "layer leaks Theta(alpha_h^2) onto unused features, a larger one O(1)"
    ),
    checks=(
        "GD on sparse noiseless regression: pretrained weights, the projection (Richardson limit and "
        "rate), the leakage law in alpha_h, and the excess-risk gap on subset and new-feature tasks"
    ),
)
