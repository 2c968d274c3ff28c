"""Analytic performance models of published algorithms, for studies to compare simulations against."""
