"""Mutation testing of a chapter's theory: how much of it do the claims test?

``operators`` defines the mutations (cosmic-ray's operators where they fit, plus
formula operators); ``sites`` enumerates the mutants of a chapter's ``theory.py``;
``replay`` reruns the chapter's claims in-process against each mutant, reusing
the measured side of one run; ``report`` runs it all on Dask and writes the
stored report.
"""
