"""The six synthetic data-generating processes of Ma et al. (2024), App. F.1, with true counterfactuals.

Ma, Quinzan, Willem & Bauer, *AI Alignment in Medical Imaging: Unveiling Hidden Biases Through
Counterfactual Analysis*, Sec. 6.2 and App. F.1. The structural equations are

.. math::

    A &\\sim \\mathrm{Bernoulli}(p_A), \\qquad Z_n \\sim N(0, I_k), \\\\
    Z_i &= M_i Z_{i+1} A + N_i Z_{i+1} (1 - A) + \\xi_i, \\quad i = n-1, \\dots, 0, \\\\
    X &= M_X Z_0 + r + \\varepsilon_X, \\\\
    Y &\\sim \\mathrm{Bernoulli}(\\sigma(f_Y(Z_n))),

with :math:`\\xi_i, \\varepsilon_X \\sim N(0, \\sigma^2 I)`, ``k = 32``, ``sigma = 0.01`` and three
layers (``T = 3``). ``f_Y`` is one of six transformations (``KINDS``). Y depends only on the root
:math:`Z_n`, so :math:`Y \\perp A`; A changes only how the content reaches X.

What this module adds to the paper:

* **True counterfactuals.** :meth:`InvarianceData.x_do` recomputes X under :math:`do(A=a)` with the
  *same* root, the same :math:`\\xi_i, \\varepsilon_X` and the same matrices. (The authors' released
  code drew new random matrices for the counterfactual pass, so its "counterfactual" changed the
  mechanisms too; we do not.)
* **An effect knob.** ``a_effect`` interpolates the A = 0 transition matrices towards the A = 1
  ones, :math:`N_i' = M_i + \\gamma (N_i - M_i)`: ``a_effect = 0`` makes A's effect vanish exactly
  (the null of counterfactual invariance holds for every classifier), ``1`` is the paper's DGP.
* **Parameters apart from samples.** :func:`draw_params` draws the matrices and :math:`\\omega, b`
  once per dataset ("a different random realisation for each transformation"); passing the same
  :class:`SyntheticParams` to :func:`invariance_synthetic` with different seeds gives fresh
  samples from one fixed SCM, which the calibration and power studies need.

Unspecified details and our choices: :math:`M_X, r \\sim U[-1, 1]` (the paper gives no
distribution; the authors' code uses this one); labels are Bernoulli (``label_mode="threshold"``
gives the code's :math:`1[\\sigma(f_Y) \\ge 0.5]`). ``variant="code"`` switches to the parameter
distributions of the authors' notebook (A ~ Bernoulli(0.5), row-L1-normalised matrices with the
constant :math:`N_i` of its ``uniform(10, 10)`` call, uniform :math:`\\omega`, threshold labels),
minus its counterfactual bug.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cflib.runtime import as_generator

__all__ = [
    "KINDS",
    "SyntheticParams",
    "InvarianceData",
    "draw_params",
    "invariance_synthetic",
    "structural_x",
    "label_logits",
    "ParityWorld",
    "parity_world",
]

#: The six transformations f_Y of App. F.1 ("log-exp" is the paper's "log-scale" dataset).
KINDS = ("linear", "quadratic", "exponential", "interactive", "log-exp", "sin")

# omega ~ N(0, s^2 I) and b ~ N(mean, 1) per kind, App. F.1.
_PAPER_OMEGA_SD = {"linear": 1.0, "quadratic": 2.0, "exponential": 1.0, "interactive": 1.0, "log-exp": 1.0, "sin": 1.0}
_PAPER_B_MEAN = {"linear": 0.0, "quadratic": 20.0, "exponential": 10.0, "interactive": 0.0, "log-exp": 5.0, "sin": 2.0}
# The authors' notebook: omega ~ U(-1, 1) (U(-4, 4) for quadratic); b ~ N(-1.5, 1) for linear, N(0, 1) for sin.
_CODE_OMEGA_HALF = {"quadratic": 4.0}
_CODE_B_MEAN = {"linear": -1.5, "sin": 0.0}


@dataclass(frozen=True, eq=False)
class SyntheticParams:
    """Parameters of one synthetic SCM, drawn once per dataset.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    M, N : numpy.ndarray of shape (n_layers - 1, k, k)
        Transition matrices for A = 1 and A = 0; ``M[i]`` maps :math:`Z_{i+1}` to :math:`Z_i`.
        ``N`` already includes the ``a_effect`` interpolation.
    M_X : numpy.ndarray of shape (k, k)
        Mixing matrix from :math:`Z_0` to X.
    r : numpy.ndarray of shape (k,)
        Bias of X.
    omega : numpy.ndarray
        Weights of f_Y, shape (k,) or (k, k) for ``"interactive"``.
    b : float
        Offset of f_Y.
    p_a, sigma : float
        P(A = 1) and the noise standard deviation.
    a_effect : float
        The interpolation factor used for ``N``.
    label_mode : str
        ``"bernoulli"`` or ``"threshold"``.
    variant : str
        ``"paper"`` or ``"code"``.
    """

    kind: str
    M: np.ndarray = field(repr=False)
    N: np.ndarray = field(repr=False)
    M_X: np.ndarray = field(repr=False)
    r: np.ndarray = field(repr=False)
    omega: np.ndarray = field(repr=False)
    b: float
    p_a: float
    sigma: float
    a_effect: float
    label_mode: str
    variant: str

    @property
    def k(self) -> int:
        """Dimension of every layer and of X."""
        return int(self.M_X.shape[0])

    @property
    def n_layers(self) -> int:
        """Number of Z layers (the paper's T = 3)."""
        return int(self.M.shape[0] + 1)

    def with_effect(self, a_effect: float) -> SyntheticParams:
        """The same SCM with A's effect rescaled (``N = M + a_effect * (N_raw - M)``).

        Parameters
        ----------
        a_effect : float
            New interpolation factor; 0 switches A's effect off.

        Returns
        -------
        SyntheticParams
        """
        _check_effect(a_effect)
        if self.a_effect == 0:
            raise ValueError("cannot rescale parameters drawn with a_effect=0: draw them with a_effect != 0 first")
        n_raw = self.M + (self.N - self.M) / self.a_effect
        return SyntheticParams(
            kind=self.kind,
            M=self.M,
            N=self.M + a_effect * (n_raw - self.M),
            M_X=self.M_X,
            r=self.r,
            omega=self.omega,
            b=self.b,
            p_a=self.p_a,
            sigma=self.sigma,
            a_effect=float(a_effect),
            label_mode=self.label_mode,
            variant=self.variant,
        )


@dataclass(frozen=True, eq=False)
class InvarianceData:
    """A sample from a synthetic SCM with everything needed for ground-truth counterfactuals.

    Attributes
    ----------
    x : numpy.ndarray of shape (n, k)
        Features (what a classifier sees).
    a : numpy.ndarray of shape (n,)
        Sensitive attribute in {0, 1}.
    z : numpy.ndarray of shape (n, n_layers, k)
        All layers; ``z[:, -1]`` is the root :math:`Z_n`, ``z[:, 0]`` is :math:`Z_0`.
    y : numpy.ndarray of shape (n,)
        Labels in {0, 1}.
    logits : numpy.ndarray of shape (n,)
        :math:`f_Y(Z_n)`.
    x_cf : numpy.ndarray of shape (n, k)
        X under :math:`do(A = 1 - A)` with the same noise and mechanisms.
    xi : numpy.ndarray of shape (n, n_layers - 1, k)
        Layer noise :math:`\\xi_i`.
    eps : numpy.ndarray of shape (n, k)
        Feature noise :math:`\\varepsilon_X`.
    params : SyntheticParams
        The SCM.
    """

    x: np.ndarray = field(repr=False)
    a: np.ndarray = field(repr=False)
    z: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    logits: np.ndarray = field(repr=False)
    x_cf: np.ndarray = field(repr=False)
    xi: np.ndarray = field(repr=False)
    eps: np.ndarray = field(repr=False)
    params: SyntheticParams

    @property
    def n(self) -> int:
        """Number of units."""
        return int(self.a.size)

    @property
    def z_root(self) -> np.ndarray:
        """The root :math:`Z_n` (independent of A): the adjustment set of the test."""
        return self.z[:, -1]

    @property
    def features(self) -> np.ndarray:
        """Alias of ``x``."""
        return self.x

    def x_do(self, a_value: int | np.ndarray) -> np.ndarray:
        """X under :math:`do(A = a)` for every unit, with the unit's own noise.

        Parameters
        ----------
        a_value : int or array of shape (n,)
            The intervened value(s) in {0, 1}.

        Returns
        -------
        numpy.ndarray of shape (n, k)
        """
        a = np.broadcast_to(np.asarray(a_value, dtype=float), (self.n,))
        return structural_x(self.params, a, self.z_root, xi=self.xi, eps=self.eps)

    def z_layer(self, layer: str | int = "root") -> np.ndarray:
        """One layer of Z: ``"root"`` (:math:`Z_n`, default) or an index (``1`` is the authors' choice).

        Parameters
        ----------
        layer : "root" or int
            Which layer.

        Returns
        -------
        numpy.ndarray of shape (n, k)
        """
        if layer == "root":
            return self.z_root
        if not isinstance(layer, (int, np.integer)) or not -self.z.shape[1] <= layer < self.z.shape[1]:
            raise ValueError(f"layer must be 'root' or an integer in [0, {self.z.shape[1] - 1}], got {layer!r}")
        return self.z[:, layer]

    def sample_x(self, z_root: np.ndarray, a: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """The structural map with *fresh* noise: a generator of X from (root, a), for Alg. 1's Monte-Carlo g.

        Parameters
        ----------
        z_root : numpy.ndarray of shape (m, k)
            Roots.
        a : numpy.ndarray of shape (m,)
            Attribute values to set.
        rng : numpy.random.Generator, int or None
            Source of the new noise.

        Returns
        -------
        numpy.ndarray of shape (m, k)
        """
        return structural_x(self.params, a, z_root, rng=rng)


def _check_effect(a_effect: float) -> None:
    if not isinstance(a_effect, (int, float, np.floating)) or isinstance(a_effect, bool) or not np.isfinite(a_effect):
        raise ValueError(f"a_effect must be a finite number (0 = no effect of A, 1 = the paper), got {a_effect!r}")


def draw_params(
    kind: str,
    *,
    k: int = 32,
    n_layers: int = 3,
    sigma: float = 0.01,
    p_a: float | None = None,
    a_effect: float = 1.0,
    label_mode: str | None = None,
    variant: str = "paper",
    seed: int | np.random.Generator | None = None,
) -> SyntheticParams:
    """Draw the parameters of one synthetic SCM (App. F.1).

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    k : int
        Dimension of each layer and of X (32 in the paper).
    n_layers : int
        Number of Z layers including the root (the paper's T = 3).
    sigma : float
        Standard deviation of :math:`\\xi_i` and :math:`\\varepsilon_X` (0.01).
    p_a : float, optional
        P(A = 1); default 0.3 (paper) or 0.5 (``variant="code"``).
    a_effect : float
        0 switches A's effect off (:math:`N_i = M_i`); 1 is the paper.
    label_mode : {"bernoulli", "threshold"}, optional
        Default ``"bernoulli"`` (paper) or ``"threshold"`` (code).
    variant : {"paper", "code"}
        Parameter distributions of the paper or of the authors' notebook.
    seed : int, numpy.random.Generator or None
        Randomness of the parameters.

    Returns
    -------
    SyntheticParams
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if variant not in ("paper", "code"):
        raise ValueError(f"variant must be 'paper' or 'code', got {variant!r}")
    for name, v, lo in (("k", k, 1), ("n_layers", n_layers, 2)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if not isinstance(sigma, (int, float, np.floating)) or sigma < 0:
        raise ValueError(f"sigma must be a non-negative number, got {sigma!r}")
    _check_effect(a_effect)
    p_a = (0.3 if variant == "paper" else 0.5) if p_a is None else p_a
    if not isinstance(p_a, (int, float, np.floating)) or not 0 < p_a < 1:
        raise ValueError(f"p_a must be a probability strictly between 0 and 1, got {p_a!r}")
    label_mode = ("bernoulli" if variant == "paper" else "threshold") if label_mode is None else label_mode
    if label_mode not in ("bernoulli", "threshold"):
        raise ValueError(f"label_mode must be 'bernoulli' or 'threshold', got {label_mode!r}")
    rng = as_generator(seed)
    L = n_layers - 1
    M = rng.uniform(-10, 10, size=(L, k, k))
    N_raw = rng.uniform(-10, 10, size=(L, k, k))
    if variant == "code":
        # The notebook row-L1-normalises M; its N comes from uniform(10, 10), a constant matrix.
        M = M / np.abs(M).sum(axis=2, keepdims=True)
        N_raw = np.full((L, k, k), 1.0 / k)
    N = M + a_effect * (N_raw - M)
    M_X = rng.uniform(-1, 1, size=(k, k))
    r = rng.uniform(-1, 1, size=k)
    shape = (k, k) if kind == "interactive" else (k,)
    if variant == "paper":
        omega = rng.normal(0.0, _PAPER_OMEGA_SD[kind], size=shape)
        b = float(rng.normal(_PAPER_B_MEAN[kind], 1.0))
    else:
        half = _CODE_OMEGA_HALF.get(kind, 1.0)
        omega = rng.uniform(-half, half, size=shape)
        b = float(rng.normal(_CODE_B_MEAN.get(kind, _PAPER_B_MEAN[kind]), 1.0))
    if kind == "interactive":
        np.fill_diagonal(omega, 0.0)  # the sum runs over i != j
    return SyntheticParams(
        kind=kind,
        M=M,
        N=N,
        M_X=M_X,
        r=r,
        omega=omega,
        b=b,
        p_a=float(p_a),
        sigma=float(sigma),
        a_effect=float(a_effect),
        label_mode=label_mode,
        variant=variant,
    )


def label_logits(params: SyntheticParams, z_root: np.ndarray) -> np.ndarray:
    """:math:`f_Y(Z_n)` for each row of ``z_root`` (App. F.1, the six transformations).

    Parameters
    ----------
    params : SyntheticParams
        The SCM.
    z_root : numpy.ndarray of shape (n, k)
        Roots.

    Returns
    -------
    numpy.ndarray of shape (n,)
    """
    z = np.asarray(z_root, dtype=float)
    w, b, kind = params.omega, params.b, params.kind
    if kind == "linear":
        return z @ w + b
    if kind == "quadratic":
        return (z**2) @ w + b
    if kind == "exponential":
        return np.exp(z) @ w + b
    if kind == "interactive":
        return np.einsum("ni,ij,nj->n", z, w, z) + b
    if kind == "log-exp":
        s = z @ w
        if params.variant == "code":
            return np.log(np.maximum(s, 1e-4)) + b
        # log(exp(s) + b) computed stably; b > 0 almost surely (b ~ N(5, 1)), else floor the argument.
        if b > 0:
            return np.logaddexp(s, np.log(b))
        return np.log(np.maximum(np.exp(np.minimum(s, 700.0)) + b, 1e-12))
    if kind == "sin":
        return np.sin(z) @ w + b
    raise ValueError(f"unknown kind {kind!r}")


def structural_x(
    params: SyntheticParams,
    a: np.ndarray,
    z_root: np.ndarray,
    *,
    xi: np.ndarray | None = None,
    eps: np.ndarray | None = None,
    rng: np.random.Generator | int | None = None,
    return_layers: bool = False,
):
    """Push roots through the layers to X for given values of A.

    Parameters
    ----------
    params : SyntheticParams
        The SCM.
    a : array of shape (n,)
        Values of A in {0, 1} (observed or intervened).
    z_root : array of shape (n, k)
        Roots :math:`Z_n`.
    xi, eps : numpy.ndarray, optional
        Noise of shapes (n, n_layers - 1, k) and (n, k); drawn from ``rng`` when omitted
        (passing a unit's own noise gives its counterfactual).
    rng : numpy.random.Generator, int or None
        Source of missing noise.
    return_layers : bool
        Also return the layers, shape (n, n_layers, k).

    Returns
    -------
    numpy.ndarray of shape (n, k), or (x, layers) with ``return_layers``.
    """
    z_root = np.asarray(z_root, dtype=float)
    n, k = z_root.shape
    if k != params.k:
        raise ValueError(f"z_root has {k} columns but the SCM has k = {params.k}")
    a = np.asarray(a, dtype=float).reshape(-1)
    if a.size != n:
        raise ValueError(f"a has {a.size} entries but z_root has {n} rows")
    if not np.all((a == 0) | (a == 1)):
        raise ValueError("a must hold values in {0, 1}")
    L = params.n_layers - 1
    if xi is None or eps is None:
        gen = as_generator(rng)
        xi = gen.normal(0.0, params.sigma, size=(n, L, k)) if xi is None else xi
        eps = gen.normal(0.0, params.sigma, size=(n, k)) if eps is None else eps
    layers = np.empty((n, L + 1, k))
    layers[:, L] = z_root
    cur = z_root
    for i in range(L - 1, -1, -1):
        # Z_i = M_i Z_{i+1} A + N_i Z_{i+1} (1 - A) + xi_i, vectorised over units.
        cur = a[:, None] * (cur @ params.M[i].T) + (1 - a)[:, None] * (cur @ params.N[i].T) + xi[:, i]
        layers[:, i] = cur
    x = cur @ params.M_X.T + params.r + eps
    return (x, layers) if return_layers else x


def invariance_synthetic(
    kind: str,
    n: int,
    *,
    k: int = 32,
    n_layers: int = 3,
    sigma: float = 0.01,
    p_a: float | None = None,
    a_effect: float = 1.0,
    label_mode: str | None = None,
    variant: str = "paper",
    params: SyntheticParams | None = None,
    seed: int | np.random.Generator | None = None,
) -> InvarianceData:
    """Sample one of the six synthetic datasets of App. F.1, with true counterfactuals.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`: ``"linear"``, ``"quadratic"``, ``"exponential"``, ``"interactive"``,
        ``"log-exp"`` (the paper's "log-scale"), ``"sin"``.
    n : int
        Number of units.
    k, n_layers, sigma, p_a, a_effect, label_mode, variant
        See :func:`draw_params`; ignored when ``params`` is given (except ``a_effect``, which
        rescales the given parameters when it differs from theirs).
    params : SyntheticParams, optional
        A fixed SCM (fresh samples from the same mechanisms). Drawn from ``seed`` when omitted.
    seed : int, numpy.random.Generator or None
        Randomness: parameters (when not given) and then the sample.

    Returns
    -------
    InvarianceData
        ``x, a, z, y, logits, x_cf`` (A flipped, same noise and matrices) and the noise.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = as_generator(seed)
    if params is None:
        params = draw_params(
            kind,
            k=k,
            n_layers=n_layers,
            sigma=sigma,
            p_a=p_a,
            a_effect=a_effect,
            label_mode=label_mode,
            variant=variant,
            seed=rng,
        )
    else:
        if not isinstance(params, SyntheticParams):
            raise TypeError(f"params must be a SyntheticParams from draw_params, got {type(params).__name__}")
        if kind != params.kind:
            raise ValueError(f"kind={kind!r} but params were drawn for {params.kind!r}")
        _check_effect(a_effect)
        if a_effect != params.a_effect:
            params = params.with_effect(a_effect)
    k, L = params.k, params.n_layers - 1
    a = (rng.random(n) < params.p_a).astype(float)
    z_root = rng.normal(size=(n, k))
    xi = rng.normal(0.0, params.sigma, size=(n, L, k))
    eps = rng.normal(0.0, params.sigma, size=(n, k))
    x, layers = structural_x(params, a, z_root, xi=xi, eps=eps, return_layers=True)
    x_cf = structural_x(params, 1 - a, z_root, xi=xi, eps=eps)
    logits = label_logits(params, z_root)
    prob = 1.0 / (1.0 + np.exp(-np.clip(logits, -500, 500)))
    y = (rng.random(n) < prob).astype(int) if params.label_mode == "bernoulli" else (prob >= 0.5).astype(int)
    return InvarianceData(x=x, a=a.astype(int), z=layers, y=y, logits=logits, x_cf=x_cf, xi=xi, eps=eps, params=params)


@dataclass(frozen=True, eq=False)
class ParityWorld:
    """A small SCM built to show where parity criteria and counterfactual invariance disagree.

    Features are ``x = [c1, c2, t]``: a disease signal ``c1 = (2D - 1) + s U1``, disease-irrelevant
    content ``c2 = U2`` and an attribute trace ``t = trace (2A - 1) + 0.3 U3``. The content
    ``z = (D, U1, U2, U3)`` is kept fixed by a counterfactual, which only redraws ``t`` from the new A
    (as the paper's generator "preserves disease-related features").

    Attributes
    ----------
    x, x_cf : numpy.ndarray of shape (n, 3)
        Factual features and features under :math:`do(A = 1 - A)`.
    a, d, y : numpy.ndarray of shape (n,)
        Attribute, disease and recorded label (``y`` may carry group-dependent false positives).
    z : numpy.ndarray of shape (n, 4)
        Content ``(D, U1, U2, U3)``.
    trace : float
        Size of the attribute trace.
    """

    x: np.ndarray = field(repr=False)
    x_cf: np.ndarray = field(repr=False)
    a: np.ndarray = field(repr=False)
    d: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    z: np.ndarray = field(repr=False)
    trace: float
    signal_sd: float

    def sample_x(self, z: np.ndarray, a: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Features generated from content ``z`` under :math:`do(A = a)` (deterministic given z).

        Parameters
        ----------
        z : numpy.ndarray of shape (m, 4)
            Content ``(D, U1, U2, U3)``.
        a : numpy.ndarray of shape (m,)
            Attribute values to set.
        rng : ignored
            Present for the generator protocol of :func:`cflib.stats.invariance.counterfactual_predictions`.

        Returns
        -------
        numpy.ndarray of shape (m, 3)
        """
        z = np.asarray(z, dtype=float)
        a = np.asarray(a, dtype=float).reshape(-1)
        d, u1, u2, u3 = z.T
        return np.column_stack([(2 * d - 1) + self.signal_sd * u1, u2, self.trace * (2 * a - 1) + 0.3 * u3])


def parity_world(
    n: int,
    *,
    prevalence: tuple[float, float] = (0.3, 0.3),
    false_positive: tuple[float, float] = (0.0, 0.0),
    p_a: float = 0.5,
    trace: float = 1.0,
    signal_sd: float = 0.7,
    seed: int | np.random.Generator | None = None,
) -> ParityWorld:
    """Sample the :class:`ParityWorld` SCM (used to build the DP/EO counterexamples of claim 4).

    Parameters
    ----------
    n : int
        Number of units.
    prevalence : (float, float)
        :math:`P(D = 1 | A = 0)` and :math:`P(D = 1 | A = 1)` (unequal: disease depends on the group,
        like the race-disease association of the paper's Figs. 6-7).
    false_positive : (float, float)
        Per group, the probability that a healthy unit is recorded as ``y = 1``.
    p_a : float
        :math:`P(A = 1)`.
    trace : float
        Size of the attribute trace in feature ``t``.
    signal_sd : float
        Noise of the disease signal ``c1``.
    seed : int, numpy.random.Generator or None
        Randomness.

    Returns
    -------
    ParityWorld
    """
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    for name, pair in (("prevalence", prevalence), ("false_positive", false_positive)):
        if len(pair) != 2 or not all(0 <= float(v) <= 1 for v in pair):
            raise ValueError(f"{name} must be two probabilities (group 0, group 1), got {pair!r}")
    if not 0 < p_a < 1:
        raise ValueError(f"p_a must be strictly between 0 and 1, got {p_a!r}")
    rng = as_generator(seed)
    a = (rng.random(n) < p_a).astype(int)
    d = (rng.random(n) < np.asarray(prevalence, dtype=float)[a]).astype(int)
    u = rng.normal(size=(n, 3))
    fp = (rng.random(n) < np.asarray(false_positive, dtype=float)[a]) & (d == 0)
    y = np.where(fp, 1, d)
    z = np.column_stack([d, u])
    world = ParityWorld(
        x=np.empty((0, 3)), x_cf=np.empty((0, 3)), a=a, d=d, y=y, z=z, trace=float(trace), signal_sd=float(signal_sd)
    )
    x = world.sample_x(z, a)
    x_cf = world.sample_x(z, 1 - a)
    return ParityWorld(x=x, x_cf=x_cf, a=a, d=d, y=y, z=z, trace=float(trace), signal_sd=float(signal_sd))
