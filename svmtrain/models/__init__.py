"""Trained models: linear (:mod:`.linear`), kernel expansions (:mod:`.kernel`) and Platt probabilities (:mod:`.probability`)."""
