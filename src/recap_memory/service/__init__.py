"""The memory service: FastAPI app, background compaction, events, stats."""

from recap_memory.service.app import build_state, create_app
from recap_memory.service.settings import ServiceSettings, load_service_settings

__all__ = ["ServiceSettings", "build_state", "create_app", "load_service_settings"]
