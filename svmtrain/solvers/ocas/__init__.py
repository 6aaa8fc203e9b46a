"""Cutting-plane solvers: OCAS (classification, logistic, regression, ranking, Crammer-Singer, streamed) and BMRM."""
