"""Every numbered figure and table of the five papers, and where the book has its counterpart.

One registry, :data:`PAPER_ITEMS`: for each figure and table of the papers the book reproduces (88 in all:
65 show results, 23 are diagrams, architectures or set-up tables), what it shows, its kind, whether the
book reproduces it (``reproduced``), in part (``partial``, with what differs) or not at all (``not here``,
with why), and the notebook that has the counterpart. The notebook labels its counterpart with the item's
:attr:`PaperItem.caption` and a MyST target right above the figure or table, named by :attr:`PaperItem.target`
(``paper-<chapter>-fig-<n>`` or ``paper-<chapter>-table-<n>``); a change here is copied to the notebook's label
(the test compares them); the book's page "Figures and tables of the papers" is generated from this
registry by :func:`index_markdown` at every build and links each row to its target, so a target that goes
missing fails the build (Sphinx's ``-W``), and ``tests/test_paper_index.py`` checks the registry against
the papers' notes and the notebooks' targets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "PaperItem",
    "PAPER_ITEMS",
    "PAPER_NAMES",
    "PAPER_SHORT",
    "STATUSES",
    "CATEGORIES",
    "paper_item",
    "paper_items",
    "index_markdown",
]

#: Chapter slug -> the paper it reproduces, as the index names it.
PAPER_NAMES = {
    "axiomatic-soundness": "Monteiro et al. 2023, axiomatic soundness",
    "counterfactual-benchmark": "Melistas et al. 2024, benchmarking counterfactual images",
    "invariance-test": "Ma et al. 2024, counterfactual invariance (CIT-LR)",
    "closeness-test": "Fu et al. 2025, CF-CLOT",
    "parity-decomposition": "Plecko & Bareinboim 2023, predictive and statistical parity",
}

#: Chapter slug -> the paper's short citation, for the labels above the book's counterparts.
PAPER_SHORT = {
    "axiomatic-soundness": "Monteiro et al. 2023",
    "counterfactual-benchmark": "Melistas et al. 2024",
    "invariance-test": "Ma et al. 2024",
    "closeness-test": "Fu et al. 2025",
    "parity-decomposition": "Plecko & Bareinboim 2023",
}

#: Whether the book has an item: in full, in part, or not at all.
STATUSES = ("reproduced", "partial", "not here")
#: What an item is: a result, or a diagram, an architecture or a set-up table (no result to reproduce).
CATEGORIES = ("result", "diagram", "architecture", "set-up")
_KINDS = ("fig", "table")


@dataclass(frozen=True)
class PaperItem:
    """One numbered figure or table of a paper, and the book's counterpart.

    Attributes
    ----------
    paper : str
        The chapter slug of the paper (a key of :data:`PAPER_NAMES`).
    kind : {"fig", "table"}
    number : int
        The paper's number of the figure or table.
    shows : str
        What it shows, in a line.
    category : str
        One of :data:`CATEGORIES`.
    status : str
        One of :data:`STATUSES`.
    notebook : str or None
        The notebook (relative to ``notebooks/``) whose markdown carries :attr:`target` right above the
        counterpart; ``None`` when it is not here.
    note : str
        What differs (partial), why it is not here (not here), or what the counterpart is made of (reproduced).
    """

    paper: str
    kind: str
    number: int
    shows: str
    category: str
    status: str
    notebook: str | None
    note: str = ""

    @property
    def target(self) -> str:
        """The MyST target above the counterpart: ``paper-<chapter>-fig-<n>`` or ``paper-<chapter>-table-<n>``."""
        return f"paper-{self.paper}-{self.kind}-{self.number}"

    @property
    def label(self) -> str:
        """``"Fig. 4"`` or ``"Table 3"``."""
        return f"{'Fig.' if self.kind == 'fig' else 'Table'} {self.number}"

    @property
    def caption(self) -> str:
        """The line that labels the book's counterpart in its notebook, right above the target: the paper's item,
        what it shows, and how the book's differs (``""`` for an item not here)."""
        if self.notebook is None:
            return ""
        how = "regenerated" if self.status == "reproduced" else "regenerated in part"
        return f"*{PAPER_SHORT[self.paper]}, {self.label}: {self.shows}; {how} ({self.note}).*"


_INV = "invariance-test"
_BEN = "counterfactual-benchmark"
_CLO = "closeness-test"
_SND = "axiomatic-soundness"
_PAR = "parity-decomposition"
_TOY = "toy chest X-rays with a known counterfactual stand in for {} (credentialed data)"
_ARCH = (
    "an architecture of the paper's network; the book trains a scaled-down analogue (`cflib.models`) on small images"
)


_INV_NOTEBOOKS = (
    "invariance-test/02-figure-2-alignment.ipynb",
    "invariance-test/04-toy-chest-xrays.ipynb",
    "invariance-test/05-latent-diffusion-counterfactuals.ipynb",
    "invariance-test/06-auditing-classifiers.ipynb",
)


def _inv() -> list[PaperItem]:
    return _inv_figures() + _inv_tables()


def _inv_figures() -> list[PaperItem]:
    nb2, nb4, nb5, nb6 = _INV_NOTEBOOKS
    grid = (
        "the paper's grid on toy chest X-rays: two of the book's small classifiers per panel, the first"
        " architecture's with the smallest and the largest shortcut strength, instead of one DenseNet-121;"
        " CLDM+D counterfactuals"
    )
    f = [
        (
            1,
            "(a) the conditional latent diffusion model's pipeline; (b) chest X-rays generated under each race, with difference maps",
            "result",
            "partial",
            nb5,
            "panel (b) only, on toy chest X-rays with a small latent diffusion model; the diagram (a) is not drawn",
        ),
        (
            2,
            "log p of CIT-LR, DP and EO against the counterfactual accuracy (ECA) of a pool of classifiers, six synthetic data sets",
            "result",
            "reproduced",
            nb2,
            "the paper's six synthetic data sets; fewer classifiers per data set at book scale",
        ),
        (
            3,
            "the same for CheXpert: one column per disease",
            "result",
            "partial",
            nb6,
            _TOY.format("CheXpert") + "; one figure for Figs. 3 and 4",
        ),
        (4, "the same for MIMIC-CXR", "result", "partial", nb6, _TOY.format("MIMIC-CXR") + "; shown with Fig. 3"),
        (
            5,
            "causal graph of the generating process: A -> X <- Z, X -> Y",
            "diagram",
            "not here",
            None,
            "a diagram; the toy chest X-rays' generating process is described in notebook 04",
        ),
        (
            6,
            "P(disease | race) per disease on CheXpert, with chi-square p-values",
            "result",
            "partial",
            nb4,
            _TOY.format("CheXpert"),
        ),
        (7, "the same for MIMIC-CXR", "result", "partial", nb4, _TOY.format("MIMIC-CXR") + "; shown with Fig. 6"),
        (
            8,
            "predicted probability on the original against the counterfactual image, per observed and target race, with a flip baseline (pleural effusion)",
            "result",
            "partial",
            nb6,
            grid,
        ),
        (
            9,
            "the same for a second finding (captioned pleural effusion, presumably edema)",
            "result",
            "not here",
            None,
            "the toy chest X-rays have no edema-like finding",
        ),
        (10, "the same for cardiomegaly", "result", "partial", nb6, grid),
        (11, "the same for consolidation", "result", "partial", nb6, grid),
        (
            12,
            "the same for atelectasis",
            "result",
            "not here",
            None,
            "the toy chest X-rays have no atelectasis-like finding",
        ),
        (
            13,
            "counterfactual samples of the latent diffusion model on CheXpert, with difference rows",
            "result",
            "partial",
            nb5,
            "toy chest X-rays and a small latent diffusion model",
        ),
        (
            14,
            "the same on MIMIC-CXR",
            "result",
            "partial",
            nb5,
            "toy chest X-rays and a small latent diffusion model; shown with Fig. 13",
        ),
    ]
    return [PaperItem(_INV, "fig", *r) for r in f]


def _inv_tables() -> list[PaperItem]:
    nb2, nb4, nb5, nb6 = _INV_NOTEBOOKS
    quality = "Tables 7-11 in one table, on toy chest X-rays, against conditional beta-VAEs"
    t = [
        (
            1,
            "the synthetic classifier pool and its hyperparameters",
            "set-up",
            "reproduced",
            nb2,
            "the same pool definition",
        ),
        (
            2,
            "ROC-AUC per model, race and disease on CheXpert",
            "result",
            "partial",
            nb6,
            "per-group AUC of the book's classifiers on toy chest X-rays",
        ),
        (3, "the same on MIMIC-CXR", "result", "partial", nb6, "per-group AUC on toy chest X-rays; shown with Table 2"),
        (4, "architecture of the disentangling map m_delta", "architecture", "not here", None, _ARCH),
        (5, "architecture of the MINE critic T_theta", "architecture", "not here", None, _ARCH),
        (6, "ROC-AUC of the race predictor", "result", "partial", nb4, "an attribute classifier on toy chest X-rays"),
        (7, "composition (L1) of the generators on CheXpert", "result", "partial", nb5, quality),
        (8, "effectiveness (accuracy) on CheXpert", "result", "partial", nb5, quality),
        (9, "composition (L1) on MIMIC-CXR", "result", "partial", nb5, quality),
        (10, "effectiveness (accuracy) on MIMIC-CXR", "result", "partial", nb5, quality),
        (
            11,
            "FID of the generators",
            "result",
            "partial",
            nb5,
            quality + "; a Frechet distance on a small network's features (no Inception weights offline)",
        ),
        (
            12,
            "paired t-test (t, p) per model and disease on CheXpert",
            "result",
            "partial",
            nb6,
            "the book's classifiers on toy chest X-rays",
        ),
        (
            13,
            "the same on MIMIC-CXR",
            "result",
            "partial",
            nb6,
            "the book's classifiers on toy chest X-rays; shown with Table 12",
        ),
    ]
    return [PaperItem(_INV, "table", *r) for r in t]


def _ben() -> list[PaperItem]:
    nb1, nb2, nb3 = (
        "counterfactual-benchmark/01-morphosynth.ipynb",
        "counterfactual-benchmark/02-benchmark-morphosynth.ipynb",
        "counterfactual-benchmark/03-benchmark-smileyfaces.ipynb",
    )
    morpho, smiley = (
        "MorphoSynth (synthetic digits with true counterfactuals) stands in for MorphoMNIST",
        "SmileyFaces (drawn faces with true counterfactuals) stands in for CelebA",
    )
    f = [
        (
            1,
            "causal graphs of MorphoMNIST (a) and CelebA (b)",
            "diagram",
            "reproduced",
            nb1,
            "(a) here; (b), SmileyFaces' graph, in notebook 03",
        ),
        (
            2,
            "composition over 10 cycles on MorphoMNIST: VAE, HVAE, GAN fine-tuned",
            "result",
            "reproduced",
            nb2,
            morpho,
        ),
        (3, "composition over 10 cycles on CelebA", "result", "reproduced", nb3, smiley),
        (
            4,
            "interventions on MorphoMNIST: do(thickness), do(intensity), do(digit)",
            "result",
            "reproduced",
            nb2,
            morpho + ", with the true counterfactual on top",
        ),
        (5, "interventions on CelebA: do(Smiling), do(Eyeglasses)", "result", "reproduced", nb3, smiley),
        (
            6,
            "composition grids of all five models on MorphoMNIST",
            "result",
            "reproduced",
            nb2,
            morpho + "; one grid for Figs. 2 and 6",
        ),
        (
            7,
            "interventions of all five models on MorphoMNIST",
            "result",
            "reproduced",
            nb2,
            morpho + "; one grid for Figs. 4 and 7",
        ),
        (
            8,
            "composition grids of all five models on CelebA",
            "result",
            "reproduced",
            nb3,
            smiley + "; every trained model, the fine-tuned GAN too",
        ),
        (
            9,
            "interventions of all five models on CelebA",
            "result",
            "reproduced",
            nb3,
            smiley + "; one grid for Figs. 5 and 9",
        ),
    ]
    t = [
        (
            1,
            "composition (L1 of image and embedding, 1 and 10 cycles) of five models on MorphoMNIST",
            "result",
            "reproduced",
            nb2,
            morpho,
        ),
        (2, "composition on CelebA", "result", "reproduced", nb3, smiley),
        (
            3,
            "effectiveness on MorphoMNIST (thickness and intensity errors, digit accuracy)",
            "result",
            "reproduced",
            nb2,
            morpho,
        ),
        (4, "effectiveness on CelebA (F1 of Smiling and Eyeglasses)", "result", "reproduced", nb3, smiley),
        (
            5,
            "realism (FID) and minimality (CLD) on both data sets",
            "result",
            "reproduced",
            nb2,
            "left half here, right half (SmileyFaces) in notebook 03; a Frechet distance on an in-domain network",
        ),
    ]
    arch = [
        "the intensity flow",
        "the VAE encoder, MorphoMNIST",
        "the VAE decoder, MorphoMNIST",
        "the VAE encoder, CelebA",
        "the VAE decoder, CelebA",
        "the GAN encoder, MorphoMNIST",
        "the GAN generator, MorphoMNIST",
        "the GAN discriminator, MorphoMNIST",
        "the GAN encoder, CelebA",
        "the GAN generator, CelebA",
        "the GAN discriminator, CelebA",
        "the anti-causal predictor, MorphoMNIST",
        "the attribute classifier, CelebA",
    ]
    archs = [
        PaperItem(_BEN, "table", 6 + i, f"architecture of {a}", "architecture", "not here", None, _ARCH)
        for i, a in enumerate(arch)
    ]
    return [PaperItem(_BEN, "fig", *r) for r in f] + [PaperItem(_BEN, "table", *r) for r in t] + archs


def _clo() -> list[PaperItem]:
    nb3 = "closeness-test/03-real-data-audit.ipynb"
    grid = "substitute tabular data (COMPAS, Adult, German credit) for the paper's UCI data sets, one grid for Figs. 1-3 and 5"
    f = [
        (
            1,
            "accuracy and unfairness of SAA, SSA and SFA-epsilon with a CNN on three tabular data sets",
            "result",
            "partial",
            nb3,
            grid,
        ),
        (2, "the same with an LSTM", "result", "partial", nb3, grid),
        (3, "the same with a Transformer", "result", "partial", nb3, grid),
        (
            4,
            "accuracy and unfairness on RAF-DB facial expression recognition",
            "result",
            "not here",
            None,
            "RAF-DB is licence-restricted and its classifier needs a GPU and pretrained weights; and the"
            " experiment's sensitive attributes are expression labels, on which the paper does not say how it"
            " intervenes, so no image analogue would test the same thing",
        ),
        (
            5,
            "accuracy and unfairness on credit risk data, age thresholds 23, 30, 40 and 50",
            "result",
            "partial",
            nb3,
            "UCI German credit (shipped in the fairness package's wheel) stands in for the Kaggle credit data, in the grid of Figs. 1-3",
        ),
        (
            6,
            "CF-CLOT against epsilon-IFair on the Student and Credit data",
            "result",
            "partial",
            nb3,
            "a synthetic credit SCM with a known graph and the SCM method's oracle (the true graph's non-descendants of"
            " the sensitive attributes) stand in for epsilon-IFair's learned PDAGs on Student and Credit (no offline"
            " implementation); logistic regressions over seeds",
        ),
    ]
    return [PaperItem(_CLO, "fig", *r) for r in f]


def _snd_names() -> tuple[str, str, str, str, str]:
    """The soundness chapter's notebooks and the substitutes its items name."""
    nb2, nb3, nb4 = (
        "axiomatic-soundness/02-colour-digits-and-simulated-interventions.ipynb",
        "axiomatic-soundness/03-soundness-of-colour-digit-models.ipynb",
        "axiomatic-soundness/04-shapes-and-trade-offs.ipynb",
    )
    cd, hier = (
        "Colour-Digits (scikit-learn's 8x8 digits, coloured) stand in for Colour-MNIST",
        "a small hierarchical VAE on Colour-Digits stands in for a 42-layer VDVAE on CelebA-HQ",
    )
    return nb2, nb3, nb4, cd, hier


def _snd() -> list[PaperItem]:
    nb2, nb3, nb4, cd, hier = _snd_names()
    f = [
        (
            1,
            "Colour-MNIST soundness grids (composition, digit effectiveness, hue reversibility) of a disentangled and an entangled model",
            "result",
            "reproduced",
            nb3,
            cd,
        ),
        (
            2,
            "effectiveness and composition grids on 3D Shapes (a-d) and CelebA-HQ (e-h)",
            "result",
            "partial",
            nb4,
            "the shapes-scene panels (a-d) only, on a 16 px shapes scene; CelebA-HQ (e-h) not here",
        ),
        (
            3,
            "diagram: making one parent independent of the rest",
            "diagram",
            "not here",
            None,
            "a diagram; the simulated interventions it explains are computed in notebook 02",
        ),
        (4, "the digit-hue joints of the three SCMs", "result", "reproduced", nb2, cd),
        (5, "samples of the unconfounded and the confounded joint", "result", "reproduced", nb2, cd),
        (
            6,
            "more effectiveness and composition grids on 3D Shapes",
            "result",
            "partial",
            nb4,
            "one grid of each model's counterfactuals on the shapes scene, with Fig. 2",
        ),
        (
            7,
            "effectiveness, composition and reversibility against the number of abducted latent layers",
            "result",
            "partial",
            nb4,
            hier,
        ),
        (
            8,
            "the same metrics against the prior temperature",
            "result",
            "partial",
            nb4,
            hier,
        ),
        (
            9,
            "CelebA-HQ counterfactuals: observation, null intervention, counterfactual, cycled back",
            "result",
            "partial",
            nb4,
            hier
            + "; the digit in place of smiling, one abducted group, at the lowest and the highest prior temperature",
        ),
        (
            10,
            "traversal under the four smiling and eyeglasses combinations and six temperatures",
            "result",
            "partial",
            nb4,
            hier + "; the digit and the hue in place of smiling and eyeglasses, at the sweep's temperatures",
        ),
        (
            11,
            "smiling counterfactuals from full to no abduction",
            "result",
            "partial",
            nb4,
            hier + "; the digit in place of smiling",
        ),
        (
            12,
            "the same for eyeglasses",
            "result",
            "partial",
            nb4,
            hier + "; the hue in place of eyeglasses",
        ),
        (
            13,
            "smiling reversibility under repeated cycles",
            "result",
            "partial",
            nb3,
            "the reversibility distance against the number of cycles on Colour-Digits, as curves instead of an image strip",
        ),
    ]
    return [PaperItem(_SND, "fig", *r) for r in f] + _snd_tables()


def _snd_tables() -> list[PaperItem]:
    nb2, nb3, nb4, cd, hier = _snd_names()
    t = [
        (
            1,
            "Colour-MNIST soundness metrics of each model and training regime, 5 seeds",
            "result",
            "reproduced",
            nb3,
            cd + "; the three blocks as three tables",
        ),
        (
            2,
            "effectiveness with pseudo-oracles trained on biased data without SI",
            "result",
            "partial",
            nb3,
            "the rank changes of Tables 2-4 in one table; the full-support block of Table 2 in full",
        ),
        (
            3,
            "effectiveness with pseudo-oracles trained on biased data with SI",
            "result",
            "partial",
            nb3,
            "as Table 2: its rank changes only",
        ),
        (
            4,
            "effectiveness with linear pseudo-oracles trained on unbiased data",
            "result",
            "partial",
            nb3,
            "as Table 2: its rank changes only",
        ),
        (
            5,
            "soundness of a VAE and a GAN on 3D Shapes",
            "result",
            "reproduced",
            nb4,
            "a 16 px shapes scene stands in for 3D Shapes",
        ),
        (6, "CelebA-HQ soundness against the number of abducted latent layers", "result", "partial", nb4, hier),
        (
            7,
            "the beta trade-off of a VAE on CelebA-HQ smiling",
            "result",
            "reproduced",
            nb4,
            "a VAE on Colour-Digits, the digit in place of smiling",
        ),
    ]
    return [PaperItem(_SND, "table", *r) for r in t]


def _par() -> list[PaperItem]:
    nb1, nb2, nb3, nb4 = (
        "parity-decomposition/01-sfm-and-tv-decomposition.ipynb",
        "parity-decomposition/02-predictive-parity-decomposed.ipynb",
        "parity-decomposition/03-compas-cookbook.ipynb",
        "parity-decomposition/04-sp-pp-spectrum.ipynb",
    )
    f = [
        (
            1,
            "the business-necessity set per pathway, and the spectrum from statistical to predictive parity",
            "diagram",
            "reproduced",
            nb4,
            "a schematic of the spectrum",
        ),
        (2, "the standard fairness model", "diagram", "reproduced", nb1, "drawn from the graph cflib uses"),
        (
            3,
            "the standard fairness model with Z empty, extended with the predictor",
            "diagram",
            "reproduced",
            nb1,
            "drawn beside Fig. 2",
        ),
        (4, "the standard fairness model of COMPAS", "diagram", "reproduced", nb3, "drawn from the graph cflib uses"),
        (
            5,
            "Ctf-DE, IE, SE, SPM and iPPM on COMPAS for the outcome, Northpointe's and the fair predictor, with 95% intervals",
            "result",
            "reproduced",
            nb3,
            "the same COMPAS data (ProPublica's file)",
        ),
        (
            6,
            "the SP against PP Pareto frontier on COMPAS, one point per business-necessity set",
            "result",
            "reproduced",
            nb4,
            "the same COMPAS data",
        ),
        (7, "iTerm I, iTerm II and iPPM against the sample size", "result", "reproduced", nb2, "the appendix's SCM"),
        (8, "Term I per bin: truth against estimate", "result", "reproduced", nb2, "the appendix's SCM"),
    ]
    return [PaperItem(_PAR, "fig", *r) for r in f]


def _registry() -> tuple[PaperItem, ...]:
    order = list(PAPER_NAMES)
    items = tuple(sorted(_inv() + _ben() + _clo() + _snd() + _par(), key=lambda it: order.index(it.paper)))
    for it in items:  # typed once, checked once
        if it.paper not in PAPER_NAMES or it.kind not in _KINDS:
            raise ValueError(f"{it.target}: unknown paper or kind")
        if it.status not in STATUSES or it.category not in CATEGORIES:
            raise ValueError(f"{it.target}: status must be one of {STATUSES}, category one of {CATEGORIES}")
        if (it.notebook is None) != (it.status == "not here") or (it.status != "reproduced" and not it.note):
            raise ValueError(f"{it.target}: a counterpart needs a notebook, and an item not reproduced a note")
    if len({it.target for it in items}) != len(items):
        raise ValueError("PAPER_ITEMS holds an item twice")
    return items


#: Every numbered figure and table of the five papers, in the order of :data:`PAPER_NAMES`.
PAPER_ITEMS: tuple[PaperItem, ...] = _registry()


def paper_item(paper: str, kind: str, number: int) -> PaperItem:
    """One item of :data:`PAPER_ITEMS`.

    Parameters
    ----------
    paper : str
        Chapter slug (a key of :data:`PAPER_NAMES`).
    kind : {"fig", "table"}
    number : int

    Returns
    -------
    PaperItem

    Raises
    ------
    ValueError
        No such item (the message names the paper's items of that kind).
    """
    if paper not in PAPER_NAMES:
        raise ValueError(f"paper must be one of {sorted(PAPER_NAMES)}, got {paper!r}")
    if kind not in _KINDS:
        raise ValueError(f"kind must be 'fig' or 'table', got {kind!r}")
    for it in PAPER_ITEMS:
        if (it.paper, it.kind, it.number) == (paper, kind, number):
            return it
    have = [it.number for it in PAPER_ITEMS if (it.paper, it.kind) == (paper, kind)]
    raise ValueError(f"{paper} has no {kind} {number!r}; its {kind}s are {have}")


def paper_items(paper: str | None = None, *, status: str | None = None, category: str | None = None) -> list[PaperItem]:
    """The items of :data:`PAPER_ITEMS` of one paper, status or category.

    Parameters
    ----------
    paper : str, optional
    status : str, optional
        One of :data:`STATUSES`.
    category : str, optional
        One of :data:`CATEGORIES`.

    Returns
    -------
    list of PaperItem
    """
    if paper is not None and paper not in PAPER_NAMES:
        raise ValueError(f"paper must be one of {sorted(PAPER_NAMES)}, got {paper!r}")
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    if category is not None and category not in CATEGORIES:
        raise ValueError(f"category must be one of {CATEGORIES}, got {category!r}")
    return [
        it
        for it in PAPER_ITEMS
        if (paper is None or it.paper == paper)
        and (status is None or it.status == status)
        and (category is None or it.category == category)
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _counterpart(it: PaperItem) -> str:
    if it.notebook is None:
        return "—"
    page = it.notebook.removesuffix(".ipynb")
    return f"{{ref}}`{page.rsplit('/', 1)[-1]} <{it.target}>`"


def _status(it: PaperItem) -> str:
    if it.status == "reproduced":
        return "reproduced" + (f" ({_cell(it.note)})" if it.note else "")
    return f"{it.status}: {_cell(it.note)}"


def index_markdown(items: Iterable[PaperItem] | None = None) -> str:
    """The book's page "Figures and tables of the papers" (MyST markdown), generated from the registry.

    Parameters
    ----------
    items : iterable of PaperItem, optional
        Default :data:`PAPER_ITEMS`.

    Returns
    -------
    str
        A count per paper and status, then per paper one row per figure and table: the item, what it shows,
        the book's counterpart (a link to the target right above it in its notebook) and its status with what
        differs or why it is not here.
    """
    items = list(PAPER_ITEMS if items is None else items)
    results = [it for it in items if it.category == "result"]
    count = {s: sum(it.status == s for it in results) for s in STATUSES}
    lines = [
        "# Figures and tables of the papers",
        "",
        f"Every numbered figure and table of the five papers: {len(items)} in all, {len(results)} of them results "
        f"and {len(items) - len(results)} diagrams, architectures or set-up tables. Of the results the book "
        f"reproduces {count['reproduced']} with its own data or the substitute named beside it, "
        f"{count['partial']} in part (what differs is said), and {count['not here']} not at all (with the "
        "reason). Each counterpart links to the figure or table itself in its notebook. The page is generated at "
        "every build from one registry in code (`cflib.experiments.papers.index`), which the notebooks' targets "
        "and the papers' notes are checked against.",
        "",
        "| paper | reproduced | partial | not here | diagrams, architectures, set-up |",
        "|---|---|---|---|---|",
    ]
    for slug, name in PAPER_NAMES.items():
        mine = [it for it in items if it.paper == slug]
        res = [it for it in mine if it.category == "result"]
        lines.append(
            f"| {name} | "
            + " | ".join(str(sum(it.status == s for it in res)) for s in STATUSES)
            + f" | {len(mine) - len(res)} |"
        )
    for slug, name in PAPER_NAMES.items():
        mine = [it for it in items if it.paper == slug]
        if not mine:
            continue
        lines += ["", f"## {name}", "", "| item | what it shows | in the book | status |", "|---|---|---|---|"]
        for it in mine:
            kind = "" if it.category == "result" else f" ({it.category})"
            lines.append(f"| {it.label}{kind} | {_cell(it.shows)} | {_counterpart(it)} | {_status(it)} |")
    return "\n".join(lines) + "\n"
