"""``python -m anonlab`` runs the command line."""

from anonlab.cli import main

main()
