"""Test doubles shipped with recap, under one roof: the scripted in-process model
(:class:`FakeModel`), a real loopback model server with scripted faults
(:class:`ModelServer`) and a clock moved by hand (:class:`ManualClock`)."""

from recap_memory.llm.fake import FakeModel
from recap_memory.testing.clock import ManualClock
from recap_memory.testing.model_server import Die, Garbage, Hang, ModelServer, Reply, Status

__all__ = ["Die", "FakeModel", "Garbage", "Hang", "ManualClock", "ModelServer", "Reply", "Status"]
