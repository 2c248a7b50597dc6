"""Lease owners as ``host:pid:start``: a restarted process takes back at once the leases its
dead predecessor on this machine held, never a live process's or another host's."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

from recap_memory.store.owners import is_orphaned, lease_owner
from tests.service.conftest import App, running_app, turn


def _owner_of_a_finished_process() -> str:
    printed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from recap_memory.store.owners import lease_owner as o; print(o())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return printed.stdout.strip()


def test_an_owner_is_orphaned_only_when_its_process_on_this_host_is_gone() -> None:
    host, pid, start = lease_owner().split(":")
    assert int(pid) == os.getpid() and start.isdigit()
    assert not is_orphaned(lease_owner())
    assert is_orphaned(_owner_of_a_finished_process())
    assert is_orphaned(f"{host}:{pid}:{int(start) - 1}"), "a reused pid is another process"
    assert not is_orphaned(f"elsewhere-{host}:999999:1"), "another host's lease is never judged"
    assert not is_orphaned("recap-1a2b3c4d")  # an owner of another form


async def _leased(app: App, owner: str) -> str:
    session = await app.session()
    for n in range(12):
        await app.append(session, *turn(n))
    await app.state.store.claim("default", session, owner, dt.timedelta(hours=1))
    return session


async def test_a_starting_service_takes_back_its_dead_predecessors_leases(
    database_url: str,
) -> None:
    dead, foreign = _owner_of_a_finished_process(), "another-host:1:1"
    async for app in running_app(database_url, embedded_worker=False):
        orphan = await _leased(app, dead)
        held = await _leased(app, foreign)
        mine = await _leased(app, lease_owner())
    async for app in running_app(database_url, embedded_worker=False):  # the restart
        states = {s: (await app.client.get(f"/sessions/{s}")).json() for s in (orphan, held, mine)}
        assert not states[orphan]["compacting"], "the dead predecessor's lease was freed"
        assert states[held]["compacting"] and states[mine]["compacting"]
        compacted = await app.client.post(f"/sessions/{orphan}/compact")
        assert compacted.status_code == 200, compacted.text
        assert (await app.client.post(f"/sessions/{held}/compact")).status_code == 409
