"""``python -m recap_memory`` runs the command line."""

from recap_memory.cli import main

if __name__ == "__main__":  # not when a process pool's child imports this module
    main()
