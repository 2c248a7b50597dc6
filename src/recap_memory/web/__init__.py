"""The browser console: static files (HTML, CSS, a little JavaScript) served by ``recap serve``.

No front-end build: the files (ES modules, one job each) ship inside the package and
talk to the HTTP API like any other client (events over SSE, the API key when one is
needed).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


def mount_console(app: FastAPI) -> None:
    """Serve the console at ``/`` and its files under ``/static``."""
    # browsers run ES modules only when served as JavaScript; some systems map .js otherwise
    mimetypes.add_type("text/javascript", ".js")
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def console() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})
