"""Declaration of the chapter 'attention-query-learning'."""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param, Relation

CHAPTER = Chapter(
    slug='attention-query-learning',
    title='Stealing an attention head: exact recovery with O(d²) and O(rd) queries',
    paper=19,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("d_list", [4, 8, 16, 32], "int_list", "dimensions of the exact-recovery check (C1 and its figure)",
              low=2, high=64, min_len=2, max_len=6, increasing=True),
        Param("d_lr", 32, "int", "dimension of the low-rank instance (the sketch theorem, C1c-C2)", low=4, high=64),
        Param("r", 2, "int", "rank of the low-rank A (>= 2 so that C2 has a k < r side; 2 r <= d_lr)",
              low=2, high=16),
        Param("A_scale", 2.0, "float", "A entries have variance A_scale^2/d (full and low rank)",
              low=0.1, high=3.0),
        Param("u_scale", 1.0, "float", "u ~ N(0, u_scale^2 I/d)", low=0.1, high=10.0),
        Param("s_amp", 0.25, "float", "amplitude s of the value queries [s e_j] (C1, C3, C4; != 1 tests the 1/s)",
              low=0.1, high=100.0),
        Param("s_amp2", 4.0, "float", "second value-query amplitude of the values-only noise check (C3; > s_amp)",
              low=0.1, high=100.0),
        Param("d_noise", 8, "int", "dimension of the noisy-oracle instance (C3, C4)", low=2, high=16),
        Param("J_max", 200.0, "float", "C3-C4 instances are redrawn until max_ab ||J_ab||_1 <= J_max",
              low=10.0, high=200.0),
        Param("sigma", 1e-4, "float", "standard deviation of the i.i.d. oracle noise (C3); sigma J_max <= 0.02",
              low=1e-7, high=1e-4),
        Param("n_list", [1, 4, 16, 64, 256], "int_list", "repeats per query (C3)",
              low=1, high=1024, min_len=3, max_len=8, increasing=True),
        Param("R", 200, "int", "independent replicates of the noisy learner per n (C3)", low=50, high=1000),
        Param("tau_list", [1e-7, 1e-6, 1e-5], "float_list", "adversarial tolerances, worst entry (C4a)",
              low=1e-9, high=1e-4, min_len=2, max_len=6, increasing=True),
        Param("tau_adv", 1e-6, "float", "tolerance of the random-sign adversaries (C4b)", low=1e-8, high=1e-5),
        Param("tau_cert", [1e-5, 1e-4, 1e-3], "float_list",
              "tolerances of the certificate check, every entry's two sign adversaries and n_adv random ones (C4c)",
              low=1e-8, high=1e-3, min_len=2, max_len=5, increasing=True),
        Param("n_adv", 50, "int", "random-sign adversaries (C4b)", low=1, high=500),
        Param("m_grid", [1.0, 1.5, 1.75, 2.5, 3.0, 4.0], "float_list",
              "rank-one probe counts m of the O(rd) learner, in units of d_lr r (C5)",
              low=0.5, high=8.0, min_len=3, max_len=8, increasing=True),
        Param("m_top", 6.0, "float", "probes of the O(rd) learner's recovery check, in units of d_lr r (C5)",
              low=5.0, high=10.0),
        Param("n_rop", 2, "int", "independent probe designs per m (C5)", low=1, high=10),
        Param("d_ffn", 5, "int", "token dimension of the one-layer Transformer (C6)", low=3, high=8),
        Param("h_ffn", 4, "int", "hidden units of its feed-forward network (C6; h <= 4 <= d + 1)", low=1, high=4),
        Param("d_mh", 4, "int", "token dimension of the two-head rank check (C7)", low=2, high=6),
        Param("n_mh", 200, "int", "random two-token sequences of the two-head rank check "
              "(C7; >= 2 (d^2 + d) for every allowed d_mh: 84 at d = 6)",
              low=100, high=1000),
    ),
    alternatives={
        "A": {"seed": 1, "d_list": [3, 6, 12, 24], "d_lr": 24, "r": 3, "A_scale": 1.0, "sigma": 3e-5,
              "d_ffn": 4, "h_ffn": 3, "d_mh": 3},
        "B": {"seed": 2, "d_list": [5, 10, 20], "d_lr": 40, "r": 4, "A_scale": 2.5, "sigma": 1e-4, "R": 300,
              "d_ffn": 6, "d_mh": 5},
    },
    relations=(
        # the second amplitude is the larger one: ||J_ab||_1 falls with s, so the C3 instance stays well inside
        Relation(("s_amp", "s_amp2"), "s_amp < s_amp2", lambda v: v["s_amp"] < v["s_amp2"],
                 violating={"s_amp": 1.0, "s_amp2": 0.5}, satisfying={"s_amp": 0.25, "s_amp2": 4.0}),
        # the sketch runs at every size k = 1..2r (C2), and a sketch of size k needs k <= d_lr
        Relation(("r", "d_lr"), "2 r <= d_lr", lambda v: 2 * v["r"] <= v["d_lr"],
                 violating={"d_lr": 4, "r": 3}, satisfying={"d_lr": 6, "r": 3}),
    ),
    proves=(
        'A softmax attention head is recovered exactly from O(d²) queries, or O(rd) with a randomised '
        'sketch or random rank-one probes when it has rank r; a one-layer Transformer reduces to its ReLU '
        'feed-forward network; under noisy queries the error has an explicit first-order constant, a '
        'finite-tolerance certificate and an a priori tolerance; two generic heads are identifiable up to '
        'their order'
    ),
    checks=(
        'exact recovery from an oracle (also of a small one-layer Transformer through its FFN), the noise '
        'constant and its n^(-1/2) rate by simulation, the finite-tolerance certificate against adversaries, '
        'and the rank of the two-head Jacobian, at small dimensions'
    ),
)
