"""Each chapter's experiments: its pipelines, studies and the ``claims_*`` functions that turn results into verdicts.

This layer sits above ``data``, ``scm``/``models`` and ``metrics``/``stats``/``fairness`` and below
``runner``/``sweep``/``book``/``cli``. One module per chapter:

- :mod:`cflib.experiments.foundations`
- :mod:`cflib.experiments.axiomatic_soundness`
- :mod:`cflib.experiments.counterfactual_benchmark`
- :mod:`cflib.experiments.invariance_test`
- :mod:`cflib.experiments.closeness_test`
- :mod:`cflib.experiments.parity_decomposition`
- :mod:`cflib.experiments.auditing` (the one-call audit), with :mod:`cflib.experiments.auditing_images` for its
  section on image classifiers

A notebook imports its chapter's module (``from cflib.experiments import parity_decomposition as exp``),
calls its pipelines, and its Claims section is one call to the notebook's ``claims_<nn>(results)``,
which records every verdict through :func:`cflib.claims.claim` and returns the table.
"""
