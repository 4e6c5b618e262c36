"""Tests of chapter 'sosd-norm-growth': the theory, the model, and one mutation test per claim."""

import numpy as np
import pytest
import torch

from theorylib.chapters.sosd_norm_growth import claims, model, theory
from theorylib.chapters.sosd_norm_growth import model_transformer as mt
from theorylib.core import rng_for
from theorylib.core.theory import variant

# ---------------------------------------------------------------- shared small runs (a few seconds in all)


@pytest.fixture(scope="module")
def aligned():
    rng = rng_for(3, "test-aligned")
    s0, s_star = model.aligned_spectra(8, rng)
    out = []
    for kappa in (0.1, 0.9):
        prob = model.aligned_problem(s0, s_star, kappa, rng)
        out.append((prob, model.aligned_gd(prob, 400), model.aligned_start(prob)))
    return out


@pytest.fixture(scope="module")
def noise():
    eta, lam = 0.1, 0.01
    W0 = model.gaussian_start(8, 6, 1.0, rng_for(3, "test-start"))
    grow = model.scale_invariant_sgd(W0, 4096, eta, 0.0, 1.0, 4, rng_for(3, "test-grow"))
    decay = model.scale_invariant_sgd(W0, 4096, eta, lam, 1.0, 4, rng_for(3, "test-decay"))
    scaled = model.scale_invariant_sgd(2 * W0, 4096, 4 * eta, lam / 4, 1.0, 4, rng_for(3, "test-decay"))
    muon = model.scale_invariant_sgd(W0[:3], 128, eta, 0.0, 1.0, 4, rng_for(3, "test-muon"), muon=True)
    ag_decay = model.autograd_sgd(W0[:4], 32, eta, lam, 1.0, 4, rng_for(3, "test-ag-decay"))
    ag_scaled = model.autograd_sgd(2 * W0[:4], 32, 4 * eta, lam / 4, 1.0, 4, rng_for(3, "test-ag-decay"))
    return {"eta": eta, "lam": lam, "d": 6, "grow": grow, "decay": decay, "scaled": scaled, "muon": muon,
            "ag_decay": ag_decay, "ag_scaled": ag_scaled}


@pytest.fixture(scope="module")
def transformer():
    # process-wide torch settings: set for this module's runs, restored afterwards
    det, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    try:
        lr, lam, d = 0.3, 0.02, 8
        P = mt.markov_language(6, rng_for(3, "test-tf-language"))
        runs = {}
        for key, lam_run in (("grow", 0.0), ("decay", lam)):
            lm = mt.build_model(6, d, 6, 1.0, rng_for(3, "test-tf-init"))
            runs[key] = mt.train_sgd_track(lm, P, 40, 8, lr, lam_run, rng_for(3, "test-tf", key),
                                           spectra=key == "grow")
        yield {"lr": lr, "lam": lam, "d": d, **runs}
    finally:
        torch.use_deterministic_algorithms(det, warn_only=warn_only)
        torch.set_num_threads(threads)


# ---------------------------------------------------------------- spectra and distances


def test_spectrum_is_a_distribution_invariant_to_scale_and_rotation():
    rng = rng_for(0, "test-p")
    for _ in range(20):
        W = rng.standard_normal((5, 7))
        p = model.trace_normalized_spectrum(W)
        np.testing.assert_allclose(p.sum(), 1.0, atol=1e-14)
        assert np.all(np.diff(p) <= 0)
        U, V = model.random_orthogonal(5, rng), model.random_orthogonal(7, rng)
        np.testing.assert_allclose(model.trace_normalized_spectrum(3.7 * U @ W @ V), p, atol=1e-14)


def test_spectrum_is_batched():
    W = rng_for(0, "test-batch").standard_normal((3, 4, 4))
    p = model.trace_normalized_spectrum(W)
    for i in range(3):
        np.testing.assert_allclose(p[i], model.trace_normalized_spectrum(W[i]), atol=1e-15)


def test_mirsky_and_the_perturbation_chain_on_random_pairs():
    rng = rng_for(0, "test-mirsky")
    for _ in range(200):
        W = rng.standard_normal((6, 6))
        W1 = W + rng.standard_normal() * rng.standard_normal((6, 6))
        V = model.spectral_variation(W, W1)
        a, b = model.fro(W), model.fro(W1)
        mid = model.fro(W1 / b - W / a)
        assert V <= mid + 1e-14
        np.testing.assert_allclose(mid, 2 * np.sin(model.angle(W, W1) / 2), atol=1e-13)
        assert mid <= theory.muon_spectral_bound(model.fro(W1 - W), a, b) + 1e-14
        tv = 0.5 * np.abs(model.trace_normalized_spectrum(W1) - model.trace_normalized_spectrum(W)).sum()
        assert tv <= V + 1e-14


def test_hellinger_is_a_bounded_symmetric_distance():
    rng = rng_for(0, "test-hellinger")
    for _ in range(50):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        h = model.hellinger(p, q)
        np.testing.assert_allclose(h, model.hellinger(q, p), atol=1e-15)
        assert 0 < h <= 1
        np.testing.assert_allclose(h**2, 1 - np.sum(np.sqrt(p * q)), atol=1e-14)
        assert model.hellinger(p, p) == 0


def test_angle_is_accurate_for_nearly_parallel_matrices():
    rng = rng_for(0, "test-angle")
    A = rng.standard_normal((4, 4))
    A /= model.fro(A)
    B = rng.standard_normal((4, 4))
    B -= np.sum(A * B) * A
    B /= model.fro(B)
    for th in (1e-12, 1e-9, 1e-5, 0.3, 2.0):
        W1 = 2.5 * (np.cos(th) * A + np.sin(th) * B)
        np.testing.assert_allclose(model.angle(A, W1), th, rtol=1e-9, atol=1e-15)


# ---------------------------------------------------------------- gradients and the SGD model


def test_unit_point_gradient_matches_finite_differences_and_is_orthogonal():
    rng = rng_for(0, "test-grad")
    W = rng.standard_normal((1, 4, 4)) * 2.0
    X, Y = rng.standard_normal((1, 3, 4)), rng.standard_normal((1, 3, 4))
    alpha = 1.3

    def loss(M):
        u = M / model.fro(M)
        return 0.5 * np.mean(np.sum((alpha * X[0] @ u.T - Y[0]) ** 2, axis=1))

    g = model.unit_point_grad(W, X, Y, alpha)[0] / model.fro(W[0])
    fd = np.zeros((4, 4))
    h = 1e-6
    for i in range(4):
        for j in range(4):
            E = np.zeros((4, 4))
            E[i, j] = h
            fd[i, j] = (loss(W[0] + E) - loss(W[0] - E)) / (2 * h)
    np.testing.assert_allclose(g, fd, atol=1e-8)
    assert abs(np.sum(g * W[0])) <= 1e-13 * model.fro(g) * model.fro(W[0])


def test_formula_sgd_follows_the_autodiff_sgd_on_the_same_minibatches():
    W0 = model.gaussian_start(3, 5, 0.7, rng_for(0, "test-ag-start"))
    for lam in (0.0, 0.02):
        a = model.autograd_sgd(W0, 20, 0.1, lam, 1.3, 3, rng_for(0, "test-ag", str(lam)))
        f = model.scale_invariant_sgd(W0, 20, 0.1, lam, 1.3, 3, rng_for(0, "test-ag", str(lam)))
        np.testing.assert_allclose(a["W_final"], f["W_final"], rtol=0, atol=1e-13)
        np.testing.assert_allclose(a["ghat2"], f["ghat2"], rtol=1e-12)
        assert np.max(a["radial"]) <= 1e-14  # the lemma's orthogonality, from autodiff
    with pytest.raises(ValueError):
        model.autograd_sgd(W0, 5, 0.1, 20.0, 1.0, 2, rng_for(0, "x"))


def test_aligned_gradient_matches_finite_differences():
    rng = rng_for(0, "test-agrad")
    W, Ws = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    g = model.aligned_grad(W, Ws, 1.7)
    fd = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            E = np.zeros((3, 3))
            E[i, j] = 1e-6
            fd[i, j] = (model.aligned_loss(W + E, Ws, 1.7) - model.aligned_loss(W - E, Ws, 1.7)) / 2e-6
    np.testing.assert_allclose(g, fd, atol=1e-8)


def test_budget_identity_c_holds_per_seed(noise):
    for key, lam in (("grow", 0.0), ("decay", noise["lam"])):
        run = noise[key]
        lhs = np.log1p(run["tan"] ** 2).sum(axis=0)
        rhs = np.log(run["R"][-1] / run["R"][0]) - 2 * run["tan"].shape[0] * np.log1p(-noise["eta"] * lam)
        np.testing.assert_allclose(lhs, rhs, rtol=1e-11)


def test_invariance_is_exact_in_binary(noise):
    np.testing.assert_array_equal(noise["scaled"]["R"], 4 * noise["decay"]["R"])
    np.testing.assert_array_equal(noise["scaled"]["W_final"], 2 * noise["decay"]["W_final"])


def test_muon_steps_have_norm_eta_sqrt_rank(noise):
    k = noise["d"]  # G - <G, What> What has full rank: What has
    np.testing.assert_allclose(noise["muon"]["step"], noise["eta"] * np.sqrt(k), rtol=1e-12)


def test_recursion_matches_matrix_gd(aligned):
    for prob, gd, start in aligned:
        R, phi = theory.aligned_recursion(*start, prob["eta"], prob["alpha"], 400)
        np.testing.assert_allclose(gd["norm"] ** 2, R, rtol=1e-12)
        np.testing.assert_allclose(gd["loss"], prob["alpha"] ** 2 * (1 - np.cos(phi)), atol=1e-13)


def test_root_loss_ratio_lies_between_its_bounds():
    phi = theory.aligned_recursion(1.0, 1.2, 0.9, 1.0, 50)[1]
    rho = theory.root_loss_ratio(phi)
    assert np.all(rho <= 1 + 1e-15) and np.all(rho >= np.cos(phi[:-1] / 2) - 1e-15)


# ---------------------------------------------------------------- the Transformer


def _tiny_lm(seed=0, d=8, w0=1.0):
    return mt.build_model(5, d, 6, w0, rng_for(seed, "test-lm"))


def test_weight_norm_linear_is_invariant_to_the_scale_of_its_raw_weight():
    gen = torch.Generator().manual_seed(0)
    W = torch.randn(6, 6, generator=gen, dtype=torch.float64)
    x = torch.randn(4, 6, generator=gen, dtype=torch.float64)
    layer = mt.WeightNormLinear(W, 2.5)
    y = layer(x)
    for c in (1e-3, 0.37, 8.0, 1e4):
        np.testing.assert_allclose(layer(x, c * layer.weight).detach().numpy(), y.detach().numpy(), rtol=0,
                                   atol=1e-14)
    np.testing.assert_allclose(float(torch.sqrt(torch.sum(layer.effective_weight().detach() ** 2))), 2.5, rtol=1e-15)
    assert [n for n, _ in layer.named_parameters()] == ["weight"]  # the gain is a buffer, not trained
    with pytest.raises(ValueError):
        mt.WeightNormLinear(torch.zeros(3, 3, dtype=torch.float64), 1.0)


def test_the_lm_loss_is_invariant_to_each_attention_matrix_scale_and_its_gradient_is_orthogonal():
    lm = _tiny_lm()
    P = mt.markov_language(5, rng_for(0, "test-lm-lang"))
    tokens = torch.from_numpy(mt.markov_batch(P, 4, 7, rng_for(0, "test-lm-batch")))
    L = float(lm.loss(tokens).detach())
    scaled = {m: 3.0 ** (i - 1) * lm.attn[m].weight.detach() for i, m in enumerate(mt.MATRICES)}
    np.testing.assert_allclose(float(lm.loss(tokens, scaled).detach()), L, rtol=1e-14)
    grads = torch.autograd.grad(lm.loss(tokens), [lm.attn[m].weight for m in mt.MATRICES])
    for m, g in zip(mt.MATRICES, grads, strict=True):
        W = lm.attn[m].weight.detach()
        cos = abs(float(torch.sum(g * W))) / float(torch.sqrt(torch.sum(g * g)) * torch.sqrt(torch.sum(W * W)))
        assert cos <= 1e-13, (m, cos)


def test_build_model_refuses_a_trainable_gain(monkeypatch):
    class TrainedGain(mt.TinyAttentionLM):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            for m in mt.MATRICES:
                layer = self.attn[m]
                gain = layer._buffers.pop("gain")
                layer.gain = torch.nn.Parameter(gain.clone())

    monkeypatch.setattr(mt, "TinyAttentionLM", TrainedGain)
    with pytest.raises(ValueError, match="gain"):
        mt.build_model(5, 8, 6, 1.0, rng_for(0, "test-lm"))


def test_markov_language_and_batches():
    P = mt.markov_language(7, rng_for(0, "test-markov"))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-15)
    toks = mt.markov_batch(P, 50, 9, rng_for(0, "test-markov-batch"))
    assert toks.shape == (50, 9) and toks.min() >= 0 and toks.max() < 7
    assert 0 < mt.markov_entropy_rate(P) < np.log(7)
    with pytest.raises(ValueError):
        mt.markov_language(1, rng_for(0, "x"))


def test_the_norm_identity_holds_on_a_few_transformer_steps():
    lm = _tiny_lm(1)
    P = mt.markov_language(5, rng_for(1, "test-lm-lang"))
    for lam in (0.0, 0.05):
        run = mt.train_sgd_track(_tiny_lm(1), P, 3, 4, 0.5, lam, rng_for(1, "test-lm-steps", str(lam)))
        c = 1 - 0.5 * lam
        R = run["R"]
        np.testing.assert_allclose(R[1:], c**2 * R[:-1] + 0.25 * run["ghat2"] / R[:-1], rtol=1e-13)
        assert np.max(run["radial"]) <= 1e-13
    with pytest.raises(ValueError):
        mt.train_sgd_track(lm, P, 3, 4, 1.0, 1.0, rng_for(1, "x"))


def test_transformer_training_is_deterministic(transformer):
    P = mt.markov_language(6, rng_for(3, "test-tf-language"))
    lm = mt.build_model(6, transformer["d"], 6, 1.0, rng_for(3, "test-tf-init"))
    again = mt.train_sgd_track(lm, P, 40, 8, transformer["lr"], 0.0, rng_for(3, "test-tf", "grow"), spectra=True)
    for key in ("R", "ghat2", "tan", "loss", "sqrt_p"):
        np.testing.assert_array_equal(again[key], transformer["grow"][key])


# ---------------------------------------------------------------- bad input


def test_bad_input_raises():
    rng = rng_for(0, "test-bad")
    with pytest.raises(ValueError):
        model.trace_normalized_spectrum(np.zeros((3, 3)))
    with pytest.raises(ValueError):
        model.trace_normalized_spectrum(np.ones(3))
    with pytest.raises(ValueError):
        model.trace_normalized_spectrum(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError):
        model.angle(np.zeros((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError):
        model.hellinger(np.ones(3) / 3, np.ones(2) / 2)
    s = np.array([2.0, 1.0])
    with pytest.raises(ValueError):
        model.aligned_problem(s, s, 1.5, rng)
    with pytest.raises(ValueError):
        model.aligned_problem(s[::-1].copy(), s, 0.5, rng)
    with pytest.raises(ValueError):
        model.aligned_problem(s, np.array([1.0, -1.0]), 0.5, rng)
    W0 = model.gaussian_start(2, 3, 1.0, rng)
    for eta, lam in ((0.0, 0.0), (-0.1, 0.0), (0.1, -0.1), (2.0, 0.5)):
        with pytest.raises(ValueError):
            model.scale_invariant_sgd(W0, 5, eta, lam, 1.0, 2, rng)
    with pytest.raises(ValueError):
        model.scale_invariant_sgd(W0[0], 5, 0.1, 0.0, 1.0, 2, rng)


# ---------------------------------------------------------------- claims hold, and fail with their wrong theory


def _c1(transformer, th=theory):
    runs = [(transformer["grow"], transformer["lr"], 0.0),
            (transformer["decay"], transformer["lr"], transformer["lam"])]
    return (claims.claim_norm_identity("C1a", runs, transformer["d"], theory=th),
            claims.claim_angle_identity("C1b", runs, transformer["d"], theory=th))


def _c2(aligned, th=theory, tf_run=None):
    prob, gd, start = aligned[0]
    gds = [a[1] for a in aligned]
    return (claims.claim_budget_path("C2a", gd, start, prob["eta"], prob["alpha"], theory=th),
            claims.claim_norm_path("C2b", gds, [a[2] for a in aligned], [a[0]["eta"] for a in aligned],
                                   [a[0]["alpha"] for a in aligned], theory=th),
            claims.claim_budget_bound("C2c", gd, tf_run, theory=th),
            claims.claim_budget_attained("C2d", gd, theory=th))


def _c5(aligned, th=theory):
    gds = [a[1] for a in aligned]
    alphas = [a[0]["alpha"] for a in aligned]
    etas = [a[0]["eta"] for a in aligned]
    starts = [a[2] for a in aligned]
    return (claims.claim_loss_spectrum("C5a", gds, alphas, theory=th),
            claims.claim_root_loss_ratio("C5b", gds, starts, etas, alphas, theory=th),
            claims.claim_root_loss_bound("C5c", gds, alphas, theory=th))


def _c3(noise, th=theory):
    return claims.claim_growth_exponent("C3", noise["grow"], noise["eta"], theory=th)


def _c4(noise, th=theory):
    return (claims.claim_equilibrium("C4a", noise["decay"], noise["eta"], noise["lam"], theory=th),
            claims.claim_invariance("C4b", noise["ag_decay"], noise["ag_scaled"], 4.0, theory=th))


def _c6(noise, th=theory):
    return claims.claim_muon_bound("C6", noise["muon"], theory=th)


def test_all_claims_hold_for_the_theory(aligned, noise, transformer):
    for c in (*_c1(transformer), *_c2(aligned, tf_run=transformer["grow"]), *_c5(aligned), _c3(noise),
              *_c4(noise), _c6(noise)):
        assert c.passed, c


def test_c1a_rejects_conserved_norm_and_coupled_l2(transformer):
    assert not _c1(transformer, variant(theory, next_sq_norm=theory.wrong_next_sq_norm))[0].passed
    assert not _c1(transformer, variant(theory, next_sq_norm=theory.wrong_coupled_next_sq_norm))[0].passed


def test_c1a_coupled_l2_is_rejected_by_the_weight_decay_run_alone(transformer):
    runs = [(transformer["decay"], transformer["lr"], transformer["lam"])]
    wrong = variant(theory, next_sq_norm=theory.wrong_coupled_next_sq_norm)
    assert not claims.claim_norm_identity("C1a", runs, transformer["d"], theory=wrong).passed


def test_c1a_fails_on_a_radial_gradient(transformer):
    bad = dict(transformer["grow"], radial=transformer["grow"]["radial"] + 1e-9)
    assert not claims.claim_norm_identity("C1a", [(bad, transformer["lr"], 0.0)], transformer["d"]).passed


def _nan_on(call: int, f):
    """f, except that its ``call``-th result (0-based) has NaN in its second entry (an early step, which
    every claim keeps)."""
    calls = []

    def g(*args):
        out = np.array(f(*args), dtype=float, copy=True)
        if len(calls) == call:
            out[..., 1] = np.nan
        calls.append(1)
        return out
    return g


def _nan_on_tuple(call: int, f):
    """The same for a function returning (R, phi): NaN in the second entry of R and phi of the ``call``-th result."""
    calls = []

    def g(*args):
        R, phi = (np.array(x, dtype=float, copy=True) for x in f(*args))
        if len(calls) == call:
            R[1] = phi[1] = np.nan
        calls.append(1)
        return R, phi
    return g


@pytest.mark.parametrize("call", [0, 1])
def test_c1_fails_on_a_theory_returning_nan_on_either_run(transformer, call):
    assert not _c1(transformer, variant(theory, next_sq_norm=_nan_on(call, theory.next_sq_norm)))[0].passed
    assert not _c1(transformer, variant(theory, angular_step_tan=_nan_on(call, theory.angular_step_tan)))[1].passed


@pytest.mark.parametrize("first", [True, False])
def test_c1a_fails_on_a_nan_radial_cosine(transformer, first):
    radial = transformer["grow"]["radial"].copy()
    radial[-1, -1] = np.nan
    bad = dict(transformer["grow"], radial=radial)
    good = (transformer["decay"], transformer["lr"], transformer["lam"])
    runs = [(bad, transformer["lr"], 0.0), good] if first else [good, (bad, transformer["lr"], 0.0)]
    assert not claims.claim_norm_identity("C1a", runs, transformer["d"]).passed


@pytest.mark.parametrize("call", [0, 1])
def test_c2b_c5_fail_on_a_theory_returning_nan_on_either_run(aligned, call):
    nan_path = variant(theory, aligned_recursion=_nan_on_tuple(call, theory.aligned_recursion))
    assert not claims.claim_norm_path("C2b", [a[1] for a in aligned], [a[2] for a in aligned],
                                      [a[0]["eta"] for a in aligned], [a[0]["alpha"] for a in aligned],
                                      theory=nan_path).passed
    c5 = [_c5(aligned, variant(theory, aligned_recursion=_nan_on_tuple(call, theory.aligned_recursion)))[1],
          _c5(aligned, variant(theory, root_loss_ratio=_nan_on(call, theory.root_loss_ratio)))[1],
          _c5(aligned, variant(theory, loss_from_spectrum=_nan_on(call, theory.loss_from_spectrum)))[0]]
    assert not any(c.passed for c in c5)
    # C5c keeps the steps with H_t > 1e-6 only: NaN in every entry of the call's bound
    calls = []

    def bound(a, H):
        out = theory.root_loss_step_bound(a, H) * (np.nan if len(calls) == call else 1.0)
        calls.append(1)
        return out
    assert not _c5(aligned, variant(theory, root_loss_step_bound=bound))[2].passed


def test_identity_tolerance_is_a_rounding_model():
    assert claims.identity_tolerance(8) == 1e-12
    assert claims.identity_tolerance(48) == pytest.approx(4 * 48**2 * 2.0**-53)


def test_c1b_rejects_the_unsquared_norm(transformer):
    assert not _c1(transformer, variant(theory, angular_step_tan=theory.wrong_angular_step_tan))[1].passed


def test_c2c_holds_on_the_transformer_matrices_far_from_the_budget(transformer):
    ratios = claims.transformer_budget_ratios(transformer["grow"])
    assert ratios.shape == (4,) and np.all(ratios > 0) and np.all(ratios < 1)
    assert np.all(claims.transformer_budget_ratios(transformer["grow"], theory=variant(
        theory, spectral_budget=theory.wrong_spectral_budget)) == 2 * ratios)


def test_c2a_rejects_the_constant_norm_recursion(aligned):
    assert not _c2(aligned, variant(theory, aligned_recursion=theory.wrong_aligned_recursion))[0].passed


def test_c2b_rejects_the_constant_norm_recursion(aligned):
    assert not _c2(aligned, variant(theory, aligned_recursion=theory.wrong_aligned_recursion))[1].passed


def test_c2c_rejects_the_budget_without_factor_two(aligned, transformer):
    wrong = variant(theory, spectral_budget=theory.wrong_spectral_budget)
    assert not _c2(aligned, wrong, tf_run=transformer["grow"])[2].passed


def test_c2d_rejects_a_budget_twice_too_large(aligned):
    double = variant(theory, spectral_budget=lambda a, b: 4.0 * float(np.log(b / a)))
    assert not _c2(aligned, double)[3].passed


def test_budget_efficiency_expansion():
    for x in (1e-9, 1e-3, 1e-2, 0.1):
        np.testing.assert_allclose(claims.budget_efficiency(np.array([2 * np.sin(x / 2)]))[0], 1 - x**2 / 4,
                                   atol=x**4 + 1e-15)
    assert claims.budget_efficiency(np.array([0.0]))[0] == 1.0


def test_c3_rejects_random_walk_growth(noise):
    assert not _c3(noise, variant(theory, norm_growth_exponent=theory.wrong_norm_growth_exponent)).passed


def test_c4a_rejects_the_sqrt_eta_lam_scale(noise):
    assert not _c4(noise, variant(theory, equilibrium_log_sec2=theory.wrong_equilibrium_log_sec2))[0].passed


def test_c4b_rejects_norm_scaling_like_the_learning_rate(noise):
    assert not _c4(noise, variant(theory, invariance_norm_scale=theory.wrong_invariance_norm_scale))[1].passed


def test_c5a_rejects_the_total_variation_reading(aligned):
    assert not _c5(aligned, variant(theory, loss_from_spectrum=theory.wrong_loss_from_spectrum))[0].passed


def test_c5b_rejects_the_constant_norm_recursion(aligned):
    assert not _c5(aligned, variant(theory, aligned_recursion=theory.wrong_aligned_recursion))[1].passed


def test_c5c_rejects_the_constant_one_half(aligned):
    assert not _c5(aligned, variant(theory, root_loss_step_bound=theory.wrong_root_loss_step_bound))[2].passed


def test_c6_rejects_a_frozen_spectrum(noise):
    assert not _c6(noise, variant(theory, muon_spectral_bound=theory.wrong_muon_spectral_bound)).passed


def test_a_wrong_theory_that_returns_nan_fails_instead_of_crashing(noise, aligned):
    nan = variant(theory, norm_growth_exponent=lambda: float("nan"),
                  spectral_budget=lambda a, b: float("nan"))
    assert not _c3(noise, nan).passed
    assert not _c2(aligned, nan)[2].passed
    assert not _c2(aligned, nan)[3].passed
