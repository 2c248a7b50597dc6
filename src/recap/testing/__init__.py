"""Test doubles shipped with recap: a real loopback model server with scripted faults.

(The scripted in-process model is :class:`recap.llm.FakeModel`.)
"""
