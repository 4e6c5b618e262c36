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
        Param("N_fit", [24, 32, 40], "int_list", "capacities of the small scales the law is fitted on",
              low=10, high=100, min_len=2, max_len=4, increasing=True),
        Param("D_fit", [1000, 2000, 4000], "int_list", "sample sizes of the small scales the law is fitted on",
              low=500, high=10000, min_len=2, max_len=4, increasing=True),
        Param("w_fit", [0.2, 0.35, 0.5, 0.65, 0.8], "float_list", "weights w_1 of the small scales",
              low=0.1, high=0.9, min_len=3, max_len=7, increasing=True),
        Param("R_fit", 8, "int", "replicates per small scale", low=4, high=30),
        Param("N_big", 120, "int", "capacity of the large scale the optimum is predicted at", low=40,
              high=200),
        Param("D_big", 20000, "int", "samples of the large scale", low=5000, high=40000),
        Param("w_big", [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7], "float_list",
              "weights w_1 at which the large-scale loss is measured", low=0.1, high=0.9, min_len=5,
              max_len=11, increasing=True),
        Param("R_big", 32, "int", "replicates at the large scale", low=8, high=60),
    ),
    alternatives={
        "A": {"seed": 1, "m0": 4, "M": [12, 30], "sigma": [1.0, 2.0], "alpha": 0.8, "N_grid": [20, 40, 80]},
        "B": {"seed": 2, "m0": 12, "M": [20, 20], "sigma": [0.3, 1.0], "alpha": 0.4, "f0": 0.8},
    },
    relations=(
        Relation(("f0", "c", "w_grid", "w_fit", "w_big"),
                 "f0 > c max(w, 1 - w, 0.8) over w_grid, w_fit, w_big (fundamental skills are learned first "
                 "in both domains)",
                 lambda v: v["f0"] > v["c"] * max(0.8, *(max(w, 1 - w) for k in ("w_grid", "w_fit", "w_big")
                                                         for w in v[k])),
                 violating={"f0": 0.2}, satisfying={"f0": 0.3}),
        Relation(("D_grid", "M"), "min(D_grid) / 2 >= max(M) + 10 (finite inverse-Wishart variance)",
                 lambda v: min(v["D_grid"]) // 2 >= max(v["M"]) + 10,
                 violating={"D_grid": [64, 256, 512]}, satisfying={"D_grid": [80, 256, 512]}),
        Relation(("D_opt", "M"), "D_opt / 2 >= max(M) + 10 (the evaluation mixture is admissible)",
                 lambda v: v["D_opt"] // 2 >= max(v["M"]) + 10,
                 violating={"D_opt": 80, "M": [16, 40]}, satisfying={"D_opt": 100, "M": [16, 40]}),
        Relation(("N_grid", "N_big", "m0", "M_spec"), "max(N_grid, N_big) - m0 <= M_spec (no block is used up)",
                 lambda v: max(max(v["N_grid"]), v["N_big"]) - v["m0"] <= v["M_spec"],
                 violating={"N_grid": [30, 200], "M_spec": 150},
                 satisfying={"N_grid": [30, 158], "M_spec": 150}),
        Relation(("N_fit", "N_big", "D_fit", "D_big"),
                 "max(N_fit) < N_big and max(D_fit) < D_big (the optimum is predicted at a larger scale)",
                 lambda v: max(v["N_fit"]) < v["N_big"] and max(v["D_fit"]) < v["D_big"],
                 violating={"N_big": 40}, satisfying={"N_big": 60}),
        Relation(("N_fit", "m0"), "min(N_fit) >= m0 + 8 (both domains keep specialized skills)",
                 lambda v: min(v["N_fit"]) >= v["m0"] + 8,
                 violating={"m0": 16, "N_fit": [22, 32, 40]}, satisfying={"m0": 16}),
        Relation(("N_fit", "D_fit", "w_fit"),
                 "min(D_fit) min(w, 1 - w over w_fit) >= 2 max(N_fit) (data beyond capacity)",
                 lambda v: min(v["D_fit"]) * min(min(v["w_fit"]), 1 - max(v["w_fit"])) >= 2 * max(v["N_fit"]),
                 violating={"D_fit": [500, 2000, 4000], "w_fit": [0.1, 0.5, 0.9]},
                 satisfying={"D_fit": [800, 2000, 4000]}),
    ),
    proves=(
        "an exact finite-sample mixing law for least squares on domains that share fundamental skills, "
        "the noise-reduction optimum, capacity competition with a closed-form Zipf capacity split, and a "
        "data-mixing law of the paper's parametric shape"
    ),
    checks=(
        "linear-Gaussian skills model, two domains: the exact law, its D^-1 rate, the selected-skill split, "
        "the capacity-limited losses and their global coupling, the optimal mixture's gains, and the "
        "optimal mixture at a large scale predicted by the law fitted at small scales"
    ),
)
