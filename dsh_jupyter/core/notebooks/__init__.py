"""Notebooks as cells (parse, validate, change sources) and the seam to notebooks open in Jupyter."""
