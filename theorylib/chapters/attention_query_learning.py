"""Declaration of the chapter 'attention-query-learning'."""

from theorylib.core.chapters import Chapter
from theorylib.core.params import Param

CHAPTER = Chapter(
    slug='attention-query-learning',
    title='Stealing an attention head: exact recovery with O(d²) and O(rd) queries',
    paper=19,
    part='Learning from queries and feedback',
    notebook='book/chapters/attention-query-learning.ipynb',
    params=(Param("seed", 0, "int", "all randomness flows from it", low=0),),
    alternatives={},
)
