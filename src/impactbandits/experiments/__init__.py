"""Experiments: specs (``spec``), cells and tasks (``cells``), the runner (``runner``), the store
(``store``), tidy tables (``tidy``), plots (``plots``), reports (``report``) and the figure
registry (``figures``, with one module per paper under ``papers``).

Import the submodules directly; this package imports nothing heavy by itself.
"""
