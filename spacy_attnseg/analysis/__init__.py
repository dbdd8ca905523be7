"""Corpus statistics and figures of Halevi et al. (2026), computed on NumPy arrays."""
