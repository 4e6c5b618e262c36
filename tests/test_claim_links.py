"""Every stored claim knows where it is made and what it checks, and both labels exist in its chapter.

The book links each claim, in its chapter's claims table and on the Verification page, to the section of
its experiment and to the theorem-like blocks it tests (``ClaimSet.experiment``); a claim made outside an
experiment, or naming a label the chapter does not define, would show as an unlinked or broken row.
"""

import re

import pytest

from theorylib.runner.records import claims_record
from theorylib.runner.registry import all_chapters

CHAPTERS = all_chapters()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_claims_link_to_their_experiment_and_theorems(chapter):
    source = chapter.twin_path.read_text()
    sections = set(re.findall(r"^\(([^)\s]+)\)=\s*$", source, flags=re.M))
    blocks = set(re.findall(r"^:label:\s*(\S+)\s*$", source, flags=re.M))
    record = claims_record(chapter.notebook_path)
    assert record and record["claims"], f"{chapter.slug}: no claims record"
    for claim in record["claims"]:
        name = claim["name"]
        assert claim.get("section") in sections, f"{chapter.slug}: {name!r} is made in no labelled experiment section"
        assert claim.get("checks"), f"{chapter.slug}: {name!r} names no theorem it checks"
        missing = [label for label in claim["checks"] if label not in blocks]
        assert not missing, f"{chapter.slug}: {name!r} checks undefined blocks {missing}"
        assert not re.search(r"\b(Thm|Prop|Cor|Lem)\.?\s*[0-9A-Z]", name), \
            f"{chapter.slug}: {name!r} carries a theorem number of its own (the book numbers its blocks)"
