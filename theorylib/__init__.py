"""theorylib: the support package of *ICML 2026 Theory, Executed*.

``theorylib.core`` holds what every chapter uses; one module per chapter topic
holds that chapter's reusable, unit-tested computation.
"""

__version__ = "0.1.0"
