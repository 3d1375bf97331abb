"""Algorithms that produce a transformation of a table (global recoding, ...)."""
