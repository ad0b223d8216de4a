"""Thin adapters that give every image model the :class:`~cflib.scm.protocol.CounterfactualModel` protocol.

Monteiro et al. (ICLR 2023, Sec. 3.1) treat a counterfactual image model as a black-box function
``x* = f(x, pa, pa*)``; a deep SCM (Pawlowski et al. 2020; Melistas et al., Sec. 3) spells out
abduction, action and prediction. The adapters here are the bridge: each exposes both forms, so the
axiom metrics of :mod:`cflib.metrics.axioms` score any of them, and a user's own generator needs only
a function (:class:`FunctionModel`) to be scored by every metric of the book.

* :class:`FunctionModel` -- any callable ``f(x, pa, pa_star)`` with a ``parent_names`` attribute
  (abduction implicit: the "noise" is the observation itself);
* :class:`ImageModelAdapter` -- the conditional VAE, hierarchical VAE and GAN of :mod:`cflib.models`
  (``abduct`` / ``decode`` / ``counterfactual`` on encoded parents), with the noise fixed per image;
* :class:`LatentDiffusionAdapter` -- :class:`cflib.models.diffusion.LatentDiffusion` (DDIM inversion,
  denoising), through its public methods only.

Parents are dicts ``name -> (n,)`` array; the image is one more variable (``"x"`` by default).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..validation import ValidationError, ValidationTypeError, check_count, check_finite, describe
from .protocol import Values

__all__ = [
    "Parents",
    "ParentEncoder",
    "check_parent_dict",
    "FunctionModel",
    "ImageModelAdapter",
    "LatentDiffusionAdapter",
]

Parents = Mapping[str, np.ndarray]


def check_parent_dict(pa: Any, names: Sequence[str], n: int | None, name: str) -> dict[str, np.ndarray]:
    """Check that ``pa`` is a dict with exactly the parents ``names``, one value per image.

    Parameters
    ----------
    pa : Any
        The candidate parent dict.
    names : sequence of str
        The model's parents.
    n : int or None
        Number of images (``None``: not checked).
    name : str
        Argument name used in error messages.

    Returns
    -------
    dict
        Parent -> flat array, in the order of ``names``.

    Raises
    ------
    TypeError
        ``pa`` is not a mapping.
    ValueError
        Unknown or missing parents, the wrong number of values, no values, NaN or inf.
    """
    if not isinstance(pa, Mapping):
        raise ValidationTypeError(
            f"{name} must be a dict parent name -> (n,) array, got {describe(pa)} ({type(pa).__name__})"
        )
    unknown = set(pa) - set(names)
    if unknown:
        raise ValidationError(
            f"{name} has unknown parent name(s) {sorted(map(str, unknown))}; the model's parents are {list(names)}"
        )
    missing = set(names) - set(pa)
    if missing:
        raise ValidationError(f"{name} is missing parent(s) {sorted(missing)}; the model's parents are {list(names)}")
    out = {k: np.asarray(pa[k]).reshape(-1) for k in names}
    for k, v in out.items():
        if n is not None and len(v) != n:
            raise ValidationError(
                f"{name}[{k!r}] has {len(v)} values but the image batch has {n}: give one value per image"
            )
        if len(v) == 0:
            raise ValidationError(f"{name}[{k!r}] holds no values: give one value per image")
        check_finite(v, f"{name}[{k!r}]")
    return out


def function_name(f: Any) -> str:
    """A readable name of a counterfactual function or model for error messages.

    Parameters
    ----------
    f : object
        A function, a callable object or an adapter.

    Returns
    -------
    str
        ``f.__qualname__`` for functions, ``Adapter(ModelClass)`` for the adapters of this module, else the class name.
    """
    if isinstance(f, FunctionModel) and f.f is not f:
        return function_name(f.f)
    if isinstance(f, FunctionModel):
        return f"{type(f).__name__}({type(getattr(f, 'model', None)).__name__})"
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__


def _batch(x: Any, what: str) -> Any:
    """A batch with one row per unit (at least one, finite): refuse scalars, strings, empty batches and NaN by name."""
    if x is None or isinstance(x, (str, bytes, Mapping)) or np.ndim(x) == 0:
        raise ValidationTypeError(
            f"{what} must be an array with one row per unit, got {describe(x)} ({type(x).__name__})"
        )
    if len(x) == 0:
        raise ValidationError(f"{what} holds no units (length 0): give at least one")
    arr = np.asarray(x)
    check_finite(arr, what)
    return x


def check_output(f: Any, x_star: Any, x: Any) -> Any:
    """The counterfactual images ``f`` returned for ``x``, refused (naming ``f``) when mis-shaped or not finite.

    Parameters
    ----------
    f : object
        The counterfactual function or model that returned ``x_star`` (named in the messages).
    x_star : array-like
        What it returned.
    x : array-like
        The images it was given: ``x_star`` must have their shape.

    Returns
    -------
    array-like
        ``x_star`` itself.

    Raises
    ------
    ValidationError
        Another number of rows than ``x`` (one image per image given), another shape, NaN or inf.
    """
    rows, given = np.shape(x_star)[:1], np.shape(x)[:1]
    if given and rows != given:
        got = f"{rows[0]} rows" if rows else f"a scalar ({describe(x_star)})"
        raise ValidationError(
            f"the counterfactual function {function_name(f)} returned {got} for {given[0]} images: expected "
            f"{given[0]} rows, one per image it was given (shape {np.shape(x)}, got {np.shape(x_star)})"
        )
    if np.shape(x_star) != np.shape(x):
        raise ValidationError(
            f"the counterfactual function {function_name(f)} returned shape {np.shape(x_star)}, "
            f"expected {np.shape(x)} (the shape of the images it was given)"
        )
    arr = np.asarray(x_star)
    bad = int(arr.size - np.isfinite(arr).sum()) if arr.dtype.kind in "fc" else 0
    if bad:
        raise ValidationError(f"the counterfactual function {function_name(f)} returned {bad} NaN or infinite value(s)")
    return x_star


class ParentEncoder:
    """Encode a parent dict into the float matrix the image models take.

    Parameters
    ----------
    spec : dict
        Parent name -> ``("categorical", n_classes)``, ``"circular"`` (a value in [0, 1) encoded as
        ``(cos 2πv, sin 2πv)``) or ``"continuous"`` (the raw value). Columns follow the dict order.

    Examples
    --------
    >>> enc = ParentEncoder({"digit": ("categorical", 10), "hue": "circular"})
    >>> enc.encode({"digit": np.array([3]), "hue": np.array([0.25])}).round(3).tolist()
    [[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]
    """

    def __init__(self, spec: Mapping[str, Any]) -> None:
        if not isinstance(spec, Mapping):
            raise ValidationTypeError(
                f"spec must be a non-empty dict parent name -> kind, got {describe(spec)} ({type(spec).__name__})"
            )
        if not spec:
            raise ValidationError("spec must name at least one parent, got an empty dict")
        self.spec: dict[str, tuple] = {}
        for k, v in spec.items():
            if not isinstance(k, str):
                raise ValidationTypeError(f"spec keys must be parent names (str), got {describe(k)}")
            if not isinstance(v, (str, tuple, list)) or len(v) == 0:
                raise ValidationTypeError(
                    f"spec[{k!r}] must be ('categorical', n), 'circular' or 'continuous', got {describe(v)}"
                )
            kind = (v,) if isinstance(v, str) else tuple(v)
            if kind[0] == "categorical":
                if len(kind) != 2:
                    raise ValidationError(f"spec[{k!r}] must be ('categorical', n_classes >= 2), got {v!r}")
                kind = ("categorical", check_count(kind[1], f"the number of classes of spec[{k!r}]", minimum=2))
            elif kind[0] not in ("circular", "continuous") or len(kind) != 1:
                raise ValidationError(f"spec[{k!r}] must be ('categorical', n), 'circular' or 'continuous', got {v!r}")
            self.spec[k] = kind
        self.names = tuple(self.spec)
        start, self.groups = 0, {}
        for k, kind in self.spec.items():
            w = kind[1] if kind[0] == "categorical" else 2 if kind[0] == "circular" else 1
            self.groups[k] = list(range(start, start + w))
            start += w
        self.dim = start

    def encode(self, pa: Parents, n: int | None = None, name: str = "pa") -> np.ndarray:
        """Encode ``pa`` into an ``(n, dim)`` float32 matrix (errors name unknown or missing parents).

        Parameters
        ----------
        pa : dict
            Parent -> ``(n,)`` values.
        n : int, optional
            Expected number of rows.
        name : str
            Argument name used in error messages.

        Returns
        -------
        numpy.ndarray, shape (n, dim)
        """
        d = check_parent_dict(pa, self.names, check_count(n, "n", allow_none=True), name)
        n = len(next(iter(d.values())))
        out = np.zeros((n, self.dim), dtype=np.float32)
        for k, kind in self.spec.items():
            v, cols = d[k], self.groups[k]
            if kind[0] == "categorical":
                iv = v.astype(np.int64)
                if np.any(iv != v) or (n and (iv.min() < 0 or iv.max() >= kind[1])):
                    raise ValidationError(f"{name}[{k!r}] must hold integer classes in 0..{kind[1] - 1}")
                out[np.arange(n), cols[0] + iv] = 1.0
            elif kind[0] == "circular":
                a = 2 * np.pi * v.astype(np.float64)
                out[:, cols[0]] = np.cos(a)
                out[:, cols[1]] = np.sin(a)
            else:
                out[:, cols[0]] = v
        return out

    def parent_groups(self) -> list[list[int]]:
        """Columns per parent, in order (for :meth:`cflib.models.gan.ConditionalGAN.fit`)."""
        return [self.groups[k] for k in self.names]


class FunctionModel:
    """The :class:`~cflib.scm.protocol.CounterfactualModel` view of a counterfactual function ``f(x, pa, pa_star)``.

    Abduction is implicit in ``f`` (Monteiro et al., Sec. 3.1), so :meth:`abduct` returns the
    observation itself and :meth:`predict` applies ``f``. The parents are root variables: ``do``
    sets them and leaves the others unchanged.

    Parameters
    ----------
    f : callable
        ``f(x, pa, pa_star) -> x_star`` with a ``parent_names`` attribute (a tuple of str).
    image : str
        Name of the image variable in ``obs``.

    Examples
    --------
    >>> import numpy as np
    >>> def f(x, pa, pa_star):
    ...     return x + (pa_star["b"] - pa["b"])[:, None]
    >>> f.parent_names = ("b",)
    >>> m = FunctionModel(f)
    >>> m.counterfactual({"x": np.zeros((2, 3)), "b": np.array([0.0, 1.0])}, do={"b": 1.0})["x"].tolist()
    [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    """

    def __init__(self, f: Callable[[np.ndarray, Parents, Parents], np.ndarray], image: str = "x") -> None:
        names = getattr(f, "parent_names", None)
        if not callable(f) or names is None:
            raise ValidationTypeError(
                f"f must be a counterfactual function: callable f(x, pa, pa_star) with a parent_names attribute, got {describe(f)}"
            )
        if isinstance(names, str) or not isinstance(names, (tuple, list)) or not all(isinstance(k, str) for k in names):
            raise ValidationTypeError(
                f"{function_name(f)}.parent_names must be a tuple of parent names (str), got {describe(names)}"
            )
        if not isinstance(image, str):
            raise ValidationTypeError(
                f"image must be a variable name (str), got {describe(image)} ({type(image).__name__})"
            )
        if image in names:
            raise ValidationError(
                f"image must be a variable name that is not a parent, got {image!r} (parents: {list(names)})"
            )
        self.f = f
        self.image = image
        self.parent_names = tuple(names)

    def _split(self, obs: Mapping[str, Any], name: str) -> tuple[Any, dict[str, np.ndarray]]:
        if not isinstance(obs, Mapping):
            raise ValidationTypeError(
                f"{name} must be a dict variable name -> values, got {describe(obs)} ({type(obs).__name__})"
            )
        if self.image not in obs:
            raise ValidationError(f"{name} lacks the image variable {self.image!r}")
        x = _batch(obs[self.image], f"{name}[{self.image!r}]")
        pa = check_parent_dict({k: v for k, v in obs.items() if k != self.image}, self.parent_names, len(x), name)
        return x, pa

    def _act(self, pa: dict[str, np.ndarray], do: Mapping[str, Any] | None, n: int) -> dict[str, np.ndarray]:
        if do is not None and not isinstance(do, Mapping):
            raise ValidationTypeError(
                f"do must be a dict parent name -> value(s), got {describe(do)} ({type(do).__name__})"
            )
        out = dict(pa)
        for k, v in (do or {}).items():
            if k not in self.parent_names:
                raise ValidationError(f"cannot intervene on {k!r}: the model's parents are {list(self.parent_names)}")
            v = np.asarray(v)
            v = np.broadcast_to(v, (n,)).copy() if v.ndim == 0 else v.reshape(-1)
            if len(v) != n:
                raise ValidationError(f"do[{k!r}] has {len(v)} values for {n} units: give one value or one per unit")
            check_finite(v, f"do[{k!r}]")
            out[k] = v
        return out

    def abduct(self, obs: Mapping[str, Any]) -> Values:
        """Abduction is implicit in ``f``: the checked observation itself.

        Parameters
        ----------
        obs : dict
            The image and every parent, one row per unit.

        Returns
        -------
        dict
        """
        x, pa = self._split(obs, "obs")
        return {**pa, self.image: x}

    def predict(self, noise: Mapping[str, Any], do: Mapping[str, Any] | None = None) -> Values:
        """Apply ``f`` to the abducted units with the parents set by ``do``.

        Parameters
        ----------
        noise : dict
            Output of :meth:`abduct`.
        do : dict, optional
            Parent -> one value or one per unit.

        Returns
        -------
        dict
            Counterfactual parents and image.
        """
        return self.counterfactual(noise, do or {})

    def counterfactual(self, obs: Mapping[str, Any], do: Mapping[str, Any]) -> Values:
        """``{**pa_star, image: f(x, pa, pa_star)}`` with ``pa_star = {**pa, **do}``.

        Parameters
        ----------
        obs : dict
            The image and every parent, one row per unit.
        do : dict
            Parent -> one value or one per unit.

        Returns
        -------
        dict
        """
        x, pa = self._split(obs, "obs")
        ps = self._act(pa, do, len(x))
        return {**ps, self.image: check_output(self, self.f(x, pa, ps), x)}


class ImageModelAdapter(FunctionModel):
    """A cflib image model (VAE, HVAE, GAN) as a counterfactual function *and* a CounterfactualModel.

    The function form ``f(x, pa, pa_star)`` encodes the parent dicts and calls
    ``model.counterfactual(x, pa_enc, pa_star_enc, eps=eps, **kwargs)``; the protocol form uses the
    model's ``abduct`` (latents) and ``decode`` for :meth:`abduct` / :meth:`predict`, and the same
    call as the function form for :meth:`counterfactual` (so both give identical images).

    Parameters
    ----------
    model : object
        Has ``counterfactual(x, pa, pa_star, eps=..., **kwargs)``, ``abduct`` and ``decode`` (the cflib
        VAE/HVAE/GAN API).
    encoder : ParentEncoder
        Encodes the parent dicts.
    eps : array, optional
        Noise per image, fixing one function per observation (see ``model.sample_noise``).
        With ``eps`` given, the function only accepts batches of the same size.
    image : str
        Name of the image variable for the protocol form.
    **kwargs
        Passed to ``model.counterfactual`` (e.g. ``abduct_levels``, ``temperature``) and, where it
        accepts them, to ``model.decode``.
    """

    def __init__(
        self, model: Any, encoder: ParentEncoder, eps: Any | None = None, *, image: str = "x", **kwargs: Any
    ) -> None:
        if not hasattr(model, "counterfactual"):
            raise ValidationTypeError("model must have a counterfactual(x, pa, pa_star, eps=...) method")
        if not isinstance(encoder, ParentEncoder):
            raise ValidationTypeError(f"encoder must be a ParentEncoder, got {type(encoder).__name__}")
        self.model = model
        self.encoder = encoder
        self.eps = eps
        self.kwargs = kwargs
        self.parent_names = encoder.names
        super().__init__(self, image)

    @classmethod
    def sample(
        cls, model: Any, encoder: ParentEncoder, n: int, seed: int | np.random.Generator | None = 0, **kwargs: Any
    ) -> ImageModelAdapter:
        """Draw one function per image: fixed noise ``model.sample_noise(n, seed)`` (none for deterministic models).

        Parameters
        ----------
        model : object
            The image model.
        encoder : ParentEncoder
            Encodes the parent dicts.
        n : int
            Number of images the function is for.
        seed : int, Generator or None
            Randomness of the noise.
        **kwargs
            As in the constructor.

        Returns
        -------
        ImageModelAdapter
        """
        n = check_count(n, "n")
        eps = model.sample_noise(n, seed) if hasattr(model, "sample_noise") else None
        return cls(model, encoder, eps, **kwargs)

    def _check_batch(self, n: int) -> None:
        if self.eps is not None and len(self.eps) != n:
            raise ValidationError(
                f"this function fixes noise for {len(self.eps)} images but got {n}; sample a function for this batch"
            )

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray:
        """The counterfactual function ``f(x, pa, pa_star)`` on images ``(n, C, H, W)`` in [0, 1].

        Parameters
        ----------
        x : numpy.ndarray
            Observed images.
        pa, pa_star : dict
            Observed and counterfactual parents.

        Returns
        -------
        numpy.ndarray
            Counterfactual images.
        """
        x = np.asarray(x, dtype=np.float32)
        self._check_batch(len(x))
        a = self.encoder.encode(pa, len(x), "pa")
        b = self.encoder.encode(pa_star, len(x), "pa_star")
        return np.asarray(self.model.counterfactual(x, a, b, eps=self.eps, **self.kwargs))

    def abduct(self, obs: Mapping[str, Any]) -> Values:
        """Abduction with the model's encoder: ``{**pa, image: latents}``.

        Parameters
        ----------
        obs : dict
            The image and every parent.

        Returns
        -------
        dict
        """
        x, pa = self._split(obs, "obs")
        x = np.asarray(x, dtype=np.float32)
        self._check_batch(len(x))
        return {**pa, self.image: np.asarray(self.model.abduct(x, self.encoder.encode(pa, len(x)), eps=self.eps))}

    def predict(self, noise: Mapping[str, Any], do: Mapping[str, Any] | None = None) -> Values:
        """Prediction with the model's decoder under the parents set by ``do``.

        Parameters
        ----------
        noise : dict
            Output of :meth:`abduct`.
        do : dict, optional
            Parent -> one value or one per unit.

        Returns
        -------
        dict
        """
        z, pa = self._split(noise, "noise")
        ps = self._act(pa, do, len(z))
        accepted = inspect.signature(self.model.decode).parameters
        kw = {k: v for k, v in {**self.kwargs, "eps": self.eps}.items() if k in accepted}
        return {**ps, self.image: np.asarray(self.model.decode(z, self.encoder.encode(ps, len(z), "do"), **kw))}


class LatentDiffusionAdapter(FunctionModel):
    """:class:`cflib.models.diffusion.LatentDiffusion` as a CounterfactualModel over ``{"A", ["aux"], image}``.

    Abduction is DDIM inversion (:meth:`LatentDiffusion.invert`), prediction is DDIM denoising under
    the new label (:meth:`LatentDiffusion.denoise`), and :meth:`counterfactual` is
    :meth:`LatentDiffusion.counterfactual`. Only ``A`` may be intervened on; the auxiliary parents
    ``aux`` (``(n, k)``, for models with ``config.aux_classes``) are held fixed.

    Parameters
    ----------
    model : LatentDiffusion
        A fitted model.
    image : str
        Name of the image variable (``(n, size, size)`` grey images in [0, 1]).
    **kwargs
        Passed to ``model.counterfactual`` (``t_star``, ``steps``, ``guidance``, ``aux_guidance``, ...);
        those ``invert`` / ``denoise`` accept are passed to them too.
    """

    def __init__(self, model: Any, *, image: str = "x", **kwargs: Any) -> None:
        for name in ("counterfactual", "invert", "denoise"):
            if not callable(getattr(model, name, None)):
                raise ValidationTypeError(f"model must be a LatentDiffusion (it has no {name}() method)")
        self.model = model
        self.kwargs = kwargs
        self.has_aux = bool(getattr(getattr(model, "config", None), "aux_classes", ()))
        self.parent_names = ("A", "aux") if self.has_aux else ("A",)
        super().__init__(self, image)

    def _split(self, obs: Mapping[str, Any], name: str) -> tuple[Any, dict[str, np.ndarray]]:
        if not isinstance(obs, Mapping):
            raise ValidationTypeError(
                f"{name} must be a dict variable name -> values, got {describe(obs)} ({type(obs).__name__})"
            )
        missing = [k for k in (self.image, *self.parent_names) if k not in obs]
        if missing:
            raise ValidationError(
                f"{name} lacks variable(s) {missing}; the model's variables are {[self.image, *self.parent_names]}"
            )
        unknown = set(obs) - {self.image, *self.parent_names}
        if unknown:
            raise ValidationError(f"{name} has unknown variable(s) {sorted(map(str, unknown))}")
        _batch(obs[self.image], f"{name}[{self.image!r}]")
        pa = {"A": np.asarray(obs["A"]).reshape(-1)}
        if self.has_aux:
            pa["aux"] = np.asarray(obs["aux"])
        return obs[self.image], pa

    def _act(self, pa: dict[str, np.ndarray], do: Mapping[str, Any] | None, n: int) -> dict[str, np.ndarray]:
        if do and isinstance(do, Mapping) and set(do) - {"A"}:
            raise ValidationError(
                f"cannot intervene on {sorted(set(do) - {'A'})}: only 'A' is intervened on (aux is held fixed)"
            )
        return super()._act(pa, do, n)

    def _kw(self, method: Callable[..., Any]) -> dict[str, Any]:
        accepted = inspect.signature(method).parameters
        return {k: v for k, v in self.kwargs.items() if k in accepted}

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray:
        """``model.counterfactual(x, pa["A"], pa_star["A"], aux=pa.get("aux"), **kwargs)``.

        Parameters
        ----------
        x : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].
        pa, pa_star : dict
            Observed and counterfactual parents.

        Returns
        -------
        numpy.ndarray
        """
        return np.asarray(self.model.counterfactual(x, pa["A"], pa_star["A"], aux=pa.get("aux"), **self.kwargs))

    def abduct(self, obs: Mapping[str, Any]) -> Values:
        """DDIM inversion: ``{**pa, image: z_{t*}}``.

        Parameters
        ----------
        obs : dict
            The images, ``A`` and (if the model has them) ``aux``.

        Returns
        -------
        dict
        """
        x, pa = self._split(obs, "obs")
        return {**pa, self.image: self.model.invert(x, pa["A"], aux=pa.get("aux"), **self._kw(self.model.invert))}

    def predict(self, noise: Mapping[str, Any], do: Mapping[str, Any] | None = None) -> Values:
        """DDIM denoising under the labels set by ``do``.

        Parameters
        ----------
        noise : dict
            Output of :meth:`abduct`.
        do : dict, optional
            ``{"A": label or labels}``.

        Returns
        -------
        dict
        """
        z, pa = self._split(noise, "noise")
        ps = self._act(pa, do, len(z))
        return {**ps, self.image: self.model.denoise(z, ps["A"], aux=pa.get("aux"), **self._kw(self.model.denoise))}
