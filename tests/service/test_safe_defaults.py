"""Safe by default on one machine: without API keys the service answers loopback host names
only (DNS rebinding), takes writes as JSON and from programs or its own pages only
(cross-site requests), sends no CORS headers unless origins are configured, and keeps
``/metrics`` for the admin once keys are set."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.processes import serving
from recap_memory.errors import ConfigurationError
from recap_memory.service import load_service_settings
from tests.service.conftest import LOOPBACK_URL, App, running_app
from tests.service.processes import recap_env

KEYS = "key-a:alpha,key-b:beta"
ALPHA = {"Authorization": "Bearer key-a"}
ADMIN = {"Authorization": "Bearer the-admin"}
EVIL = "http://attacker.example:8000"


async def _app(tmp_path: Path, **settings: Any) -> AsyncIterator[App]:
    async for app in running_app(f"sqlite:///{tmp_path / 'recap.db'}", **settings):
        yield app


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[App]:
    """The app as ``recap serve`` runs it by default: no API keys."""
    async for app in _app(tmp_path):
        yield app


async def _count(app: App, headers: dict[str, str] | None = None) -> int:
    listed = await app.client.get("/sessions", headers=headers or {})
    assert listed.status_code == 200, listed.text
    return int(listed.json()["total"])


# Host: DNS rebinding ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["attacker.example:8000", "attacker.example", "127.0.0.1.nip.io", "10.0.0.5", ""]
)
async def test_without_keys_a_request_for_another_host_name_is_refused(
    local: App, host: str
) -> None:
    await local.session(title="private")
    response = await local.client.get("/sessions", headers={"host": host})
    assert response.status_code == 421, response.text
    error = response.json()["error"]
    assert error["code"] == "host_not_allowed"
    for advice in ("loopback", "RECAP_ALLOWED_HOSTS", "RECAP_API_KEYS"):
        assert advice in error["message"], error
    assert "private" not in response.text


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8000", "localhost", "LOCALHOST:1234", "127.0.0.2", "[::1]:8000"]
)
async def test_without_keys_loopback_names_are_answered(local: App, host: str) -> None:
    assert (await local.client.get("/sessions", headers={"host": host})).status_code == 200


async def test_allowed_hosts_add_names_beside_loopback(tmp_path: Path) -> None:
    async for app in _app(tmp_path, allowed_hosts="recap.internal, Box.Lan"):
        for host in ("recap.internal:8443", "box.lan", "localhost:8000"):
            response = await app.client.get("/sessions", headers={"host": host})
            assert response.status_code == 200, host
        assert (await app.client.get("/sessions", headers={"host": "evil.lan"})).status_code == 421


async def test_with_keys_any_host_unless_an_allow_list_is_set(tmp_path: Path) -> None:
    async for app in _app(tmp_path, api_keys=KEYS):
        other = await app.client.get("/sessions", headers={**ALPHA, "host": "recap.example.com"})
        assert other.status_code == 200, other.text
    async for app in _app(tmp_path, api_keys=KEYS, allowed_hosts="recap.example.com"):
        allowed = await app.client.get("/sessions", headers={**ALPHA, "host": "recap.example.com"})
        assert allowed.status_code == 200
        refused = await app.client.get("/sessions", headers={**ALPHA, "host": "evil.example"})
        assert refused.status_code == 421


# writes: JSON only, no cross-site requests ---------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
async def test_a_write_with_a_body_that_is_not_json_is_refused_with_415(
    local: App, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = await local.client.post("/sessions", content=b'{"title": "x"}', headers=headers)
    assert response.status_code == 415, response.text
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type"
    assert "Content-Type: application/json" in error["message"]
    assert (content_type or "missing") in error["message"]
    assert await _count(local) == 0, "nothing was created"


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "application/ld+json"]
)
async def test_json_bodies_and_body_less_writes_go_through(local: App, content_type: str) -> None:
    created = await local.client.post(
        "/sessions", content=b'{"title": "x"}', headers={"content-type": content_type}
    )
    assert created.status_code == 201, created.text
    session = created.json()["id"]
    # a program's body-less writes need no content type
    assert (await local.client.post(f"/sessions/{session}/compact")).status_code < 300
    assert (await local.client.delete(f"/sessions/{session}")).status_code == 204


async def test_without_keys_a_cross_site_write_is_refused(local: App) -> None:
    session = await local.session(title="mine")
    for method, path in [
        ("POST", "/sessions"),  # body-less: a browser sends it cross-site without asking
        ("POST", f"/sessions/{session}/compact"),
        ("DELETE", f"/sessions/{session}"),
    ]:
        response = await local.client.request(method, path, headers={"origin": EVIL})
        assert response.status_code == 403, (method, path, response.text)
        error = response.json()["error"]
        assert error["code"] == "cross_origin_write"
        assert EVIL in error["message"] and "RECAP_CORS_ORIGINS" in error["message"]
    for origin in ("null", "http://localhost:3000", "http://127.0.0.1:9999"):
        refused = await local.client.post("/sessions", headers={"origin": origin})
        assert refused.status_code == 403, origin
    assert await _count(local) == 1 and (await local.client.get(f"/sessions/{session}")).is_success
    # reading is not a write: same-origin policy keeps the answer from the page
    assert (await local.client.get("/sessions", headers={"origin": EVIL})).status_code == 200


async def test_the_service_s_own_pages_and_configured_origins_may_write(tmp_path: Path) -> None:
    async for app in _app(tmp_path, cors_origins="https://app.example"):
        own = await app.client.post("/sessions", json={}, headers={"origin": LOOPBACK_URL})
        assert own.status_code == 201, own.text
        listed = await app.client.post(
            "/sessions", json={}, headers={"origin": "https://app.example"}
        )
        assert listed.status_code == 201, listed.text


async def test_with_keys_the_origin_is_left_to_cors(tmp_path: Path) -> None:
    """A browser cannot send the bearer key cross-site without a preflight CORS refuses."""
    async for app in _app(tmp_path, api_keys=KEYS):
        created = await app.client.post("/sessions", json={}, headers={**ALPHA, "origin": EVIL})
        assert created.status_code == 201, created.text
        plain = await app.client.post(
            "/sessions", content=b"{}", headers={**ALPHA, "content-type": "text/plain"}
        )
        assert plain.status_code == 415


def test_a_real_server_refuses_rebinding_and_cross_site_requests(tmp_path: Path) -> None:
    """The attacks as a browser would send them, over HTTP to ``recap serve``; then the
    console's own requests (same origin: a body-less compact, a delete) still work."""
    env = recap_env(RECAP_DATABASE_URL=f"sqlite:///{tmp_path / 'recap.db'}")
    with serving(env, tmp_path / "serve.log", cwd=tmp_path) as (url, _):
        port = url.rsplit(":", 1)[1]
        with httpx.Client(base_url=url, timeout=10) as client:
            session = client.post("/sessions", json={"title": "secret"}).json()["id"]
            rebound = client.get("/sessions", headers={"host": f"attacker.example:{port}"})
            assert rebound.status_code == 421 and "secret" not in rebound.text
            simple = client.post(
                "/sessions",
                content=b'{"title": "forged"}',
                headers={"content-type": "text/plain", "origin": EVIL},
            )
            assert simple.status_code == 403
            form = client.post("/sessions", content=b"title=forged")  # no Origin: curl
            assert form.status_code == 415
            assert client.get("/sessions").json()["total"] == 1
            console = {"origin": url}
            assert client.post(f"/sessions/{session}/compact", headers=console).is_success
            assert client.delete(f"/sessions/{session}", headers=console).status_code == 204


# CORS ----------------------------------------------------------------------------------------


def _preflight(origin: str) -> dict[str, str]:
    return {
        "origin": origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }


async def test_no_cors_headers_unless_origins_are_configured(local: App) -> None:
    preflight = await local.client.options("/sessions", headers=_preflight("https://app.example"))
    assert "access-control-allow-origin" not in preflight.headers
    read = await local.client.get("/sessions", headers={"origin": "https://app.example"})
    assert "access-control-allow-origin" not in read.headers


async def test_cors_origins_are_allowed_and_no_others(tmp_path: Path) -> None:
    async for app in _app(tmp_path, cors_origins="https://app.example, http://localhost:5173"):
        for origin in ("https://app.example", "http://localhost:5173"):
            preflight = await app.client.options("/sessions", headers=_preflight(origin))
            assert preflight.status_code == 200, preflight.text
            assert preflight.headers["access-control-allow-origin"] == origin
            assert "POST" in preflight.headers["access-control-allow-methods"]
            read = await app.client.get("/sessions", headers={"origin": origin})
            assert read.headers["access-control-allow-origin"] == origin
        other = await app.client.options("/sessions", headers=_preflight(EVIL))
        assert "access-control-allow-origin" not in other.headers


@pytest.mark.parametrize("value", ["app.example", "https://app.example/path", "*", "ftp://x"])
def test_a_malformed_cors_origin_is_one_line_naming_the_setting(value: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        load_service_settings(cors_origins=value)
    assert "scheme://host[:port]" in str(caught.value) and "\n" not in str(caught.value)


# /metrics and the routes without a key -------------------------------------------------------


async def test_metrics_are_open_without_keys(local: App) -> None:
    assert (await local.client.get("/metrics")).status_code == 200


async def test_with_keys_metrics_need_the_admin_key(tmp_path: Path) -> None:
    async for app in _app(tmp_path, api_keys=KEYS):
        refused = await app.client.get("/metrics", headers=ALPHA)
        assert refused.status_code == 403, refused.text
        assert "RECAP_ADMIN_KEY" in refused.json()["error"]["message"]
    async for app in _app(tmp_path, api_keys=KEYS, admin_key="the-admin"):
        for headers in ({}, ALPHA, {"Authorization": "Bearer wrong"}):
            denied = await app.client.get("/metrics", headers=headers)
            assert denied.status_code == 401, headers
            assert "RECAP_ADMIN_KEY" in denied.json()["error"]["message"]
        metrics = await app.client.get("/metrics", headers=ADMIN)
        assert metrics.status_code == 200 and "recap_http_request_seconds" in metrics.text
        # the admin key is not a tenant's
        assert (await app.client.get("/sessions", headers=ADMIN)).status_code == 401


def test_the_admin_key_may_not_be_a_tenant_s_key() -> None:
    with pytest.raises(ConfigurationError, match="RECAP_ADMIN_KEY"):
        load_service_settings(api_keys=KEYS, admin_key="key-a").tenants()


async def test_with_keys_only_probes_docs_and_the_console_s_files_need_no_key(
    tmp_path: Path,
) -> None:
    async for app in _app(tmp_path, api_keys=KEYS, admin_key="the-admin"):
        for path in ("/healthz", "/readyz", "/docs", "/redoc", "/openapi.json", "/"):
            assert (await app.client.get(path)).status_code == 200, path
        assert (await app.client.get("/static/app.js")).status_code == 200
        for path in ("/sessions", "/stats", "/stats/compactions", "/config", "/metrics"):
            assert (await app.client.get(path)).status_code == 401, path
