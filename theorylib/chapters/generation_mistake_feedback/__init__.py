"""Declaration of the chapter 'generation-mistake-feedback'."""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(
    slug='generation-mistake-feedback',
    title='Generating from feedback alone: contamination, hitting sets, and lies',
    paper=1,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("n_instances", 200, "int", "random type families checked in C1 and C2", low=10, high=1000),
        Param("n_types_max", 9, "int", "random families have 5..n_types_max types", low=5, high=12),
        Param("n_langs_max", 10, "int", "random families have 3..n_langs_max languages (DP is O(2^m))",
              low=3, high=16),
        Param("p_incl", 0.35, "float", "probability that a type belongs to a random language", low=0.1, high=0.9),
        Param("T_max_pow", 14, "int", "C3 horizons T = 2^6 .. 2^T_max_pow", low=8, high=16),
        Param("n_c3", 3, "int", "random families with tau >= 2 used in C3 (plus intervals(9,3))", low=1, high=10),
        Param("n_union", 50, "int", "random disjoint-support pairs for the union identity", low=5, high=500),
        Param("n_countable", 12, "int", "target positions i* = 1..n_countable in the countable checks",
              low=3, high=30),
        Param("ell_max", 3, "int", "lie budgets ell = 0..ell_max", low=1, high=6),
        Param("n_random_adversaries", 200, "int", "random lie schedules per (ell, i*)", low=10, high=2000),
    ),
    alternatives={
        "A": {"seed": 1, "n_instances": 100, "n_types_max": 11, "n_langs_max": 12, "p_incl": 0.25,
              "ell_max": 2},
        "B": {"seed": 2, "n_types_max": 7, "n_langs_max": 14, "p_incl": 0.5, "n_countable": 20, "ell_max": 4},
    },
    proves=(
        'A generator that learns only from mistake feedback makes τ − 1 mistakes in the worst case, τ a '
        'hitting-set number of the family; without feedback the best worst case grows as T(1 − 1/τ*), τ* '
        'the fractional transversal number (LP duality); with lying feedback the index-order bound is tight for its '
        'generator but not over all generators (a probing generator, exhaustive game-tree search); in the '
        'query model with set-based generators τ − 1 queries, or ⌊(τ − 1)/(q + 1)⌋ invalid rounds with q queries '
        'per round and mistake feedback'
    ),
    checks=(
        'exactly, by a version-space dynamic program and an exhaustive hitting-set search, on random and '
        'structured finite families'
    ),
)
