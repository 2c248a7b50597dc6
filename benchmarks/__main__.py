"""``python -m benchmarks COMMAND``: see :mod:`benchmarks.commands`."""

from benchmarks.commands import app

app()
