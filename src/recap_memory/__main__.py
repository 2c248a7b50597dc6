"""``python -m recap_memory`` runs the command line."""

from recap_memory.cli import main

main()
