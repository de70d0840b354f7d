"""The experiments' figures and tables: per family, the points each needs, its rows, checks and plot."""
