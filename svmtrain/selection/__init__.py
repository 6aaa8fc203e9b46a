"""Model selection: LIBLINEAR's -C path (:mod:`.param_search`) and grid.py's C x gamma grid (:mod:`.grid_search`)."""
