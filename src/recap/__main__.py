"""``python -m recap`` runs the command line."""

from recap.cli import main

main()
