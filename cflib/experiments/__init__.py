"""Each chapter's experiments: its pipelines, studies, tables, figures and the ``claims_*`` functions that turn
results into verdicts.

This layer sits above ``data``, ``scm``/``models`` and ``metrics``/``stats``/``fairness`` and below
``runner``/``sweep``/``book``/``cli``. One package per chapter, each made of modules of one idea (the
chapter's studies, ``tables``, ``figures``, ``claims``; CONTRIBUTING.md says where a new piece goes):

- :mod:`cflib.experiments.foundations` (one module: the part is small)
- :mod:`cflib.experiments.soundness` (Monteiro et al. 2023, axiomatic soundness)
- :mod:`cflib.experiments.benchmark` (Melistas et al. 2024, the counterfactual benchmark)
- :mod:`cflib.experiments.invariance` (Ma et al. 2024, the counterfactual invariance test)
- :mod:`cflib.experiments.closeness` (Fu et al. 2025, the closeness test)
- :mod:`cflib.experiments.parity` (Plecko & Bareinboim 2023, parity decomposed)
- :mod:`cflib.experiments.calibration` (the calibration page of every test)
- :mod:`cflib.experiments.auditing` (the one-call audit, of tabular data and of image classifiers)

A notebook imports its chapter's package (``from cflib.experiments import parity as exp``), whose
``__init__`` re-exports the chapter's public names, calls its pipelines, and its Claims section is one
call to the notebook's ``claims_<nn>(results)``, which records every verdict through
:func:`cflib.claims.claim` and returns the table.
"""
