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
)
