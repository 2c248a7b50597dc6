"""An OpenAI-compatible front for any ``/v1`` model server: chat completions through the
compacted context (a stored session, or the request's own history), and compaction as
an endpoint."""
