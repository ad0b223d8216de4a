"""The numbers the five papers print in their results tables, typed once from the papers' notes.

Every value here is copied from ``papers/notes/*.md`` (which copy each table of the papers); the book's
tables put them beside the book's own numbers through :func:`side_by_side`, and
``tests/test_paper_values.py`` re-reads the notes and compares a sample. A cell the paper leaves empty or
that its text lost in extraction is ``None``. Only the means are kept (the papers' ``±`` are over images,
batches or seeds of a different scale).

The registry: :data:`PAPER_TABLES`, keyed by ``(paper, table)`` with the paper named by its chapter
(``"counterfactual-benchmark"``, ``"axiomatic-soundness"``, ``"invariance-test"``), read with
:func:`paper_table`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["PaperTable", "PAPER_TABLES", "paper_table", "side_by_side", "show_side_by_side", "MISSING"]

#: What a cell shows when the paper or the book has no value there.
MISSING = "—"

# ---------------------------------------------------------------------------------------------------
# The values, row by row: the row labels, then one number per column (None: not printed or illegible).
# ---------------------------------------------------------------------------------------------------

# Melistas et al. 2024 (counterfactual-benchmark), Tables 1-5 (notes 001, section 4).
_B1 = (
    ("VAE (σ=√e⁻⁵)", 4.244, 9.855, 0.095, 0.158, 0.039, 0.098),
    ("VAE (σ learned)", 2.6, 7.698, 0.064, 0.135, 0.026, 0.075),
    ("HVAE", 0.438, 1.55, 0.009, 0.038, 0.006, 0.024),
    ("GAN", 16.779, 16.78, 0.193, 0.193, 0.154, 0.154),
    ("GAN fine-tuned", 3.807, 11.697, 0.089, 0.272, 0.049, 0.184),
)
_B2 = (
    ("VAE (σ=√e⁻⁵)", 126.8, 126.4, 0.536, 0.553, 0.332, 0.462),
    ("VAE (σ learned)", 127.8, 123.4, 0.527, 0.549, 0.295, 0.424),
    ("HVAE fine-tuned", 129.4, 138.8, 0.498, 0.525, 0.063, 0.2),
    ("GAN", 118.9, 126.1, 0.548, 0.66, 0.403, 0.506),
    ("GAN fine-tuned", 115.3, 128.4, 0.516, 0.592, 0.29, 0.462),
)
_B3 = (
    ("VAE (σ=√e⁻⁵)", 0.125, 0.346, 0.138, 9.382, 20.642, 11.279, 0.988, 0.989, 0.933),
    ("VAE (σ learned)", 0.109, 0.333, 0.139, 3.149, 5.326, 4.64, 0.989, 0.988, 0.775),
    ("HVAE", 0.086, 0.224, 0.117, 1.991, 3.517, 2.098, 0.985, 0.935, 0.972),
    ("GAN", 0.227, 0.631, 0.214, 6.68, 9.795, 6.632, 0.81, 0.811, 0.813),
    ("GAN fine-tuned", 0.228, 0.68, 0.393, 9.436, 15.137, 12.388, 0.961, 0.966, 0.451),
)
_B4 = (
    ("VAE (σ=√e⁻⁵)", 0.981, 0.996, 0.929, 0.771),
    ("VAE (σ learned)", 0.897, 0.987, 0.938, 0.81),
    ("HVAE fine-tuned", 0.998, 0.997, 0.883, 0.981),
    ("GAN", 0.818, 0.837, 0.824, 0.873),
    ("GAN fine-tuned", 0.819, 0.873, 0.957, 0.891),
)
_B5 = (
    ("VAE (σ=√e⁻⁵)", 17.096, 0.276, 0.065, 0.843, 77.307, 0.31, 0.072, 0.925),
    ("VAE (σ learned)", 10.124, 0.268, 0.055, 0.839, 66.412, 0.297, 0.014, 0.984),
    ("HVAE", 5.362, 0.272, 0.112, 0.736, 12.667, 0.295, 0.0001, 0.999),
    ("HVAE fine-tuned", None, None, None, None, 22.047, 0.295, 0.003, 0.996),
    ("GAN", 72.766, 0.39, 0.339, 0.57, 41.536, 0.362, 0.224, 0.777),
    ("GAN fine-tuned", 35.568, 0.286, 0.119, 0.764, 31.56, 0.304, 0.046, 0.953),
)
# Monteiro et al. 2023 (axiomatic-soundness), Tables 1-7 (notes 003); Table 1 in its three blocks.
_S1_CONF = (
    ("no", "Bernoulli VAE β=1", 9.2, 97.12, 10.74, 11.42, 98.89, 11.6, 11.11),
    ("no", "Bernoulli VAE β=2", 10.84, 98.94, 10.36, 12.82, 99.17, 10.07, 12.52),
    ("no", "Normal VAE β=5", 11.21, 94.74, 14.17, 13.32, 98.81, 14.27, 12.69),
    ("yes", "Bernoulli VAE β=1", 8.63, 96.94, 6.38, 11.1, 98.88, 7.02, 10.79),
    ("yes", "Bernoulli VAE β=2", 9.85, 95.76, 6.44, 12.1, 95.77, 6.44, 11.86),
    ("yes", "Normal VAE β=5", 9.32, 95.35, 7.54, 11.29, 98.79, 7.3, 10.85),
)
_S1_FULL = (
    ("no", "Bernoulli VAE β=1", 6.68, 96.62, 8.52, 8.89, 99.2, 12.15, 8.45),
    ("no", "Bernoulli VAE β=2", 7.56, 99.36, 2.7, 9.67, 99.47, 2.54, 9.32),
    ("no", "Normal VAE β=5", 6.72, 95.53, 3.88, 9.06, 99.07, 3.59, 8.45),
    ("yes*", "GAN", 6.05, 95.17, 1.95, 11.18, 99.18, 1.73, 7.79),
    ("yes", "Bernoulli VAE β=1", 6.67, 99.07, 2.31, 8.42, 99.37, 3.08, 8.4),
    ("yes", "Bernoulli VAE β=2", 7.84, 99.63, 2.16, 9.63, 99.61, 2.01, 9.34),
    ("yes", "Normal VAE β=5", 6.51, 97.75, 3.05, 8.35, 99.31, 2.73, 7.83),
    ("yes", "GAN", 5.25, 96.27, 1.84, 10.75, 99.01, 1.77, 6.2),
)
_S1_UNCONF = (
    ("Identity", 0.0, 10.5, 1.38, 0.0, 99.18, 32.98, 0.0),
    ("VAE w/o encoder", 19.04, 97.08, 1.32, 19.04, 97.24, 1.32, 19.04),
    ("Bernoulli VAE β=1", 5.98, 98.68, 1.29, 7.67, 99.45, 1.26, 7.24),
    ("Bernoulli VAE β=2", 6.86, 99.52, 1.22, 9.1, None, 1.22, 8.62),
    ("Normal VAE β=5", 6.26, 97.24, 1.52, 8.07, 99.38, 1.47, 7.51),
    ("GAN", 4.92, 94.28, 1.6, 9.22, 98.98, 1.55, 5.6),
)
_S2 = (
    ("w/o full", "no", "Bern β=1", 53.77, 11.43, 53.68, 11.8, 3.5, 3.5, 0.0),
    ("w/o full", "no", "Bern β=2", 48.34, 10.42, 49.32, 10.15, 4.0, 2.5, 1.5),
    ("w/o full", "no", "Normal β=5", 57.65, 13.92, 60.69, 13.63, 3.5, 5.5, 2.0),
    ("w/o full", "yes", "Bern β=1", None, 9.15, 50.92, 9.51, 3.0, 2.25, 0.75),
    ("w/o full", "yes", "Bern β=2", None, 8.51, 47.3, 8.53, 3.5, 3.25, 0.25),
    ("w/o full", "yes", "Normal β=5", None, 8.28, 47.19, 7.97, 3.5, 4.0, 0.5),
    ("w/ full", "no", "Bern β=1", 87.71, 10.9, None, 14.02, 7.0, 6.5, 0.5),
    ("w/ full", "no", "Bern β=2", 90.05, 5.94, None, 5.92, 5.25, 3.25, 2.0),
    ("w/ full", "no", "Normal β=5", 82.98, 6.19, None, 5.77, 6.5, 7.0, 0.5),
    ("w/ full", "yes*", "GAN", 87.03, 4.71, None, 5.28, 3.0, 4.25, 1.25),
    ("w/ full", "yes", "Bern β=1", 92.07, 5.64, 92.19, 6.15, 3.75, 4.0, 0.25),
    ("w/ full", "yes", "Bern β=2", 93.98, 5.72, 93.76, 5.82, 2.5, 2.0, 0.5),
    ("w/ full", "yes", "Normal β=5", 88.68, 5.92, 91.85, 5.87, 4.5, 4.75, 0.25),
    ("w/ full", "yes", "GAN", 87.4, 4.78, 90.9, 4.9, 3.5, 4.25, 0.75),
)
_S3 = (
    ("w/o full", "no", "Bern β=1", 57.09, 11.17, 57.14, 11.42, 3.5, 3.5, 0.0),
    ("w/o full", "no", "Bern β=2", 53.43, 10.08, 54.03, 9.73, 4.0, 2.5, 1.5),
    ("w/o full", "no", "Normal β=5", 62.93, 13.81, 67.23, 13.55, 3.5, 5.5, 2.0),
    ("w/o full", "yes", "Bern β=1", 53.72, 8.57, 55.36, 8.88, 3.0, 2.25, 0.75),
    ("w/o full", "yes", "Bern β=2", 50.96, 7.93, 51.79, 7.89, 3.5, 3.25, 0.25),
    ("w/o full", "yes", "Normal β=5", 47.89, 7.83, 51.23, 7.42, 3.5, 4.0, 0.5),
    ("w/ full", "no", "Bern β=1", None, 8.93, 96.57, 12.36, 7.5, 6.5, 1.0),
    ("w/ full", "no", "Bern β=2", None, 3.17, 96.94, 2.98, 4.25, 3.25, 1.0),
    ("w/ full", "no", "Normal β=5", None, 4.16, 95.92, 3.85, 7.5, 7.0, 0.5),
    ("w/ full", "yes*", "GAN", None, 2.36, 97.47, 2.52, 3.25, 4.25, 1.0),
    ("w/ full", "yes", "Bern β=1", 97.36, 2.8, 97.7, 3.67, 3.5, 4.0, 0.5),
    ("w/ full", "yes", "Bern β=2", 98.74, 2.68, 98.84, 2.61, 2.0, 2.0, 0.0),
    ("w/ full", "yes", "Normal β=5", 94.68, 3.26, 97.5, 3.2, 4.5, 4.75, 0.25),
    ("w/ full", "yes", "GAN", 93.9, 2.38, 96.58, 2.44, 3.5, 4.25, 0.75),
)
_S4 = (
    ("w/o full", "no", "Bern β=1", 80.83, 17.77, None, 17.28, 4.75, 3.5, 1.25),
    ("w/o full", "no", "Bern β=2", 86.18, 16.17, None, 15.91, 2.5, 2.5, 0.0),
    ("w/o full", "no", "Normal β=5", 78.67, 18.97, None, 18.37, 5.25, 5.5, 0.25),
    ("w/o full", "yes", "Bern β=1", None, 15.22, None, 14.24, 2.75, 2.25, 0.5),
    ("w/o full", "yes", "Bern β=2", None, 15.93, None, 15.74, 4.25, 3.25, 1.0),
    ("w/o full", "yes", "Normal β=5", None, 14.17, None, 13.82, 1.5, 4.0, 2.5),
    ("w/ full", "no", "Bern β=1", None, 18.05, 84.23, 18.73, 7.25, 6.5, 0.75),
    ("w/ full", "no", "Bern β=2", None, 14.75, 87.0, 14.8, 3.5, 3.25, 0.25),
    ("w/ full", "no", "Normal β=5", None, 15.14, 84.9, 14.36, 5.25, 7.0, 1.75),
    ("w/ full", "yes*", "GAN", None, 14.71, 87.09, 14.87, 5.0, 4.25, 0.75),
    ("w/ full", "yes", "Bern β=1", None, 14.88, None, 14.37, 3.75, 4.0, 0.25),
    ("w/ full", "yes", "Bern β=2", None, 14.7, None, 14.56, 1.5, 2.0, 0.5),
    ("w/ full", "yes", "Normal β=5", None, 15.0, None, 14.84, 4.5, 4.75, 0.25),
    ("w/ full", "yes", "GAN", None, 14.77, None, 14.65, 5.25, 4.25, 1.0),
)
_S5 = (
    ("floor hue", "VAE", 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 1.62, 1.62),
    ("floor hue", "GAN", 100.0, 100.0, 99.9, 99.37, 99.3, 100.0, 5.23, 5.25),
    ("object hue", "VAE", 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 1.62, 1.62),
    ("object hue", "GAN", 100.0, 99.99, 99.91, 99.29, 99.16, 100.0, 5.33, 5.35),
    ("orientation", "VAE", 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 1.62, 1.62),
    ("orientation", "GAN", 100.0, 100.0, 99.88, 99.07, 99.0, 100.0, 5.32, 5.35),
    ("scale", "VAE", 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 1.62, 1.62),
    ("scale", "GAN", 100.0, 100.0, 99.91, 98.83, 99.19, 100.0, 5.3, 5.31),
    ("shape", "VAE", 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 1.62, 1.62),
    ("shape", "GAN", 100.0, 100.0, 99.92, 98.76, 99.1, 100.0, 5.37, 5.39),
    ("wall hue", "VAE", 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 1.62, 1.62),
    ("wall hue", "GAN", 100.0, 100.0, 99.86, 99.3, 99.32, 100.0, 5.27, 5.29),
)
_S6 = (
    ("1", 60.1, 59.521, 0.984, 60.273, 59.263, 0.979),
    ("2", 55.521, 54.36, 0.982, 55.443, 54.314, 0.982),
    ("4", 29.489, 30.705, 0.957, 29.491, 30.758, 0.976),
    ("8", 20.89, 22.604, 0.933, 20.896, 22.526, 0.932),
    ("16", 15.997, 18.269, 0.921, 16.312, 18.323, 0.932),
    ("24", 6.606, 9.88, 0.886, 8.092, 9.29, 0.872),
    ("32", 4.16, 6.189, 0.858, 4.451, 5.606, 0.865),
    ("42", 3.657, 5.701, 0.848, 3.656, 4.808, 0.854),
)
_S7 = (
    ("1", 2.874, 1.794, 2.482, 0.536),
    ("3", 3.556, 4.335, 5.333, 0.72),
    ("5", 3.931, 6.362, 7.775, 0.877),
    ("7", 4.189, 10.02, 8.04, 0.91),
    ("10", 4.446, 12.209, 10.05, 0.952),
)

# Ma et al. 2024 (invariance-test, CIT-LR), Tables 2, 3 and 7-13 (notes 000, section 4).
_C2 = (
    ("densenet121", "Black", 0.82, 0.71, 0.961, 0.77, 0.83),
    ("densenet121", "White", 0.88, 0.78, 0.943, 0.72, 0.87),
    ("densenet121", "Asian", 0.81, 0.73, 0.925, 0.77, 0.85),
    ("densenet169", "Black", 0.87, 0.87, 0.95, 0.83, 0.85),
    ("densenet169", "White", 0.953, 0.872, 0.941, 0.81, 0.83),
    ("densenet169", "Asian", 0.892, 0.88, 0.931, 0.84, 0.85),
    ("densenet201", "Black", 0.84, 0.85, 0.944, 0.8, 0.9),
    ("densenet201", "White", 0.94, 0.871, 0.95, 0.8, 0.87),
    ("densenet201", "Asian", 0.881, 0.884, 0.926, 0.82, 0.86),
    ("VGG13", "Black", 0.86, 0.85, 0.961, 0.83, 0.89),
    ("VGG13", "White", 0.93, 0.9, 0.93, 0.75, 0.87),
    ("VGG13", "Asian", 0.88, 0.949, 0.918, 0.79, 0.83),
    ("VGG13+BN", "Black", 0.85, 0.83, 0.963, 0.81, 0.9),
    ("VGG13+BN", "White", 0.89, 0.82, 0.931, 0.81, 0.91),
    ("VGG13+BN", "Asian", 0.86, 0.83, 0.926, 0.85, 0.93),
    ("VGG16", "Black", 0.83, 0.86, 0.964, 0.79, 0.9),
    ("VGG16", "White", 0.89, 0.85, 0.96, 0.8, 0.86),
    ("VGG16", "Asian", 0.86, 0.87, 0.926, 0.76, 0.85),
    ("VGG16+BN", "Black", 0.82, 0.87, 0.95, 0.84, 0.88),
    ("VGG16+BN", "White", 0.9, 0.92, 0.921, 0.82, 0.86),
    ("VGG16+BN", "Asian", 0.87, 0.91, 0.911, 0.84, 0.87),
    ("VGG19", "Black", 0.87, 0.85, 0.971, 0.84, 0.83),
    ("VGG19", "White", 0.94, 0.91, 0.93, 0.81, 0.81),
    ("VGG19", "Asian", 0.89, 0.92, 0.93, 0.85, 0.83),
    ("VGG19+BN", "Black", 0.84, 0.87, 0.951, 0.81, 0.9),
    ("VGG19+BN", "White", 0.9, 0.92, 0.94, 0.81, 0.87),
    ("VGG19+BN", "Asian", 0.87, 0.92, 0.928, 0.8, 0.83),
    ("InceptionV3", "Black", 0.83, 0.85, 0.931, 0.84, 0.91),
    ("InceptionV3", "White", 0.89, 0.86, 0.94, 0.79, 0.87),
    ("InceptionV3", "Asian", 0.85, 0.891, 0.926, 0.82, 0.84),
)
_C3 = (
    ("densenet121", "Black", 0.792, 0.747, 0.962, 0.825, 0.853),
    ("densenet121", "White", 0.854, 0.819, 0.944, 0.775, 0.887),
    ("densenet121", "Asian", 0.78, 0.754, 0.928, 0.83, 0.864),
    ("densenet169", "Black", 0.844, 0.915, 0.949, 0.875, 0.873),
    ("densenet169", "White", 0.926, 0.915, 0.939, 0.862, 0.857),
    ("densenet169", "Asian", 0.86, 0.916, 0.927, 0.9, 0.875),
    ("densenet201", "Black", 0.82, 0.896, 0.944, 0.852, 0.918),
    ("densenet201", "White", 0.912, 0.913, 0.951, 0.861, 0.898),
    ("densenet201", "Asian", 0.85, 0.93, 0.926, 0.875, 0.875),
    ("VGG13", "Black", 0.832, 0.892, 0.96, 0.872, 0.905),
    ("VGG13", "White", 0.898, 0.946, 0.931, 0.81, 0.898),
    ("VGG13", "Asian", 0.852, 0.99, 0.917, 0.854, 0.863),
    ("VGG13+BN", "Black", 0.821, 0.872, 0.964, 0.865, 0.916),
    ("VGG13+BN", "White", 0.857, 0.867, 0.93, 0.869, 0.943),
    ("VGG13+BN", "Asian", 0.831, 0.871, 0.926, 0.898, 0.968),
    ("VGG16", "Black", 0.806, 0.896, 0.965, 0.851, 0.92),
    ("VGG16", "White", 0.853, 0.888, 0.96, 0.865, 0.897),
    ("VGG16", "Asian", 0.826, 0.905, 0.928, 0.822, 0.868),
    ("VGG16+BN", "Black", 0.792, 0.914, 0.949, 0.887, 0.897),
    ("VGG16+BN", "White", 0.872, 0.966, 0.92, 0.887, 0.897),
    ("VGG16+BN", "Asian", 0.847, 0.952, 0.913, 0.877, 0.892),
    ("VGG19", "Black", 0.841, 0.898, 0.97, 0.887, 0.858),
    ("VGG19", "White", 0.912, 0.957, 0.932, 0.862, 0.856),
    ("VGG19", "Asian", 0.861, 0.967, 0.93, 0.896, 0.854),
    ("VGG19+BN", "Black", 0.818, 0.911, 0.949, 0.857, 0.916),
    ("VGG19+BN", "White", 0.871, 0.96, 0.939, 0.864, 0.902),
    ("VGG19+BN", "Asian", 0.841, 0.961, 0.93, 0.877, 0.857),
    ("InceptionV3", "Black", 0.806, 0.894, 0.93, 0.908, 0.931),
    ("InceptionV3", "White", 0.861, 0.902, 0.941, 0.854, 0.911),
    ("InceptionV3", "Asian", 0.817, 0.926, 0.927, 0.87, 0.867),
)
_C12 = (
    ("Densenet121", -2.0, 0.0484, -3.2, 0.0018, 0.51, 0.6114, 1.49, 0.1399, 3.0, 0.0032),
    ("Densenet169", 3.5, 0.0007, -2.89, 0.0047, -0.45, 0.6564, 2.15, 0.0341, 4.22, 0.0),
    ("Densenet201", -1.7, 0.0921, -3.9, 0.0002, -0.78, 0.4376, 1.04, 0.3004, 3.05, 0.0029),
    ("VGG13", 2.56, 0.0122, -2.2, 0.03, 1.23, 0.2224, -1.98, 0.051, 2.8, 0.006),
    ("VGG13+BN", -1.05, 0.2962, -1.11, 0.2695, -0.95, 0.3447, -2.89, 0.0047, 3.1, 0.0024),
    ("VGG16", 1.03, 0.3051, -3.17, 0.0021, 0.56, 0.5782, -2.32, 0.0223, 1.4, 0.1637),
    ("VGG16+BN", -3.11, 0.0023, 1.42, 0.1585, 2.09, 0.039, 1.4, 0.1645, -2.65, 0.0095),
    ("VGG19", -2.78, 0.0068, -3.1, 0.0024, 1.01, 0.3152, 1.76, 0.0817, 3.12, 0.0023),
    ("VGG19+BN", 3.0, 0.0032, -2.72, 0.0075, 0.66, 0.5111, 2.0, 0.0487, 2.44, 0.0167),
    ("InceptionV3", -2.35, 0.021, 3.3, 0.0012, -1.19, 0.2362, -2.53, 0.0131, 3.05, 0.0029),
)
_C13 = (
    ("Densenet121", 1.3, 0.1962, -2.7, 0.008, -0.7, 0.484, 3.74, 0.0003, 3.92, 9.3e-05),
    ("Densenet169", -2.53, 0.013, -2.57, 0.012, -1.94, 0.0556, -2.51, 0.01399, 3.3, 0.0012),
    ("Densenet201", 2.35, 0.021, 0.74, 0.4585, -2.39, 0.0192, -2.69, 0.0082, -3.41, 0.00089),
    ("VGG13", 3.03, 0.003, -2.01, 0.047, -0.9, 0.3711, 3.44, 0.00082, -2.12, 0.0367),
    ("VGG13+BN", 1.89, 0.0621, -2.15, 0.034, -0.79, 0.4314, 2.45, 0.01645, 3.93, 5.2e-05),
    ("VGG16", -2.17, 0.032, 1.87, 0.064, 0.81, 0.4176, 3.9, 0.00017, 2.72, 0.0075),
    ("VGG16+BN", 0.83, 0.4051, 1.04, 0.3, 1.01, 0.3152, 3.1, 0.00241, 3.37, 0.001),
    ("VGG19", -2.06, 0.0422, -1.11, 0.2695, -0.92, 0.3582, -2.95, 0.00387, -3.78, 0.00029),
    ("VGG19+BN", -1.85, 0.068, -1.8, 0.075, -2.17, 0.032, -2.86, 0.0051, 3.84, 0.00024),
    ("InceptionV3", 2.0, 0.0484, 2.41, 0.018, 0.89, 0.3747, 2.2, 0.03, 2.25, 0.0264),
)
_C7 = (
    ("VAE β=0", 251.4, 242.8, 248.7),
    ("VAE β=1", 241.8, 230.4, 238.5),
    ("VAE β=10", 275.6, 268.2, 271.9),
    ("CLDM", 810.5, 789.8, 798.2),
    ("DLDM", 340.2, 320.8, 330.5),
)
_C8 = (
    ("VAE β=0", 78.2, 82.0, 84.5),
    ("VAE β=1", 81.2, 85.3, 87.4),
    ("VAE β=10", 76.8, 80.1, 82.2),
    ("CLDM", 83.5, 87.2, 89.1),
    ("DLDM", 88.7, 91.8, 93.3),
)
_C9 = (
    ("VAE β=0", 255.3, 246.7, 243.9),
    ("VAE β=1", 245.6, 234.1, 232.7),
    ("VAE β=10", 280.2, 272.9, 269.1),
    ("CLDM", 815.9, 798.3, 793.6),
    ("DLDM", 346.1, 324.4, 322.3),
)
_C10 = (
    ("VAE β=0", 79.0, 83.2, 85.9),
    ("VAE β=1", 82.1, 86.5, 88.2),
    ("VAE β=10", 78.0, 81.5, 83.4),
    ("CLDM", 84.1, 87.8, 89.6),
    ("DLDM", 89.2, 92.0, 93.7),
)
_C11 = (
    ("VAE β=0", 24.23, 26.33),
    ("VAE β=1", 23.92, 26.92),
    ("VAE β=10", 25.1, 27.22),
    ("CLDM", 22.14, 26.1),
    ("DLDM", 21.79, 25.89),
)


@dataclass(frozen=True)
class PaperTable:
    """One results table of a paper, as printed.

    Attributes
    ----------
    paper, table : str
        The key: the paper's chapter and the table's number (``"Table 3"``).
    caption : str
        What the table shows, on which data and at which scale.
    index : tuple of str
        Names of the row-label levels (the leading entries of each row).
    columns : tuple of str
        Column names.
    rows : tuple of tuples
        Row labels then one number per column (``None``: not printed).
    better : str
        Per column ``"<"`` (lower is better), ``">"`` (higher is better) or ``" "`` (no order); ranks use it.
    """

    paper: str
    table: str
    caption: str
    index: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    better: str = ""

    def __post_init__(self) -> None:
        width = len(self.index) + len(self.columns)
        for r in self.rows:
            if len(r) != width:
                raise ValueError(
                    f"{self.paper} {self.table}: row {r[: len(self.index)]} has {len(r)} entries, not {width}"
                )
        if self.better and len(self.better) != len(self.columns):
            raise ValueError(f"{self.paper} {self.table}: better must have one character per column")

    def frame(self) -> pd.DataFrame:
        """The table as a float frame (NaN where the paper prints nothing), rows labelled by :attr:`index`.

        Returns
        -------
        pandas.DataFrame
        """
        n = len(self.index)
        labels = [r[:n] if n > 1 else r[0] for r in self.rows]
        index = pd.MultiIndex.from_tuples(labels, names=self.index) if n > 1 else pd.Index(labels, name=self.index[0])
        values = [[np.nan if v is None else float(v) for v in r[n:]] for r in self.rows]
        return pd.DataFrame(values, index=index, columns=list(self.columns))

    def block(self, label: str) -> PaperTable:
        """The rows under the first row label ``label`` (a block of the table), that label dropped.

        Parameters
        ----------
        label : str
            A value of the first index level (for example a scenario of soundness Table 1).

        Returns
        -------
        PaperTable
            The block, with the same key, columns and orders.
        """
        if len(self.index) < 2:
            raise ValueError(f"{self.paper} {self.table} has one row label, so it has no blocks")
        rows = tuple(r[1:] for r in self.rows if r[0] == label)
        if not rows:
            raise ValueError(f"label must be one of {sorted({r[0] for r in self.rows})}, got {label!r}")
        return PaperTable(self.paper, self.table, self.caption, self.index[1:], self.columns, rows, self.better)

    def direction(self, column: str) -> str:
        """``"<"``, ``">"`` or ``" "`` for ``column`` (``" "`` when the table gives no order)."""
        if not self.better:
            return " "
        return self.better[self.columns.index(column)]


_COMP = ("l1 image, 1 cycle", "l1 image, 10 cycles", "l1 embedding, 1 cycle", "l1 embedding, 10 cycles")
_S1_COLS = ("comp", "d-acc", "d-ae", "d-rev", "h-acc", "h-ae", "h-rev")
_RANK_COLS = ("d-acc", "d-ae", "h-acc", "h-ae", "avg rank", "original rank", "rank change")
_DISEASES = ("Cardiomegaly", "Edema", "Consolidation", "Atelectasis", "Pleural Effusion")
_TO = ("do(black)", "do(asian)", "do(white)")
_SOUNDNESS_BLOCKS = {
    "confounded w/o full support": _S1_CONF,
    "confounded w/ full support": _S1_FULL,
    "unconfounded": tuple(("",) + r for r in _S1_UNCONF),  # the unconfounded block has no SI column
}
_SCENARIO = {"w/o full": "confounded w/o full support", "w/ full": "confounded w/ full support"}


#: Tables 2-4 abbreviate the model names of Table 1.
_MODEL = {
    "Bern β=1": "Bernoulli VAE β=1",
    "Bern β=2": "Bernoulli VAE β=2",
    "Normal β=5": "Normal VAE β=5",
    "GAN": "GAN",
}


def _rank_rows(rows: tuple[tuple[Any, ...], ...]) -> tuple[tuple[Any, ...], ...]:
    return tuple((_SCENARIO[r[0]], r[1], _MODEL[r[2]]) + r[3:] for r in rows)


def _benchmark_tables() -> list[PaperTable]:
    bench = "counterfactual-benchmark"
    return [
        PaperTable(
            bench,
            "Table 1",
            "Composition on MorphoMNIST (32 x 32, 10k test images); l1 image on 0-255, LPIPS with ImageNet VGG",
            ("model",),
            (*_COMP, "LPIPS, 1 cycle", "LPIPS, 10 cycles"),
            _B1,
            "<<<<<<",
        ),
        PaperTable(
            bench,
            "Table 2",
            "Composition on CelebA (64 x 64); embeddings and LPIPS from ImageNet VGG-16; "
            "the l1 image column is a uint8 wrap-around artefact of the official code",
            ("model",),
            (*_COMP, "LPIPS, 1 cycle", "LPIPS, 10 cycles"),
            _B2,
            "<<<<<<",
        ),
        PaperTable(
            bench,
            "Table 3",
            "Effectiveness on MorphoMNIST: thickness MAE (pixels), intensity MAE (0-255), "
            "digit accuracy, per intervention",
            ("model",),
            (
                "t MAE do(t)",
                "t MAE do(i)",
                "t MAE do(y)",
                "i MAE do(t)",
                "i MAE do(i)",
                "i MAE do(y)",
                "y acc do(t)",
                "y acc do(i)",
                "y acc do(y)",
            ),
            _B3,
            "<<<<<<>>>",
        ),
        PaperTable(
            bench,
            "Table 4",
            "Effectiveness on CelebA (F1), per intervention",
            ("model",),
            ("Smiling F1 do(s)", "Smiling F1 do(e)", "Eyeglasses F1 do(s)", "Eyeglasses F1 do(e)"),
            _B4,
            ">>>>",
        ),
        PaperTable(
            bench,
            "Table 5",
            "Realism (FID on Inception-v3 features) and minimality (CLD, P1, P2) on MorphoMNIST and CelebA",
            ("model",),
            (
                "MorphoMNIST FID",
                "MorphoMNIST CLD",
                "MorphoMNIST P1",
                "MorphoMNIST P2",
                "CelebA FID",
                "CelebA CLD",
                "CelebA P1",
                "CelebA P2",
            ),
            _B5,
            "<<  <<  ",
        ),
    ]


def _soundness_tables() -> list[PaperTable]:
    sound = "axiomatic-soundness"
    return [
        PaperTable(
            sound,
            "Table 1",
            "Soundness on Colour-MNIST, mean of 5 seeds; accuracies and hue errors in %",
            ("scenario", "SI", "model"),
            _S1_COLS,
            tuple((b,) + r for b, rows in _SOUNDNESS_BLOCKS.items() for r in rows),
            "<><<><<",
        ),
        PaperTable(
            sound,
            "Table 2",
            "Effectiveness with pseudo-oracles trained on biased data without SI, and the models' ranks",
            ("scenario", "SI", "model"),
            _RANK_COLS,
            _rank_rows(_S2),
            "><><   ",
        ),
        PaperTable(
            sound,
            "Table 3",
            "Effectiveness with pseudo-oracles trained on biased data with SI, and the models' ranks",
            ("scenario", "SI", "model"),
            _RANK_COLS,
            _rank_rows(_S3),
            "><><   ",
        ),
        PaperTable(
            sound,
            "Table 4",
            "Effectiveness with linear/logistic pseudo-oracles trained on unbiased data, and the models' ranks",
            ("scenario", "SI", "model"),
            _RANK_COLS,
            _rank_rows(_S4),
            "><><   ",
        ),
        PaperTable(
            sound,
            "Table 5",
            "3D Shapes: accuracy (%) of the six oracles after an intervention on each "
            "parent, reversibility l1 after 1 and 10 cycles",
            ("intervention", "model"),
            ("floor hue", "object hue", "orientation", "scale", "shape", "wall hue", "rev l1 (1)", "rev l1 (10)"),
            _S5,
            ">>>>>><<",
        ),
        PaperTable(
            sound,
            "Table 6",
            "CelebA-HQ (conditional VDVAE, beta = 5, 3 seeds): soundness against the number of abducted latent layers",
            ("latents abducted",),
            (
                "smiling comp l1",
                "smiling rev l1",
                "smiling F1",
                "eyeglasses comp l1",
                "eyeglasses rev l1",
                "eyeglasses F1",
            ),
            _S6,
            "<<><<>",
        ),
        PaperTable(
            sound,
            "Table 7",
            "CelebA-HQ smiling, all 42 latents abducted, 3 seeds: the beta ablation",
            ("beta",),
            ("NLL bits/dim (bound)", "composition l1", "reversibility l1", "effectiveness F1"),
            _S7,
            "<<<>",
        ),
    ]


def _cit_lr_tables() -> list[PaperTable]:
    cit = "invariance-test"
    tables = [
        PaperTable(
            cit,
            "Table 2",
            "ROC-AUC per model, race and disease on CheXpert",
            ("model", "race"),
            _DISEASES,
            _C2,
            ">>>>>",
        ),
        PaperTable(
            cit,
            "Table 3",
            "ROC-AUC per model, race and disease on MIMIC-CXR",
            ("model", "race"),
            _DISEASES,
            _C3,
            ">>>>>",
        ),
        PaperTable(cit, "Table 7", "Composition l1 on CheXpert (images 224 x 224)", ("model",), _TO, _C7, "<<<"),
        PaperTable(cit, "Table 8", "Effectiveness accuracy (%) on CheXpert", ("model",), _TO, _C8, ">>>"),
        PaperTable(cit, "Table 9", "Composition l1 on MIMIC-CXR (images 224 x 224)", ("model",), _TO, _C9, "<<<"),
        PaperTable(cit, "Table 10", "Effectiveness accuracy (%) on MIMIC-CXR", ("model",), _TO, _C10, ">>>"),
        PaperTable(
            cit,
            "Table 11",
            "FID (Inception-v3) of the counterfactuals",
            ("model",),
            ("CheXpert", "MIMIC-CXR"),
            _C11,
            "<<",
        ),
    ]
    tp = tuple(f"{d} {s}" for d in _DISEASES for s in ("t", "p"))
    for name, rows, data in (("Table 12", _C12, "CheXpert"), ("Table 13", _C13, "MIMIC-CXR")):
        tables.append(
            PaperTable(
                cit,
                name,
                f"CIT-LR paired t-test (t and p) per classifier and disease on {data}",
                ("model",),
                tp,
                rows,
                " " * len(tp),
            )
        )
    return tables


def _registry() -> dict[tuple[str, str], PaperTable]:
    return {(t.paper, t.table): t for t in (*_benchmark_tables(), *_soundness_tables(), *_cit_lr_tables())}


#: Every paper table typed here, keyed by ``(paper, table)``.
PAPER_TABLES: dict[tuple[str, str], PaperTable] = _registry()


def paper_table(paper: str, table: str) -> PaperTable:
    """The registry's table ``table`` of ``paper``.

    Parameters
    ----------
    paper : str
        The paper's chapter, e.g. ``"counterfactual-benchmark"``.
    table : str
        E.g. ``"Table 3"``.

    Returns
    -------
    PaperTable
    """
    try:
        return PAPER_TABLES[(paper, table)]
    except KeyError:
        raise ValueError(f"(paper, table) must be one of {sorted(PAPER_TABLES)}, got {(paper, table)!r}") from None


def _paper_text(value: float) -> str:
    """A paper's number as it prints it: its own digits, no e-notation."""
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return np.format_float_positional(value, precision=6, unique=True, fractional=False, trim="-")


def _book_text(value: Any, kind: str) -> str:
    from ...claims import reader_number
    from ...formatting import format_pvalue

    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return MISSING
    if kind == "p":
        return format_pvalue(float(value))
    if kind == "count":
        return str(int(round(float(value))))
    return reader_number(value)


def _ranks(values: pd.Series, direction: str) -> pd.Series:
    numeric = pd.to_numeric(values, errors="coerce")
    return numeric.rank(ascending=direction == "<", method="min")


def _with_rank(text: str, rank: float) -> str:
    return text if text == MISSING or np.isnan(rank) else f"{text} ({int(rank)})"


def side_by_side(
    book: pd.DataFrame,
    paper: PaperTable | pd.DataFrame,
    *,
    rows: Mapping[Any, Any] | None = None,
    columns: Mapping[Any, str] | None = None,
    ranks: bool = False,
    layout: str = "columns",
    pvalues: Sequence[str] = (),
    counts: Sequence[str] = (),
) -> pd.DataFrame:
    """The paper's table and the book's, cell by cell: rows and columns matched by name.

    Parameters
    ----------
    book : pandas.DataFrame
        The book's numbers (strings are shown as they are).
    paper : PaperTable or pandas.DataFrame
        The paper's table (:func:`paper_table`) or its frame.
    rows : mapping, optional
        Book row label -> the paper's label for the same row (labels not in it are matched as they are).
    columns : mapping, optional
        Book column -> the paper's column name. When given, only these book columns and the paper's columns
        they match are shown.
    ranks : bool
        Add each row's rank within its column after the value, ``"0.44 (1)"``, in the paper and in the book
        separately, among the rows both have (1 = best; needs a :class:`PaperTable` with an order for the
        column): the comparison that survives when the scales differ.
    layout : {"columns", "rows"}
        ``"columns"``: columns ``(column, "paper" | "book")``; ``"rows"``: rows ``(row, "paper" | "book")``,
        for wide tables.
    pvalues, counts : sequence of str
        The paper's column names whose book values are p-values (``< 0.001`` or two significant figures)
        or counts (integers).

    Returns
    -------
    pandas.DataFrame
        Strings; :data:`MISSING` where the paper or the book has no value. Rows: the paper's in its order,
        then the book's other rows; columns likewise.
    """
    if not isinstance(book, pd.DataFrame):
        raise TypeError(f"book must be a pandas DataFrame, got {type(book).__name__}")
    if layout not in ("columns", "rows"):
        raise ValueError(f"layout must be 'columns' or 'rows', got {layout!r}")
    table = paper if isinstance(paper, PaperTable) else None
    pframe = paper.frame() if isinstance(paper, PaperTable) else paper
    if not isinstance(pframe, pd.DataFrame):
        raise TypeError(f"paper must be a PaperTable or a pandas DataFrame, got {type(paper).__name__}")
    if columns is not None:
        missing = [c for c in columns if c not in book.columns]
        if missing:
            raise ValueError(
                f"columns names book columns that do not exist: {missing}; the book has {list(book.columns)}"
            )
        book = book[list(columns)].set_axis([columns[c] for c in columns], axis=1)
    rows = dict(rows or {})
    book = book.set_axis([rows.get(r, r) for r in book.index], axis=0)
    row_order = list(pframe.index) + [r for r in book.index if r not in set(pframe.index)]
    col_order = [c for c in pframe.columns if columns is None or c in book.columns]
    col_order += [c for c in book.columns if c not in set(pframe.columns)]
    out: dict[tuple[str, str], list[str]] = {}
    for col in col_order:
        kind = "p" if col in pvalues else "count" if col in counts else ""
        p_vals = pframe[col].reindex(row_order) if col in pframe.columns else pd.Series(np.nan, index=row_order)
        b_vals = book[col].reindex(row_order) if col in book.columns else pd.Series(np.nan, index=row_order)
        p_text = [MISSING if pd.isna(v) else _paper_text(float(v)) for v in p_vals]
        b_text = [_book_text(v, kind) for v in b_vals]
        direction = table.direction(col) if table is not None and col in table.columns else " "
        if ranks and direction in "<>" and direction != " ":
            both = p_vals.notna() & pd.to_numeric(b_vals, errors="coerce").notna()
            p_rank, b_rank = _ranks(p_vals[both], direction), _ranks(b_vals[both], direction)
            p_text = [_with_rank(t, p_rank.get(r, np.nan)) for t, r in zip(p_text, row_order, strict=True)]
            b_text = [_with_rank(t, b_rank.get(r, np.nan)) for t, r in zip(b_text, row_order, strict=True)]
        out[(str(col), "paper")], out[(str(col), "book")] = p_text, b_text
    index = (
        pd.MultiIndex.from_tuples(row_order) if any(isinstance(r, tuple) for r in row_order) else pd.Index(row_order)
    )
    index.names = list(pframe.index.names) if len(index.names) == pframe.index.nlevels else index.names
    frame = pd.DataFrame(out, index=index)
    frame = frame[~(frame == MISSING).all(axis=1)]  # a row neither table has (e.g. a model one dataset lacks)
    frame.columns = pd.MultiIndex.from_tuples(frame.columns, names=["", "source"])
    if layout == "rows":
        frame = frame.stack(level="source", future_stack=True).reindex(columns=[str(c) for c in col_order])
        frame = frame.reindex(["paper", "book"], level="source")
    return frame


def show_side_by_side(frame: pd.DataFrame, caption: str) -> Any:
    """A :func:`side_by_side` frame with its caption (the scale, the data, any substitute) for a notebook.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`side_by_side`.
    caption : str
        What the reader needs to compare the columns: the paper's scale and data, the book's, substitutes.

    Returns
    -------
    pandas.io.formats.style.Styler
        The frame with the caption and a note on :data:`MISSING`.
    """
    if not isinstance(caption, str) or not caption.strip():
        raise ValueError("caption must name the scale and the data of both tables, got an empty caption")
    note = f" {MISSING}: no value in that table." if (frame == MISSING).to_numpy().any() else ""
    return frame.style.set_caption(caption + note)
