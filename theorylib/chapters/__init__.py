"""The chapters: one package per chapter, ``theorylib/chapters/<a_b_c>/`` for the slug ``a-b-c``.

A package's ``__init__.py`` declares ``CHAPTER = Chapter(...)`` and stays cheap to
import (no torch, no scipy). Its modules have fixed roles, the same in every chapter:

* ``theory.py``: the derived formulas, predictions and the named wrong theories
  (``wrong_...``); pure functions, no random numbers;
* ``model.py`` (and, where a chapter needs more, ``model_*.py``): the samplers,
  learners, oracles and simulations that produce every *measured* value; it never
  imports ``theory``, so a mutation of the theory cannot move a measurement;
* ``claims.py``: one function per claim, ``claim_x(name, data, ..., theory=...)``,
  which compares the measured data with the prediction and returns a ``Claim``.
"""
