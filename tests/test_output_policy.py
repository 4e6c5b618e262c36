"""The output policy: stored outputs show the mathematics and the seed, never rounding noise.

What nbval compares (text, HTML, SVG) must not depend on the machine; these tests check the parts of
the policy that a single machine can check: glue stores what the prose shows, floating-point errors are
shown as bounds, and nbval stays strict (a changed digit in a claims table fails it, metadata does not).
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from theorylib.core import claims as C
from theorylib.core import formatting as F
from theorylib.core.glue import GLUE_KEY
from theorylib.runner.paths import BOOK_DIR, REPO_ROOT
from theorylib.runner.registry import all_chapters

CHAPTERS = all_chapters()
GLUE_REF = re.compile(r"\{glue:text\}`([A-Za-z0-9_]+)(?::([^`]*))?`")


def glued(nb):
    """name -> the theorylib glue metadata of every glued value (None for a glue made some other way)."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {})
            if "scrapbook" in meta:
                found[meta["scrapbook"]["name"]] = meta.get(GLUE_KEY)
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.slug)
def test_prose_quotes_each_glued_value_with_the_spec_it_was_glued_with(chapter):
    nb = nbformat.read(str(chapter.notebook_path), as_version=4)
    values = glued(nb)
    other = sorted(name for name, meta in values.items() if meta is None)
    assert not other, f"glued without theorylib.core.glue (raw digits): {other}"
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for name, spec in GLUE_REF.findall(prose):
        assert name in values, f"{{glue:text}}`{name}` is quoted but never glued"
        stored = values[name]["spec"]
        if stored is None:
            assert not spec, f"{name} is text (or a bound): quote it without a format spec, not ':{spec}'"
        else:
            assert spec == stored or (not spec and stored.endswith("d")), (
                f"{name} was glued with '{stored}' but the prose shows it with '{spec or 'no spec'}'")


def test_glued_numbers_are_stored_as_shown():
    assert F.rounded(0.05054132440591969, ".4f") == 0.0505
    assert F.rounded(20271.650662023094, ".3g") == 20300.0 and F.rounded(0.1234, ".1%") == 0.123
    assert format(F.rounded(3.14159, ".2f"), ".2f") == format(3.14159, ".2f")
    assert F.rounded(7.0, "d") == 7 and isinstance(F.rounded(7, "d"), int)
    with pytest.raises(ValueError, match="not an integer"):
        F.rounded(7.5, "d")
    with pytest.raises(ValueError, match="precision the claim needs"):
        F.rounded(1.0, "")


def test_floating_point_errors_are_shown_as_bounds():
    assert F.fp_shown(8.105e-15, 1e-12) == F.fp_shown(5.551e-15, 1e-12) == "< 1e-12"
    assert F.fp_shown(-3e-13, 1.6e-10) == "< 1.6e-10"
    assert "above the bound" in F.fp_shown(2e-9, 1.6e-10)
    a = C.check_absolute("r", 8.105e-15, 0.0, 1e-10, "fp", fp=True)
    b = C.check_absolute("r", 5.551e-15, 0.0, 1e-10, "fp", fp=True)
    assert C.table_rows([a]) == C.table_rows([b]) and C.table_rows([a])[0][1] == "<= 1e-10"
    assert F.bound_text(1.64e-12) == "1.7e-12" and F.bound_text(1.6e-10) == "1.6e-10" and F.bound_text(1e-12) == "1e-12"
    assert F.fp_shown(1.62e-12, 1.64e-12) == "< 1.7e-12"
    near = C.check_absolute("q", 1.0 + 2e-16, 1.0, 1e-12, "fp", fp=True)
    assert C.table_rows([near])[0][1] == "1 ± 1e-12"
    up = C.check_upper("u", 3e-14, 1e-12, "fp", fp=True)
    assert C.table_rows([up])[0][1] == "<= 1e-12"
    broken = C.check_absolute("r", 3e-9, 0.0, 1e-10, "fp", fp=True)
    assert not broken.passed and C.table_rows([broken])[0][1] == "3e-09"
    assert a.as_record()["measured"] == 8.105e-15  # full precision stays in the (uncompared) record


def _executed_toy(tmp_path: Path) -> Path:
    from toy_chapter import TOY

    from theorylib.runner.rerun import rerun

    work = tmp_path / "nb"
    work.mkdir()
    shutil.copy(Path(TOY.notebook_path).parent / "toy_chapter.py", work / "toy_chapter.py")
    out = work / "toy.ipynb"
    assert rerun(TOY.notebook_path, out, {}).status == "passed"
    nb = nbformat.read(str(out), as_version=4)
    for cell in nb.cells:  # papermill's bookkeeping cell tags and metadata are irrelevant to nbval
        cell.metadata.pop("papermill", None)
    nbformat.write(nb, str(out))
    return out


def _nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", str(path),
                           "-c", "/dev/null", "--rootdir", str(path.parent)],
                          capture_output=True, text=True, cwd=path.parent, timeout=300)


@pytest.mark.slow
def test_nbval_stays_strict_on_claims_tables_and_ignores_metadata(tmp_path):
    nb_path = _executed_toy(tmp_path)
    assert _nbval(nb_path).returncode == 0, "the untouched notebook must pass"
    nb = nbformat.read(str(nb_path), as_version=4)
    claims_out = next(o for c in nb.cells for o in c.get("outputs", []) if C.CLAIMS_KEY in o.get("metadata", {}))
    claims_out["metadata"][C.CLAIMS_KEY]["claims"][0]["measured"] = 4.000000001  # metadata: not compared
    nbformat.write(nb, str(nb_path))
    assert _nbval(nb_path).returncode == 0, "output metadata must not be compared"
    text = claims_out["data"]["text/plain"]
    assert "C1 count  4 " in text
    claims_out["data"]["text/plain"] = text.replace("C1 count  4 ", "C1 count  5 ")
    nbformat.write(nb, str(nb_path))
    done = _nbval(nb_path)
    assert done.returncode != 0 and "C1 count" in done.stdout, "a changed digit in a claims table must fail nbval"


def test_the_verification_page_shows_where_outputs_were_made():
    nb = nbformat.read(str(BOOK_DIR / "verification.ipynb"), as_version=4)
    text = json.dumps([o for c in nb.cells for o in c.get("outputs", [])])
    for chapter in CHAPTERS:
        assert chapter.slug in text
    assert "BLAS (kernel)" in text and "numpy SIMD" in text


def test_perturbed_environment_is_the_one_make_test_uses():
    lines = (REPO_ROOT / "Makefile").read_text().splitlines()
    makefile = "\n".join(line for line in lines if not line.lstrip().startswith("#"))  # commands, not comments
    assert "NPY_DISABLE_CPU_FEATURES" in makefile and "ATEN_CPU_CAPABILITY=default" in makefile
    assert "OPENBLAS_CORETYPE" not in makefile and "OPENBLAS_L2_SIZE" not in makefile


def test_a_computed_fp_tolerance_is_shown_by_its_decade():
    assert [F.decade_text(b) for b in (5.12e-12, 1.66e-10, 2.44e-13, 1e-10, 1.0000001e-12)] == [
        "1e-11", "1e-09", "1e-12", "1e-10", "1e-11"]
    from theorylib.core.claims import check_absolute, measured_text

    for m in (3e-13, 4e-13):  # other digits of the residual, other digits of its computed bound: the same text
        c = check_absolute("C", m, 0.0, 5.12e-12 * (1 + m), "fp model", fp=True).as_record()
        assert (measured_text(c), c["tolerance_text"]) == ("<= 1e-11", "|m-p| <= 1e-11")
    failed = check_absolute("C", 1e-11, 0.0, 5.12e-12, "fp model", fp=True).as_record()
    assert failed["tolerance_text"] == "|m-p| <= 5.12e-12"  # a failed claim shows the tolerance it broke
