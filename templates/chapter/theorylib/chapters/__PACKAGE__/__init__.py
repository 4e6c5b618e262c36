"""Chapter '__SLUG__': __TITLE__ (paper __PAPER__ of the ICML 2026 list).

The declaration only; it stays cheap to import (no numerical library here).
"""

from theorylib.core.chapter import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(
    slug="__SLUG__",
    title="__TITLE__",
    paper=__PAPER__,
    params=(
        Param("seed", 0, "int", "all randomness flows from it", low=0),
        Param("n", 2000, "int", "samples of the example claim C1", low=100, high=100_000),
    ),
    alternatives={"A": {"seed": 1, "n": 4000}},
    # Every rule the code relies on is declared, so that no allowed value stops a run halfway: multiple_of=
    # and power_of_two=True on a Param, and for rules between parameters, e.g.
    # relations=(Relation(("r", "d"), "2 r <= d", lambda v: 2 * v["r"] <= v["d"],
    #                     violating={"r": 9}, satisfying={"r": 4}),),
    # One line each for the book's table of chapters (plain text): replace both before the chapter lands.
    proves="what the chapter derives, in one line",
    checks="which special case its numbers check, in one line",
)
