"""API keys: every route but /healthz needs one; a tenant never sees another's sessions."""

from __future__ import annotations

from recap_memory.service.settings import ServiceSettings
from tests.service.conftest import running_app, turn

KEYS = "key-a:alpha,key-b:beta"


async def test_tenants_are_isolated(database_url: str) -> None:
    async for app in running_app(database_url, api_keys=KEYS):
        client = app.client
        alpha = {"Authorization": "Bearer key-a"}
        beta = {"Authorization": "Bearer key-b"}
        assert (await client.get("/healthz")).status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "key-a"}):
            denied = await client.get("/sessions", headers=headers)
            assert denied.status_code == 401
            assert denied.json()["error"]["code"] == "unauthorized"
        created = await client.post("/sessions", headers=alpha, json={})
        session = created.json()["id"]
        await client.post(
            f"/sessions/{session}/messages", headers=alpha, json={"messages": turn(1)}
        )
        assert (await client.get("/sessions", headers=beta)).json()["total"] == 0
        for method, path in [
            ("GET", f"/sessions/{session}"),
            ("GET", f"/sessions/{session}/messages"),
            ("GET", f"/sessions/{session}/context"),
            ("GET", f"/sessions/{session}/summaries"),
            ("POST", f"/sessions/{session}/compact"),
            ("DELETE", f"/sessions/{session}"),
        ]:
            response = await client.request(method, path, headers=beta)
            assert response.status_code == 404, (method, path)
        appended = await client.post(
            f"/sessions/{session}/messages", headers=beta, json={"messages": turn(2)}
        )
        assert appended.status_code == 404
        mine = (await client.get(f"/sessions/{session}", headers=alpha)).json()
        assert mine["message_count"] == 2
        assert (await client.get("/stats", headers=beta)).json()["summary"]["total_sessions"] == 0


def test_without_keys_only_loopback_may_be_bound() -> None:
    import pytest

    from recap_memory.errors import ConfigurationError

    open_settings = ServiceSettings()
    open_settings.check_bind("127.0.0.1")
    open_settings.check_bind("::1")
    with pytest.raises(ConfigurationError, match="RECAP_API_KEYS"):
        open_settings.check_bind("0.0.0.0")
    ServiceSettings(api_keys="k:t").check_bind("0.0.0.0")
    with pytest.raises(ConfigurationError, match="KEY:TENANT"):
        ServiceSettings(api_keys="just-a-key").tenants()
