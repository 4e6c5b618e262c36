"""The model of chapter 'alpha-divergence-rff-critic': samplers, features, solvers; every measured value.

Never imports ``theory``: a mutation of the theory cannot move a measurement. The
convex conjugate is implemented here a second time on purpose: the solver is the
estimator the paper proposes, and it must not read the formula under test.
Random functions take an explicit ``rng``.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, special, stats

from theorylib.core.validation import check_array, check_positive, check_positive_int, check_real


def _check_alpha(alpha: float) -> float:
    a = check_real("alpha", alpha)
    if not 0 < a < 1:
        raise ValueError(f"alpha = {alpha!r} must lie in (0, 1)")
    return a


def _check_radius(R: float, alpha: float) -> float:
    R = check_positive("R", R)
    if R >= 1 / (1 - alpha):
        raise ValueError(f"R = {R!r} must be below 1/(1 - alpha) = {1 / (1 - alpha):.4g}: "
                         "beyond it the critic can leave the domain of f*")
    return R


def _check_cov(S: np.ndarray, d: int) -> np.ndarray:
    S = check_array("covariance", S, shape=(d, d))
    if not np.allclose(S, S.T) or np.linalg.eigvalsh(S).min() <= 0:
        raise ValueError("a covariance must be symmetric positive definite")
    return S


# --- the alpha-divergence's conjugate generator (estimator side) -------------------------------------------


def _z(u: np.ndarray, alpha: float) -> np.ndarray:
    return 1.0 - (1.0 - alpha) * u


def conj(u: np.ndarray, alpha: float) -> np.ndarray:
    """f*(u) = ((1 + (alpha-1) u)^{alpha/(alpha-1)} - 1)/alpha, on u < 1/(1-alpha)."""
    return (np.exp(alpha / (alpha - 1) * np.log(_z(u, alpha))) - 1.0) / alpha


def conj_d1(u: np.ndarray, alpha: float) -> np.ndarray:
    """f*'(u) = (1 + (alpha-1) u)^{1/(alpha-1)}."""
    return np.exp(np.log(_z(u, alpha)) / (alpha - 1))


def conj_d2(u: np.ndarray, alpha: float) -> np.ndarray:
    """f*''(u) = (1 + (alpha-1) u)^{(2-alpha)/(alpha-1)}."""
    return np.exp((2 - alpha) / (alpha - 1) * np.log(_z(u, alpha)))


# --- data, densities, oracle ------------------------------------------------------------------------------


def sample_gaussian(n: int, mean: np.ndarray, cov: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """n draws of N(mean, cov), shape (n, d)."""
    n = check_positive_int("n", n)
    mean = check_array("mean", mean, ndim=1)
    cov = _check_cov(cov, mean.size)
    L = np.linalg.cholesky(cov)
    return mean + rng.standard_normal((n, mean.size)) @ L.T


def log_gauss(X: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log N(x; mean, cov) for each row of X."""
    L = np.linalg.cholesky(cov)
    Z = np.linalg.solve(L, (X - mean).T)
    return -0.5 * np.sum(Z**2, axis=0) - np.log(np.diag(L)).sum() - 0.5 * mean.size * np.log(2 * np.pi)


def log_ratios(XP: np.ndarray, XQ: np.ndarray, mP: np.ndarray, SP: np.ndarray, mQ: np.ndarray,
               SQ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The log density ratios log p/q on the P-sample and on the Q-sample (the oracle critic's input)."""
    XP, XQ = check_array("XP", XP, ndim=2), check_array("XQ", XQ, ndim=2)
    if XP.shape[1] != XQ.shape[1] or XP.shape[1] != np.asarray(mP).size:
        raise ValueError("the samples and the means must have the same dimension")
    return (log_gauss(XP, mP, SP) - log_gauss(XP, mQ, SQ), log_gauss(XQ, mP, SP) - log_gauss(XQ, mQ, SQ))


def quadrature_divergence(alpha: float, mP: np.ndarray, SP: np.ndarray, mQ: np.ndarray,
                          SQ: np.ndarray) -> float:
    """D_alpha(P||Q) = (1 - int p^alpha q^{1-alpha})/(alpha(1-alpha)) by adaptive quadrature.

    Diagonal covariances factorize into 1-D ``quad`` integrals; a 2-D pair with correlation uses
    ``dblquad``. Other shapes are refused.
    """
    alpha = _check_alpha(alpha)
    mP, mQ = np.asarray(mP, float), np.asarray(mQ, float)
    SP, SQ = np.asarray(SP, float), np.asarray(SQ, float)
    d = mP.size
    diag = np.allclose(SP, np.diag(np.diag(SP))) and np.allclose(SQ, np.diag(np.diag(SQ)))
    if diag:
        aff = 1.0
        for i in range(d):
            lp = stats.norm(mP[i], np.sqrt(SP[i, i])).logpdf
            lq = stats.norm(mQ[i], np.sqrt(SQ[i, i])).logpdf
            val, _ = integrate.quad(lambda x, lp=lp, lq=lq: np.exp(alpha * lp(x) + (1 - alpha) * lq(x)),
                                    -np.inf, np.inf, epsabs=0.0, epsrel=1e-13, limit=200)
            aff *= val
    elif d == 2:
        iP, iQ = np.linalg.inv(SP), np.linalg.inv(SQ)
        cP = -0.5 * np.log(np.linalg.det(SP)) - np.log(2 * np.pi)
        cQ = -0.5 * np.log(np.linalg.det(SQ)) - np.log(2 * np.pi)

        def h(y: float, x: float) -> float:
            v = np.array([x, y])
            a, b = v - mP, v - mQ
            return float(np.exp(alpha * (cP - 0.5 * a @ iP @ a) + (1 - alpha) * (cQ - 0.5 * b @ iQ @ b)))

        s = 12.0 * np.sqrt(max(SP.max(), SQ.max()))
        lo, hi = np.minimum(mP, mQ) - s, np.maximum(mP, mQ) + s
        aff, _ = integrate.dblquad(h, lo[0], hi[0], lo[1], hi[1], epsabs=1e-14, epsrel=1e-12)
    else:
        raise ValueError("quadrature needs diagonal covariances or d = 2")
    return float((1.0 - aff) / (alpha * (1.0 - alpha)))


# --- kernel and random Fourier features -------------------------------------------------------------------


def bl_gauss_kernel(X: np.ndarray, Y: np.ndarray, ell: float, Omega: float) -> np.ndarray:
    """The band-limited Gaussian kernel k(x, y) = prod_i kappa(x_i - y_i).

    kappa(t) = Re[e^{-b^2} erf(a + i b)]/erf(a), a = ell Omega/sqrt 2, b = t/(ell sqrt 2): the
    characteristic function of N(0, ell^{-2}) truncated to [-Omega, Omega], evaluated stably as
    (e^{-b^2} - Re[e^{-a^2 - 2iab} w(-b + i a)])/erf(a) with the Faddeeva function w.
    """
    ell, Omega = check_positive("ell", ell), check_positive("Omega", Omega)
    X, Y = check_array("X", X, ndim=2), check_array("Y", Y, ndim=2)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y have different widths {X.shape[1]} and {Y.shape[1]}")
    a = ell * Omega / np.sqrt(2)
    K = np.ones((X.shape[0], Y.shape[0]))
    for i in range(X.shape[1]):
        b = (X[:, i][:, None] - Y[:, i][None, :]) / (ell * np.sqrt(2))
        K *= (np.exp(-b**2) - np.real(np.exp(-a**2 - 2j * a * b) * special.wofz(-b + 1j * a))) / special.erf(a)
    return K


def sample_frequencies(D: int, d: int, ell: float, Omega: float, rng: np.random.Generator) -> np.ndarray:
    """D frequency vectors with iid coordinates N(0, ell^{-2}) truncated to [-Omega, Omega], shape (D, d)."""
    D, d = check_positive_int("D", D), check_positive_int("d", d)
    ell, Omega = check_positive("ell", ell), check_positive("Omega", Omega)
    c = ell * Omega
    return stats.truncnorm.rvs(-c, c, size=(D, d), random_state=rng) / ell


def rff(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """phi(x) = D^{-1/2} [cos(W x); sin(W x)], shape (n, 2D); ||phi(x)|| = 1."""
    X, W = check_array("X", X, ndim=2), check_array("W", W, ndim=2)
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X has width {X.shape[1]} but the frequencies have {W.shape[1]}")
    Z = X @ W.T
    return np.hstack([np.cos(Z), np.sin(Z)]) / np.sqrt(W.shape[0])


# --- the RKHS-ball estimator ------------------------------------------------------------------------------


def objective(theta: np.ndarray, FP: np.ndarray, FQ: np.ndarray, alpha: float) -> float:
    """J_n(theta) = mean_P theta^T phi - mean_Q f*(theta^T phi)."""
    return float(FP.mean(axis=0) @ theta - conj(FQ @ theta, alpha).mean())


def gradient(theta: np.ndarray, FP: np.ndarray, FQ: np.ndarray, alpha: float) -> np.ndarray:
    """grad J_n(theta) = mean_P phi - mean_Q f*'(theta^T phi) phi."""
    return FP.mean(axis=0) - FQ.T @ conj_d1(FQ @ theta, alpha) / FQ.shape[0]


def hessian(theta: np.ndarray, FQ: np.ndarray, alpha: float) -> np.ndarray:
    """Hess J_n(theta) = -mean_Q f*''(theta^T phi) phi phi^T (negative semidefinite)."""
    w = conj_d2(FQ @ theta, alpha)
    return -(FQ * w[:, None]).T @ FQ / FQ.shape[0]


def project_ball(theta: np.ndarray, R: float) -> np.ndarray:
    """Euclidean projection onto {||theta|| <= R}."""
    nrm = np.linalg.norm(theta)
    return theta if nrm <= R else theta * (R / nrm)


def kkt_residual(theta: np.ndarray, FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float) -> float:
    """||theta - Proj_ball(theta + grad J_n(theta))||: zero exactly at the maximizer."""
    return float(np.linalg.norm(theta - project_ball(theta + gradient(theta, FP, FQ, alpha), R)))


def _ball_quadratic_max(b: np.ndarray, A: np.ndarray, R: float) -> np.ndarray:
    """argmax over ||y|| <= R of b^T y - y^T A y / 2, A symmetric PSD (eigendecomposition + secular equation)."""
    a, V = np.linalg.eigh(A)
    a = np.maximum(a, 0.0)
    bt = V.T @ b
    if a.min() > 0:
        y0 = bt / a
        if np.linalg.norm(y0) <= R:
            return V @ y0
    # ||y(lam0)|| >= |bt_i|/(a_i + lam0) = R for the maximizing i: Newton starts left of the root.
    lam = max(0.0, float(np.max(np.abs(bt) / R - a)))
    for _ in range(100):  # Newton on 1/||y(lam)|| - 1/R, concave and increasing: monotone from the left
        den = np.where(a + lam > 0, a + lam, np.inf)
        y = bt / den
        ny = np.linalg.norm(y)
        phi = 1.0 / ny - 1.0 / R
        dphi = np.sum(bt**2 / den**3) / ny**3
        step = phi / dphi
        lam = lam - step
        if abs(step) <= 1e-15 * max(lam, 1e-300):
            break
    return V @ (bt / np.where(a + lam > 0, a + lam, np.inf))


def solve_ball(FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float, theta0: np.ndarray | None = None,
               tol: float = 1e-13, max_iter: int = 60) -> tuple[np.ndarray, float, int]:
    """max_{||theta|| <= R} J_n(theta) by Newton steps on the ball (the paper's estimator, solved exactly).

    Each step maximizes the local quadratic model over the ball (a trust-region subproblem), with a
    backtracking line search that keeps the iterate in the ball. Returns (theta, value, iterations).
    """
    alpha = _check_alpha(alpha)
    R = _check_radius(R, alpha)
    FP, FQ = check_array("FP", FP, ndim=2), check_array("FQ", FQ, ndim=2)
    if FP.shape[1] != FQ.shape[1]:
        raise ValueError(f"feature widths differ: {FP.shape[1]} and {FQ.shape[1]}")
    theta = np.zeros(FP.shape[1]) if theta0 is None else project_ball(np.asarray(theta0, float), R)
    val = objective(theta, FP, FQ, alpha)
    it = 0
    for step in range(1, max_iter + 1):
        it = step
        g = gradient(theta, FP, FQ, alpha)
        H = hessian(theta, FQ, alpha)
        y = _ball_quadratic_max(g - H @ theta, -H, R)
        s = y - theta
        t = 1.0
        while True:
            cand = theta + t * s
            cv = objective(cand, FP, FQ, alpha)
            if cv >= val - 1e-15 * max(1.0, abs(val)) or t < 1e-6:
                break
            t *= 0.5
        theta, val = cand, cv
        if np.linalg.norm(t * s) <= 1e-15 or kkt_residual(theta, FP, FQ, R, alpha) <= tol:
            break
    return theta, val, it


def eigen_features(K: np.ndarray, rel: float = 1e-12) -> np.ndarray:
    """Psi = U Lambda^{1/2} from the Gram matrix K = U Lambda U^T, keeping eigenvalues > rel * max."""
    lam, U = np.linalg.eigh(K)
    keep = lam > rel * lam.max()
    return U[:, keep] * np.sqrt(lam[keep])


def gram_ball_value(K: np.ndarray, nP: int, R: float, alpha: float) -> float:
    """The RKHS-ball value max_{||h||_H <= R} mean_P h - mean_Q f*(h) from the Gram matrix of (XP; XQ).

    By the representer theorem the maximizer lies in the span of the kernel sections, and
    theta = Lambda^{1/2} U^T c maps it onto a ball in the eigen-feature coordinates.
    """
    Psi = eigen_features(K)
    _, val, _ = solve_ball(Psi[:nP], Psi[nP:], R, alpha)
    return val


def rff_gram_values(XP: np.ndarray, XQ: np.ndarray, W: np.ndarray, D_list: list[int], R: float,
                    alpha: float) -> np.ndarray:
    """The ball values V_D for the nested feature maps made of the first D rows of W, D in ``D_list``."""
    X = np.vstack([XP, XQ])
    K = np.zeros((X.shape[0], X.shape[0]))
    out, done = [], 0
    for D in D_list:
        Z = X @ W[done:D].T
        K += np.cos(Z) @ np.cos(Z).T + np.sin(Z) @ np.sin(Z).T
        done = D
        out.append(gram_ball_value(K / D, XP.shape[0], R, alpha))
    return np.array(out)


# --- the statistical experiment ---------------------------------------------------------------------------


def replicate_estimates(n: int, reps: int, W: np.ndarray, mP: np.ndarray, SP: np.ndarray, R: float,
                        alpha: float, theta0: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """``reps`` independent estimates D_hat_n (n_P = n_Q = n, Q = N(0, I)), and the worst KKT residual."""
    d = W.shape[1]
    est, worst = np.empty(reps), 0.0
    for r in range(reps):
        FP = rff(sample_gaussian(n, mP, SP, rng), W)
        FQ = rff(rng.standard_normal((n, d)), W)
        theta, est[r], _ = solve_ball(FP, FQ, R, alpha, theta0=theta0)
        worst = max(worst, kkt_residual(theta, FP, FQ, R, alpha))
    return est, worst


# --- the optimization experiment --------------------------------------------------------------------------


def projected_ga(FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float, eta: float, T: int,
                 theta0: np.ndarray) -> np.ndarray:
    """T steps of projected gradient ascent theta <- Proj_ball(theta + eta grad J_n); the path, (T+1, p)."""
    eta, T = check_positive("eta", eta), check_positive_int("T", T)
    path = np.empty((T + 1, FP.shape[1]))
    path[0] = project_ball(np.asarray(theta0, float), R)
    for t in range(T):
        path[t + 1] = project_ball(path[t] + eta * gradient(path[t], FP, FQ, alpha), R)
    return path


def armijo_sga(FP: np.ndarray, FQ: np.ndarray, R: float, alpha: float, batch: int, steps: int,
               rng: np.random.Generator, eta_max: float = 10.0, c: float = 0.5, shrink: float = 0.5,
               grow: float = 2.0) -> np.ndarray:
    """Projected stochastic gradient ascent with the stochastic Armijo line search; the iterates, (steps+1, p).

    Each step draws ``batch`` rows of FP and of FQ (without replacement), forms the minibatch objective J_B
    and its gradient g_B, and backtracks eta <- shrink * eta from min(eta_max, grow * eta_prev) until the
    projected step theta+ = Proj_ball(theta + eta g_B) satisfies J_B(theta+) >= J_B(theta) + c eta ||G||^2
    with G = (theta+ - theta)/eta, the gradient mapping (the Armijo condition of Vaswani et al., 2019, in its
    projected form; with ``batch`` = n it is deterministic Armijo gradient ascent).
    """
    R = check_positive("R", R)
    batch, steps = check_positive_int("batch", batch), check_positive_int("steps", steps)
    nP, nQ = FP.shape[0], FQ.shape[0]
    if batch > min(nP, nQ):
        raise ValueError(f"batch = {batch} exceeds the sample sizes ({nP}, {nQ})")
    path = np.zeros((steps + 1, FP.shape[1]))
    eta = eta_max
    for t in range(steps):
        theta = path[t]
        iP = rng.choice(nP, batch, replace=False) if batch < nP else slice(None)
        iQ = rng.choice(nQ, batch, replace=False) if batch < nQ else slice(None)
        BP, BQ = FP[iP], FQ[iQ]
        j0, g = objective(theta, BP, BQ, alpha), gradient(theta, BP, BQ, alpha)
        eta = min(eta_max, grow * eta)
        for _ in range(60):  # 0.5^60 eta_max is far below any curvature scale of J_B
            nxt = project_ball(theta + eta * g, R)
            G = (nxt - theta) / eta
            if objective(nxt, BP, BQ, alpha) >= j0 + c * eta * float(G @ G):
                break
            eta *= shrink
        path[t + 1] = nxt
    return path


def contraction_window(errors: np.ndarray, hi: float, lo: float) -> tuple[int, int] | None:
    """(t0, t1): the first step with error <= hi and the last after it with error >= lo (None if empty)."""
    errors = np.asarray(errors, float)
    below = np.flatnonzero(errors <= hi)
    if below.size == 0:
        return None
    t0 = int(below[0])
    t1 = t0 + int(np.flatnonzero(errors[t0:] >= lo)[-1]) if np.any(errors[t0:] >= lo) else t0
    return (t0, t1) if t1 > t0 else None


def interior_design(D: int, n: int, mP: np.ndarray, SP: np.ndarray, mQ: np.ndarray, SQ: np.ndarray, ell: float,
                    Omega: float, R: float, alpha: float, rng: np.random.Generator, margin: float = 0.95,
                    max_draws: int = 50) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Draw (frequencies, samples) until the maximizer of J_n on the ball lies in the ball of radius margin R.

    The interior case of the linearized map needs a maximizer off the sphere; whether a draw gives one is a
    property of the data (read from the solver, never from the formula under test). Returns (FP, FQ,
    theta*, draws); after max_draws failed draws, the last draw, whose maximizer is on or near the sphere.
    """
    margin = check_real("margin", margin, 0.0, 1.0, open_low=True)
    max_draws = check_positive_int("max_draws", max_draws)
    d, draws = np.asarray(mP).size, 0
    while draws < max_draws:
        draws += 1
        W = sample_frequencies(D, d, ell, Omega, rng)
        FP = rff(sample_gaussian(n, mP, SP, rng), W)
        FQ = rff(sample_gaussian(n, mQ, SQ, rng), W)
        theta, _, _ = solve_ball(FP, FQ, R, alpha, tol=1e-15)
        if np.linalg.norm(theta) <= margin * R:
            break
    return FP, FQ, theta, draws
