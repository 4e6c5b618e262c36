"""The References page's labels are the text's author-year citations (``_ext/author_year_labels.py``)."""

import sys

from pybtex.database import parse_string

from theorylib.runner.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "_ext"))
from author_year_labels import AuthorYearLabels  # noqa: E402

BIB = r"""
@book{one, author = {Lucien {Le Cam}}, year = {1986}, title = {A}}
@article{two, author = {Joonhyuk Jung and Chao Gao}, year = {2026}, title = {B}}
@article{three, author = {Zeyu Jia and Yury Polyanskiy and Yihong Wu}, year = {2023}, title = {C}}
@misc{what, author = {{ICML 2026 poster, abstract}}, year = {2026}, title = {D}}
@misc{none, title = {E}}
"""


def test_labels_follow_the_author_year_citations():
    entries = list(parse_string(BIB, "bibtex").entries.values())
    assert list(AuthorYearLabels().format_labels(entries)) == [
        "Le Cam, 1986", "Jung and Gao, 2026", "Jia et al., 2023", "ICML 2026 poster, abstract, 2026", "none"]


def test_works_with_the_same_label_are_told_apart_by_a_letter():
    bib = BIB + r"""
@article{z1, author = {Ann Zhou and Bo Li and Cy Wu}, year = {2026}, title = {F}}
@article{z2, author = {Ann Zhou and Di Xu and Ed Yu}, year = {2026}, title = {G}}
"""
    entries = list(parse_string(bib, "bibtex").entries.values())
    labels = list(AuthorYearLabels().format_labels(entries))
    assert labels[-2:] == ["Zhou et al., 2026a", "Zhou et al., 2026b"]
    assert labels[:2] == ["Le Cam, 1986", "Jung and Gao, 2026"]
    assert len(set(labels)) == len(labels)
