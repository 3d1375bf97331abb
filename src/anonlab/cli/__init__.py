"""The ``anonlab`` command line (Typer + Rich)."""

from anonlab.cli.app import app, main

__all__ = ["app", "main"]
