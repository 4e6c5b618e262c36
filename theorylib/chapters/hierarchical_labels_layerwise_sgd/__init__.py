"""Declaration of the chapter 'hierarchical-labels-layerwise-sgd'."""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(
    slug="hierarchical-labels-layerwise-sgd",
    title="Hints make depth learnable: layerwise SGD on a label hierarchy",
    paper=12,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("m_law", 8, "int", "C1: slots read by the quadratic block (p = 1 + m + m(m-1)/2)", low=2, high=16),
        Param("R_law", 400, "int", "C1: independent SGD runs per (configuration, checkpoint) cell",
              low=100, high=4000),
        Param("m_list", [4, 6, 8, 12, 16], "int_list", "C2: slot counts m of the rate sweep", low=2, high=24,
              min_len=3, max_len=8, increasing=True),
        Param("R_rate", 800, "int", "C2, C3b, C3d: SGD runs per m, per checkpoint set and per block (>= 800: "
              "the recorded seed studies ran 200 runs, where the bootstrap SE is too variable for a 3.29-SE "
              "rule, and 800)", low=800, high=4000),
        Param("eps_rate", 0.01, "float", "C2: target MSE eps of the first-passage time T(eps)",
              low=1e-4, high=0.1),
        Param("d_exact", 16, "int", "C3: input dimension of the enumerated cube", low=4, high=16,
              power_of_two=True),
        Param("delta", 0.05, "float", "C3: target top-label error of the stack's budget", low=1e-3, high=0.5),
        Param("d_net", 16, "int", "C4: leaves of the tree, a hidden subset of the 2 d_net inputs (only 16: at "
              "d_net = 8 end-to-end SGD learns the top parity without hints, and at d_net = 32 a recorded "
              "layerwise run stayed at chance)", low=16, high=16),
        Param("n_blocks", 3, "int", "C4: residual blocks (>= 2: one block learns about two of the four levels)",
              low=2, high=4),
        Param("width", 128, "int", "C4: hidden width of each block", low=96, high=256),
        Param("steps_per_block", 3000, "int", "C4: SGD steps per block (the baseline gets n_blocks times this)",
              low=3000, high=6000),
        Param("batch", 128, "int", "C4: mini-batch size", low=128, high=256),
        Param("lr", 0.05, "float", "C4: SGD learning rate (layerwise and baseline)", low=0.03, high=0.05),
        Param("n_test", 8192, "int", "C4, C6: fresh test inputs", low=1024, high=65536),
        Param("d_deep", 8, "int", "C5, C6, C7: leaves of the chain and the tree, a hidden ordered subset of the "
              "n_deep inputs", low=4, high=8, power_of_two=True),
        Param("n_deep", 12, "int", "C5, C6, C7: inputs (C5 and C7 enumerate all 2^n_deep of them)", low=8,
              high=12),
        Param("d_sym", 16, "int", "C5c, C5d: leaves of the chain and the tree, a hidden ordered subset of the "
              "n_sym inputs (each block's fit computed through Walsh characters)", low=4, high=16,
              power_of_two=True),
        Param("n_sym", 32, "int", "C5c, C5d: inputs (2^n_sym points, never enumerated)", low=16, high=32),
        Param("R_coll", 400, "int", "C7: independent SGD runs of the chain's whole-stream block", low=400,
              high=4000),
        Param("rf_width", 1024, "int", "C6: random ReLU neurons per block", low=1024, high=2048),
        Param("rf_train", 8192, "int", "C6: fresh samples for each block's ridge read-out", low=8192,
              high=16384),
    ),
    alternatives={
        "A": {"m_law": 6, "d_exact": 8, "width": 96, "n_deep": 10, "n_sym": 24},
        "B": {"m_law": 12, "R_law": 300, "n_blocks": 4, "steps_per_block": 4000, "lr": 0.03, "d_deep": 4,
              "rf_width": 1536, "d_sym": 8, "R_coll": 1000},
    },
    proves=(
        'With a hint at every level, layerwise SGD learns a hierarchy of parities at a cost of O(p) samples '
        'per level; without hints the top label gives no gradient signal; a chain of hints needs one block '
        'per label, a tree one per level'
    ),
    checks=(
        'the exact second-moment law of SGD (also with colliding features), crossing times and the composed '
        'budget on parity hierarchies, the depth of a chain versus a tree on the whole cube (to depth 15 '
        'through Walsh characters), random-feature blocks, and a small residual network trained layerwise '
        'versus end to end'
    ),
)
