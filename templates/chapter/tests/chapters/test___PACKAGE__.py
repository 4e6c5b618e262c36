"""Tests of chapter '__SLUG__': the theory, the model, and one mutation test per claim."""

import numpy as np

from theorylib.chapters.__PACKAGE__ import claims, model, theory
from theorylib.core import rng_for
from theorylib.core.theory import variant


def test_model_draws_have_the_requested_scale():
    x = model.sample(20_000, 2.0, rng_for(0, "test"))
    np.testing.assert_allclose(x.std(), 2.0, rtol=0.05)


def test_claim_holds_for_the_theory():
    x = model.sample(2000, 1.5, rng_for(0, "C1"))
    assert claims.claim_mean_of_square("C1", x, 1.5).passed


def test_claim_rejects_its_wrong_theory():
    x = model.sample(2000, 1.5, rng_for(0, "C1"))
    wrong = variant(theory, mean_of_square=theory.wrong_mean_of_square)
    assert not claims.claim_mean_of_square("C1", x, 1.5, theory=wrong).passed
