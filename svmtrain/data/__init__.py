"""Training data in memory and out of it.

* :mod:`.dataset`: :class:`~.dataset.Chunk`, rows in CSR arrays, and row selection;
* :mod:`.chunk_source`: data in memory or streamed, behind one interface;
* :mod:`.streaming`: out-of-core training (``--stream``): memory plans,
  spooling, the streamed solvers' driver.
"""
