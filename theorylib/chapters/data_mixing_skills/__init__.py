"""Chapter 'data-mixing-skills': Explaining Data Mixing Scaling Laws (paper 3 of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug="data-mixing-skills",
    title="Explaining Data Mixing Scaling Laws",
    paper=3,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("m0", 8, "int", "number of fundamental (shared) skills", low=1, high=16),
        Param("M", [16, 24], "int_list", "specialized skills of domains 1 and 2 (full-capacity experiments)",
              low=4, high=40, min_len=2, max_len=2),
        Param("sigma", [0.5, 1.5], "float_list", "label-noise standard deviations of domains 1 and 2",
              low=0.1, high=3.0, min_len=2, max_len=2),
        Param("f0", 0.5, "float", "variance of every fundamental skill", low=0.1, high=2.0),
        Param("R_exact", 4000, "int", "replicates per allocation of the exact-law check", low=1000, high=8000),
        Param("D_grid", [128, 256, 512, 1024, 2048], "int_list", "total sample sizes of the rate check",
              low=64, high=4096, min_len=3, max_len=8, increasing=True, multiple_of=2),
        Param("R_rate", 400, "int", "replicates per D of the rate check", low=200, high=2000),
        Param("M_spec", 300, "int", "specialized skills per domain in the capacity experiments",
              low=150, high=400),
        Param("alpha", 0.6, "float", "Zipf exponent: p(r) = c r^-(1+alpha)", low=0.3, high=1.5),
        Param("c", 0.3, "float", "Zipf scale of the specialized skills", low=0.05, high=1.0),
        Param("N_grid", [30, 60, 120], "int_list", "capacities N of the capacity experiments",
              low=20, high=200, min_len=1, max_len=4, increasing=True),
        Param("w_grid", [0.2, 0.5, 0.8], "float_list", "weights w_1 of the capacity experiments",
              low=0.1, high=0.9, min_len=1, max_len=5, increasing=True),
        Param("D_cap", 20000, "int", "total samples of the capacity experiments", low=5000, high=25000,
              multiple_of=2),
        Param("R_cap", 8, "int", "replicates of the capacity experiments", low=4, high=30),
        Param("D_opt", 240, "int", "total samples of the noise-reduction experiment", low=80, high=600,
              multiple_of=2),
        Param("step_opt", 8, "int", "grid step of n_1 in the noise-reduction experiment", low=2, high=20),
        Param("R_opt", 2000, "int", "replicates of the noise-reduction experiment", low=500, high=5000),
    ),
    alternatives={
        "A": {"seed": 1, "m0": 4, "M": [12, 30], "sigma": [1.0, 2.0], "alpha": 0.8, "N_grid": [20, 40, 80]},
        "B": {"seed": 2, "m0": 12, "M": [20, 20], "sigma": [0.3, 1.0], "alpha": 0.4, "f0": 0.8},
    },
    relations=(
        Relation(("f0", "c", "w_grid"), "f0 > c max(w_grid, 0.8) (fundamental skills are learned first)",
                 lambda v: v["f0"] > v["c"] * max(max(v["w_grid"]), 0.8),
                 violating={"f0": 0.2}, satisfying={"f0": 0.3}),
        Relation(("D_grid", "M"), "min(D_grid) / 2 >= max(M) + 10 (finite inverse-Wishart variance)",
                 lambda v: min(v["D_grid"]) // 2 >= max(v["M"]) + 10,
                 violating={"D_grid": [64, 256, 512]}, satisfying={"D_grid": [80, 256, 512]}),
        Relation(("D_opt", "M"), "D_opt / 2 >= max(M) + 10 (the evaluation mixture is admissible)",
                 lambda v: v["D_opt"] // 2 >= max(v["M"]) + 10,
                 violating={"D_opt": 80, "M": [16, 40]}, satisfying={"D_opt": 100, "M": [16, 40]}),
        Relation(("N_grid", "m0", "M_spec"), "max(N_grid) - m0 <= M_spec (no block is used up)",
                 lambda v: max(v["N_grid"]) - v["m0"] <= v["M_spec"],
                 violating={"N_grid": [30, 200], "M_spec": 150},
                 satisfying={"N_grid": [30, 158], "M_spec": 150}),
    ),
    proves=(
        "an exact finite-sample mixing law for least squares on domains that share fundamental skills, "
        "the noise-reduction optimum, and capacity competition with a closed-form Zipf capacity split"
    ),
    checks=(
        "linear-Gaussian skills model, two domains: the exact law, its D^-1 rate, the selected-skill split, "
        "the capacity-limited losses and their global coupling, and the optimal mixture's gains"
    ),
)
