"""``-s bmrm``: BMRM / SVMperf, the plain cutting-plane method, as a member of the ocas family.

C. H. Teo, S. V. N. Vishwanathan, A. J. Smola, Q. V. Le, "Bundle methods for
regularized risk minimization", JMLR 11, 2010 (and T. Joachims, "Training
linear SVMs in linear time", KDD 2006, which is the same method on the SVM):
minimise J(w) = lambda/2 |w|^2 + R_emp(w), R_emp the mean hinge loss, by
adding at each iterate w_t the cut R_emp(w) >= <a_t, w> + b_t (a_t a
subgradient at w_t) and taking as w_{t+1} the minimiser of lambda/2 |w|^2
plus the maximum of the cuts, found in the dual over the simplex.

The loop is ``-s ocas --ocas-method cp``'s (:func:`svmtrain.solvers.ocas.ocas.solve`:
the same cuts, reduced QP and cut buffer, no line search, the next cut at
the reduced problem's minimiser, the best iterate kept). What makes it
BMRM is the stopping rule of the paper's Algorithm 1: stop when

    eps_t = min_{i <= t} J(w_i) - J_t(w_t) <= eps    (-e, default 1e-3)

with J_t the cutting-plane model, an absolute gap in the lambda form (ocas
stops on a gap relative to its C-form objective). ocas's C-form gap is
n C times this one, so the rule reaches ocas as its absolute tolerance
(svmocas's TolAbs) with the relative one off.
"""
import dataclasses

from . import ocas

DEFAULT_EPS = 1e-3
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary linear SVM (hinge) by BMRM; the returned objective is J of the best iterate.

    Guarantees: when it converged, J(w) - min J <= eps (the model's J_t is a lower bound on min J).
    """
    n = X.n_rows
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    run = dataclasses.replace(params, ocas_method="cp", eps=0.0, tol_abs=eps * n * params.resolved_C(n))
    result = ocas.fit(X, y, n_features, run, progress=progress, log=log, class_cost=class_cost, monitor=monitor)
    result.info["bmrm_gap"] = (result.info["Q_P"] - result.info["Q_D"]) / (n * params.resolved_C(n))
    return result
