"""Seeding, plotting and the chapter registry."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from theorylib.core import plotting  # noqa: E402
from theorylib.core.chapter import Chapter, package_name  # noqa: E402
from theorylib.core.params import Param, ParameterError  # noqa: E402
from theorylib.core.rates import fit_loglog  # noqa: E402
from theorylib.core.repro import rng_for  # noqa: E402
from theorylib.runner import registry  # noqa: E402
from theorylib.runner.registry import LayoutError, all_chapters, get_chapter  # noqa: E402


def test_streams_are_stable_and_independent():
    a = rng_for(3, "C1").standard_normal(3)
    np.testing.assert_array_equal(a, rng_for(3, "C1").standard_normal(3))
    assert not np.allclose(a, rng_for(3, "C2").standard_normal(3))
    assert not np.allclose(a, rng_for(4, "C1").standard_normal(3))
    with pytest.raises(ValueError):
        rng_for(-1)


def test_figures_draw():
    plotting.use_house_style()
    x = np.array([1.0, 2, 4, 8])
    fig, (a, b) = plt.subplots(1, 2)
    plotting.theory_vs_measured(a, x, x, x, x * 1.01, yerr=0.1 * x, logx=True)
    plotting.loglog_rate(b, x, x**-1, fit_loglog(x, x**-1 * [1, 1.01, 0.99, 1]), -1.0)
    assert len(b.lines) >= 2 and b.get_xscale() == "log"
    plt.close(fig)


def test_chapter_declaration_is_checked():
    seed = Param("seed", 0, "int", low=0)
    with pytest.raises(ValueError, match="seed"):
        Chapter("x", "X", 1, (Param("d", 2, "int"),))
    with pytest.raises(ValueError, match="alternative 'A'"):
        Chapter("x", "X", 1, (seed,), alternatives={"A": {"seed": -1}})
    with pytest.raises(ValueError, match="lower-case words"):
        Chapter("Bad_Slug", "X", 1, (seed,))
    ch = Chapter("x-y", "X", 1, (seed,), alternatives={"A": {"seed": 2}})
    assert ch.defaults() == {"seed": 0} and ch.validate({"seed": 5})["seed"] == 5
    assert ch.validate({"seed": 5}).seed == 5 and ch.package == "theorylib.chapters.x_y"
    with pytest.raises(AttributeError, match="no parameter 'd'"):
        _ = ch.validate({}).d
    assert package_name("a-b-c") == "a_b_c"


def test_registry_finds_every_chapter_with_notebook_and_twin():
    chapters = all_chapters()
    assert chapters, "no chapter declared"
    for c in chapters:
        assert c.notebook_path.exists(), c.notebook
        assert (c.notebook_path.parent / "myst" / f"{c.notebook_path.stem}.md").exists()
        assert get_chapter(c.slug) is c or get_chapter(c.slug) == c
    with pytest.raises(ParameterError, match="unknown chapter"):
        get_chapter("no-such-chapter")


def test_registry_refuses_a_chapter_whose_names_disagree():
    seed = Param("seed", 0, "int", low=0)
    good = all_chapters()[0]
    with pytest.raises(LayoutError, match=f"lives in the package theorylib/chapters/{package_name(good.slug)}/"):
        registry.place(good.chapter, "some_other_name")
    with pytest.raises(LayoutError, match="does not exist"):
        registry.place(Chapter("no-such-chapter", "X", 1, (seed,)), "no_such_chapter")
    with pytest.raises(LayoutError, match="no entry"):
        registry.part_of("no-such-chapter")


def test_chapters_come_in_book_order_with_their_toc_part():
    order = [f for f, _ in registry.toc_parts() if f.startswith("book/chapters/")]
    assert [f"book/chapters/{c.slug}" for c in all_chapters()] == order
    for c in all_chapters():
        assert c.part == dict(registry.toc_parts())[f"book/chapters/{c.slug}"]
