"""Declaration of the chapter 'diffusion-splits-rmt'."""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug='diffusion-splits-rmt',
    title='Linear diffusion models on disjoint data splits: renormalized noise and cross-split fluctuations',
    paper=9,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d", 100, "int", "dimension at size P (2P doubles d and n)", low=20, high=240,
              multiple_of=10),
        Param("gamma", 0.5, "float", "aspect ratio d/n (n = d/gamma)", low=0.1, high=4.0),
        Param("reps", 1000, "int", "datasets at size P (2P uses reps/2)", low=100, high=2000),
        Param("sigma2_list", [0.01, 0.05, 0.2], "float_list", "noise levels of the renormalization claims C1",
              low=1e-3, high=10.0, min_len=1, max_len=4, increasing=True),
        Param("iso_reps", 400, "int", "Sigma = I datasets of the Marchenko-Pastur claim (C1) at size P (2P: half)",
              low=100, high=2000),
        Param("sigma2_fluct", 0.05, "float", "noise level of the fluctuation claims C2 and C3", low=1e-3, high=10.0),
        Param("bank_inputs", 16, "int", "random inputs pooled by the amplification claim (C2)", low=4, high=64),
        Param("spectrum", "logunif", "str", "population spectrum: log-uniform or two-level {s_max, 0.05}",
              choices=("logunif", "twolevel")),
        Param("s_max", 4.0, "float", "largest population variance", low=0.1, high=100.0),
        Param("s_decay", 5.0, "float", "log-uniform spectrum: s_i = s_max exp(-s_decay u_i)", low=0.0, high=10.0),
        Param("rate_d", 50, "int", "dimension of the rate sweep C3", low=10, high=200),
        Param("rate_n", [100, 200, 400, 800, 1600], "int_list", "sample sizes of the rate sweep C3",
              low=20, high=4000, min_len=4, max_len=8, increasing=True),
        Param("rate_pairs", 200, "int", "independent split pairs per n in C3", low=50, high=2000),
        Param("rate_fit_from", 400, "int", "C3 fits the slope on the sizes n >= rate_fit_from",
              low=20, high=4000),
        Param("rankone_d", 10, "int", "dimension of the fixed-d claim (C3, rank-one term)", low=4, high=40),
        Param("rankone_n", 400, "int", "the fixed-d claim uses the sizes n and 2n", low=100, high=4000),
        Param("rankone_reps", 4000, "int", "datasets per size of the fixed-d claim", low=500, high=20000),
        Param("sigma_min", 0.1, "float", "end of the sampling trajectory (C4)", low=1e-4, high=1.0),
        Param("sigma_max", 2.0, "float", "start of the sampling trajectory (C4)", low=1.0, high=100.0),
    ),
    alternatives={
        "A": {"gamma": 2.0, "d": 100, "reps": 1000, "sigma2_list": [0.02, 0.1, 0.4]},
        "B": {"spectrum": "twolevel", "gamma": 0.25, "d": 80, "sigma_min": 0.02, "sigma_max": 10.0},
    },
    relations=(
        Relation(("rate_n", "rate_fit_from"), "at least 3 sizes of rate_n are >= rate_fit_from (the C3 fit window)",
                 lambda v: sum(n >= v["rate_fit_from"] for n in v["rate_n"]) >= 3,
                 violating={"rate_fit_from": 4000}, satisfying={"rate_fit_from": 200}),
    ),
    proves=(
        'Linear diffusion models trained on disjoint data splits: each sees a renormalized noise, and '
        'their denoisers disagree by a fluctuation whose variance random-matrix theory gives in closed form, '
        'and the samples they generate from the same noise disagree by a double integral of two-resolvent '
        'equivalents along the sampling trajectory'
    ),
    checks=(
        'Gaussian data at finite sizes, extrapolated to the proportional limit, per spectral bin, for '
        'four inputs of the denoiser and for generated samples from seven noise inputs'
    ),
)
