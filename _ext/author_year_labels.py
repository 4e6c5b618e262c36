"""Sphinx extension: the References page labels each entry as the text cites it, "Jung and Gao, 2026".

The text cites author-year (``bibtex_reference_style: author_year``) while pybtex's ``plain`` style numbers
the bibliography, so a reader met "[Jung and Gao, 2026]" in a chapter and "[1]" on the References page.
This registers the formatting style ``plain_author_year``: ``plain`` with author-year labels.
"""

from __future__ import annotations

from typing import Any

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


def _surnames(entry: Any) -> list[str]:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    return [" ".join(p.prelast_names + p.last_names).replace("{", "").replace("}", "") for p in people]


class AuthorYearLabels(BaseLabelStyle):
    """'Le Cam, 1986', 'Jung and Gao, 2026', 'Jia et al., 2023'; the key when an entry has no author."""

    def format_labels(self, sorted_entries: Any) -> Any:
        entries = list(sorted_entries)
        bases = [self._label(entry) for entry in entries]
        # Two works with the same label ("Zhou et al., 2026") get 2026a, 2026b in the bibliography's order,
        # as author-year styles do; Sphinx refuses duplicate labels.
        seen: dict[str, int] = {}
        for base in bases:
            if bases.count(base) == 1:
                yield base
                continue
            seen[base] = seen.get(base, 0) + 1
            yield base + "abcdefghijklmnopqrstuvwxyz"[seen[base] - 1]

    @staticmethod
    def _label(entry: Any) -> str:
        names = _surnames(entry)
        who = (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2
               else f"{names[0]} et al." if names else entry.key)
        year = entry.fields.get("year", "")
        return f"{who}, {year}" if year else who


class PlainAuthorYear(PlainStyle):
    default_label_style = "author_year_labels"


def setup(app: Any) -> dict[str, Any]:
    register_plugin("pybtex.style.labels", "author_year_labels", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "plain_author_year", PlainAuthorYear)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
