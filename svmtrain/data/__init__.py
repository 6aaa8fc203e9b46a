"""Training data in memory and out of it.

* :mod:`.dataset`: :class:`~.dataset.Chunk`, rows in CSR arrays, and row selection;
* :mod:`.chunk_source`: data in memory or streamed, behind one interface;
* :mod:`.arrays`: NumPy arrays and SciPy matrices as Chunks;
* :mod:`.queries`: the ``qid:`` groups of ranking data and their pair counts.
"""
