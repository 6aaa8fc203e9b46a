"""Training and prediction on a Dask cluster (``--engine dask``; optional:
``pip install 'svmtrain[dask]'``).

Modules: ``engine`` (connecting, a run's rounds of tasks, worker losses,
traffic counts), ``partitions`` (partitioned input; partitions kept in
worker memory), ``linesearch`` (OCAS's exact line search as rounds of O(1)
summaries), ``ocas``, ``ocas_scores``, ``bmrm``, ``pegasos`` and ``sgd`` (the
distributed solvers; ``sgd`` by iterative parameter mixing), ``training``
(one-vs-rest and the model), ``predict``, ``cli``. Nothing here imports
Dask until a cluster is used, so ``import svmtrain`` works without it.
"""
