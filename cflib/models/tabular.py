"""Small torch classifiers for tabular data: MLP, 1-D CNN, LSTM and Transformer.

The models of the experiments of Fu et al. (2025), *Testing for Causal Fairness*, Sec. 5.1 (Figs. 1-3):
the paper audits a CNN, an LSTM and a Transformer trained on tabular data but gives no architecture
or training detail, so these are deliberately small, CPU-friendly versions of each family:

* ``mlp``: two hidden layers;
* ``cnn``: the feature vector read as a 1-channel sequence, two 1-D convolutions and global pooling;
* ``lstm`` and ``transformer``: every feature becomes a token (its value times a learned vector plus a
  learned feature embedding, as in FT-Transformer), followed by one LSTM layer or one self-attention
  encoder layer and pooling.

Each is an ``nn.Module`` with a scikit-learn style ``fit`` / ``predict_proba`` / ``predict`` on numeric
arrays (use :func:`make_tabular_pipeline` for data frames with categorical columns), ``save`` / ``load``,
explicit ``seed`` and ``device``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ..runtime import get_device
from ._train import optimizer_step, shuffled_batches, train

__all__ = ["TabularClassifier", "ARCHITECTURES", "make_tabular_pipeline"]

ARCHITECTURES = ("mlp", "cnn", "lstm", "transformer")


class _Tokens(nn.Module):
    """Feature tokenizer: token_j = x_j * w_j + b_j (one learned vector per feature)."""

    def __init__(self, n_features: int, width: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_features, width) * 0.1)
        self.bias = nn.Parameter(torch.zeros(n_features, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :, None] * self.weight + self.bias


class _CNN(nn.Module):
    def __init__(self, n_features: int, width: int, n_classes: int) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(1, width, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv1d(width, width, kernel_size=3, padding=1),
            nn.ReLU(),
        )
        self.head = nn.Linear(2 * width, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x[:, None, :])
        # mean and max pooling: the position of a feature matters less than whether it fires
        return self.head(torch.cat([h.mean(-1), h.amax(-1)], dim=1))


class _LSTM(nn.Module):
    def __init__(self, n_features: int, width: int, n_classes: int) -> None:
        super().__init__()
        self.tokens = _Tokens(n_features, width)
        self.lstm = nn.LSTM(width, width, batch_first=True)
        self.head = nn.Linear(width, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.tokens(x))
        return self.head(out[:, -1])


class _Transformer(nn.Module):
    def __init__(self, n_features: int, width: int, n_classes: int) -> None:
        super().__init__()
        self.tokens = _Tokens(n_features, width)
        self.encoder = nn.TransformerEncoderLayer(
            width, nhead=2, dim_feedforward=2 * width, dropout=0.0, batch_first=True
        )
        self.head = nn.Linear(width, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.tokens(x)).mean(1))


def _build(arch: str, n_features: int, width: int, n_classes: int) -> nn.Module:
    if arch == "mlp":
        return nn.Sequential(
            nn.Linear(n_features, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, n_classes)
        )
    if arch == "cnn":
        return _CNN(n_features, width, n_classes)
    if arch == "lstm":
        return _LSTM(n_features, width, n_classes)
    return _Transformer(n_features, width, n_classes)


class TabularClassifier(nn.Module):
    """A small torch classifier for numeric tabular features with a scikit-learn style interface.

    Parameters
    ----------
    arch : {"mlp", "cnn", "lstm", "transformer"}
        Architecture family.
    width : int
        Hidden width (token width for LSTM/Transformer, channels for the CNN).
    epochs : int
        Passes over the training data.
    lr : float
        Adam learning rate.
    batch_size : int
        Mini-batch size.
    weight_decay : float
        Adam weight decay.

    Attributes
    ----------
    history_ : list of dict
        Mean training loss per epoch (from :func:`cflib.models._train.train`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = TabularClassifier("mlp", epochs=20).fit(X, y, seed=0)
    >>> clf.score(X, y) > 0.9
    True
    """

    def __init__(
        self,
        arch: str = "mlp",
        width: int = 32,
        epochs: int = 20,
        lr: float = 3e-3,
        batch_size: int = 128,
        weight_decay: float = 1e-4,
    ) -> None:
        super().__init__()
        if arch not in ARCHITECTURES:
            raise ValueError(f"arch must be one of {ARCHITECTURES}, got {arch!r}")
        for name, v in (("width", width), ("epochs", epochs), ("batch_size", batch_size)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not lr > 0 or not weight_decay >= 0:
            raise ValueError(f"lr must be > 0 and weight_decay >= 0, got lr={lr!r}, weight_decay={weight_decay!r}")
        self.arch, self.width, self.epochs, self.lr = arch, int(width), int(epochs), float(lr)
        self.batch_size, self.weight_decay = int(batch_size), float(weight_decay)
        self.net: nn.Module | None = None
        self.classes_: np.ndarray | None = None
        self.n_features_in_: int | None = None

    # scikit-learn compatibility: Pipelines and clone() read the constructor parameters
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters (scikit-learn protocol)."""
        return {
            "arch": self.arch,
            "width": self.width,
            "epochs": self.epochs,
            "lr": self.lr,
            "batch_size": self.batch_size,
            "weight_decay": self.weight_decay,
        }

    def set_params(self, **params: Any) -> TabularClassifier:
        """Set constructor parameters (scikit-learn protocol)."""
        for k, v in params.items():
            if k not in self.get_params():
                raise ValueError(f"unknown parameter {k!r}; expected one of {sorted(self.get_params())}")
            setattr(self, k, v)
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Class logits for a float tensor of shape ``(n, n_features)``."""
        if self.net is None:
            raise RuntimeError("the model is not fitted; call fit(X, y) first")
        return self.net(x)

    @staticmethod
    def _as_array(X: Any) -> np.ndarray:
        if hasattr(X, "toarray"):  # scipy sparse from a OneHotEncoder
            X = X.toarray()
        arr = np.asarray(X, dtype=np.float32)
        if arr.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_samples, n_features), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("X contains NaN or infinite values; impute or drop them first")
        return arr

    def fit(
        self, X: Any, y: Any, *, device: str = "auto", seed: int = 0, progress: bool | None = False
    ) -> TabularClassifier:
        """Train with Adam on the cross-entropy.

        Parameters
        ----------
        X : array-like, shape (n, p)
            Numeric features (already encoded and scaled).
        y : array-like, shape (n,)
            Class labels (any hashable values; at least two distinct).
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Seeds the initialisation and the mini-batch order.
        progress : bool or None
            Show a progress bar over epochs (``None``: only when run interactively; see
            :func:`cflib.runtime.progress`).

        Returns
        -------
        TabularClassifier
            ``self``.
        """
        X = self._as_array(X)
        y = np.asarray(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {y.shape[0]}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError("y must contain at least two classes")
        self.n_features_in_ = X.shape[1]
        dev = get_device(device)
        gen = torch.Generator().manual_seed(int(seed))
        torch.manual_seed(int(seed))
        self.net = _build(self.arch, X.shape[1], self.width, self.classes_.size)
        self.to(dev)
        xt = torch.as_tensor(X, device=dev)
        yt = torch.as_tensor(codes, dtype=torch.long, device=dev)
        opt = torch.optim.Adam(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        loss_fn = nn.CrossEntropyLoss()

        def step(idx: torch.Tensor) -> dict[str, float]:
            idx = idx.to(dev)
            return {"loss": optimizer_step(opt, loss_fn(self(xt[idx]), yt[idx]))}

        self.train()
        per_epoch = math.ceil(X.shape[0] / self.batch_size)
        self.history_ = train(
            step,
            shuffled_batches(X.shape[0], self.batch_size, gen),
            self.epochs * per_epoch,
            per_epoch=per_epoch,
            progress=progress,
            desc=f"fit {self.arch}",
        )
        self.eval()
        return self

    @torch.no_grad()
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape ``(n, n_classes)``, columns in the order of ``classes_``."""
        X = self._as_array(X)
        if self.n_features_in_ is not None and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the model was fitted on {self.n_features_in_}")
        dev = next(self.parameters()).device if self.net is not None else "cpu"
        out = [
            torch.softmax(self(torch.as_tensor(X[s : s + 4096], device=dev)), dim=1).cpu().numpy()
            for s in range(0, X.shape[0], 4096)
        ]
        return np.concatenate(out).astype(np.float64)

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class for each row."""
        proba = self.predict_proba(X)
        if self.classes_ is None:  # predict_proba refuses an unfitted model, unless X has no rows
            raise RuntimeError("the model is not fitted; call fit(X, y) first")
        return self.classes_[proba.argmax(1)]

    def score(self, X: Any, y: Any) -> float:
        """Accuracy on ``(X, y)``."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    def save(self, path: str | Path) -> None:
        """Save parameters, architecture and classes to ``path`` (written atomically)."""
        if self.net is None:
            raise RuntimeError("the model is not fitted; nothing to save")
        path = Path(path)
        tmp = path.with_suffix(path.suffix + ".tmp")
        torch.save(
            {
                "params": self.get_params(),
                "state": self.state_dict(),
                "classes": self.classes_,
                "n_features": self.n_features_in_,
            },
            tmp,
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> TabularClassifier:
        """Load a model written by :meth:`save`."""
        blob = torch.load(Path(path), map_location=get_device(device), weights_only=False)
        model = cls(**blob["params"])
        model.classes_ = blob["classes"]
        model.n_features_in_ = blob["n_features"]
        model.net = _build(model.arch, model.n_features_in_, model.width, len(model.classes_))
        model.load_state_dict(blob["state"])
        model.to(get_device(device)).eval()
        return model


def make_tabular_pipeline(
    arch: str, categorical: list[str], numeric: list[str], *, seed: int = 0, device: str = "auto", **model_kwargs: Any
):
    """One-hot encode categoricals, standardise numerics, then a :class:`TabularClassifier`.

    Parameters
    ----------
    arch : {"mlp", "cnn", "lstm", "transformer"}
    categorical, numeric : list of str
        Column names of the data frame the pipeline will be fitted on.
    seed : int
        Training seed of the classifier.
    device : str
        Training device.
    **model_kwargs
        Passed to :class:`TabularClassifier`.

    Returns
    -------
    sklearn.pipeline.Pipeline
        ``fit(df, y)`` / ``predict_proba(df)``; the seed and device are bound to the final step.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    if not categorical and not numeric:
        raise ValueError("give at least one categorical or numeric column")
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), list(categorical)),
            ("num", StandardScaler(), list(numeric)),
        ],
        remainder="drop",
    )
    clf = _SeededClassifier(TabularClassifier(arch, **model_kwargs), seed=seed, device=device)
    return Pipeline([("encode", pre), ("model", clf)])


from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402  (only needed for the Pipeline adapter)


class _SeededClassifier(ClassifierMixin, BaseEstimator):
    """Binds ``seed`` and ``device`` to a TabularClassifier's ``fit`` so it can be a Pipeline step."""

    def __init__(self, model: TabularClassifier, seed: int = 0, device: str = "auto") -> None:
        self.model, self.seed, self.device = model, seed, device

    def fit(self, X: Any, y: Any) -> _SeededClassifier:
        """Fit the wrapped model with the bound seed and device."""
        self.model.fit(X, y, seed=self.seed, device=self.device)
        self.classes_ = self.model.classes_
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of the wrapped model."""
        return self.model.predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted classes of the wrapped model."""
        return self.model.predict(X)

    def score(self, X: Any, y: Any) -> float:
        """Accuracy of the wrapped model."""
        return self.model.score(X, y)
