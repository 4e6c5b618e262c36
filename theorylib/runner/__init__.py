"""The machinery that runs the book's notebooks; no chapter imports it.

``registry`` finds the chapters and enforces their one name; ``execute`` runs
notebooks (papermill, nbclient) and keeps the text twins in sync; ``rerun`` is
the one rerun used by ``run`` and ``sweep``; ``records`` reads claims back;
``environment`` records where outputs were made; ``verification`` builds the
Verification page; ``scaffold`` writes a new chapter; ``cli`` and ``sweep`` are
the command line.
"""
