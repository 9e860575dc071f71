"""``hermes gateway run`` (start the enabled platforms; SIGTERM, SIGHUP or Ctrl-C finishes the
accepted turns, then exits) and ``hermes gateway status``."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import TYPE_CHECKING, Any

import click
from hermes_agent.kits.cli import ListingGroup

from .state import StateFile

if TYPE_CHECKING:
    from hermes_agent import Kernel

# A closed terminal (SIGHUP) stops the gateway as SIGTERM and Ctrl-C do: accepted turns finish
# and every command's process group is ended, instead of the process dying mid-turn.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@click.group(cls=ListingGroup)
def gateway() -> None:
    """Run the chat gateway, show its status or stop it."""


@gateway.command()
@click.option("--drain-timeout", type=float, default=120.0, show_default=True,
              help="Seconds to let accepted turns finish after SIGTERM.")
def run(drain_timeout: float) -> None:
    """Start every enabled platform adapter and answer their chats until SIGTERM."""
    from hermes_agent.kits.cli import cli_kernel

    from .platforms import build_adapters

    kernel = cli_kernel()
    adapters, entries, problems = build_adapters(kernel)
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if not adapters and problems:
        raise click.ClickException("no enabled platform could start; fix the warnings above")
    if not adapters:
        installed = ", ".join(kernel.slots.installed("platform")) or "none"
        raise click.ClickException(
            "no platform is enabled: set platforms.<name>.enabled: true in config.yaml (or "
            f"<NAME>_ENABLED=true) for one of the installed platforms ({installed})")
    asyncio.run(_serve(kernel, adapters, entries, drain_timeout))


async def _serve(kernel: Kernel, adapters: dict[str, Any], entries: dict[str, Any],
                 drain_timeout: float) -> None:
    from .runner import GatewayRunner

    from hermes_agent import HermesError

    try:  # with the postgres store this reaches the database (the replicas' shared queue)
        runner = GatewayRunner(kernel, adapters, entries=entries)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    try:
        connected = await runner.start()
    except HermesError as exc:  # e.g. a gateway.workers process that could not boot
        await runner.stop(0)
        raise click.ClickException(str(exc)) from None
    if not connected:
        await runner.stop(0)
        raise click.ClickException("no platform connected; see the warnings above")
    click.echo(f"gateway running (pid {__import__('os').getpid()}): {', '.join(connected)}",
               err=True)
    for name in connected:
        url = getattr(runner.adapters.get(name), "listen_url", None)
        if url:
            click.echo(f"{name} listening on {url}", err=True)
    scheduler = _start_scheduler(kernel, runner)
    await stop.wait()
    click.echo("gateway stopping: finishing accepted turns...", err=True)
    if scheduler is not None:  # first: a job's run is interrupted and recorded, later ones wait
        scheduler[0].set()
        await scheduler[1]
    await runner.stop(drain_timeout)


def _start_scheduler(kernel: Kernel, runner: Any) -> tuple[asyncio.Event, asyncio.Task[None]] | None:
    """The scheduled jobs' loop beside the platforms (the ``cron`` service), so a job can
    deliver to a chat; None when the cron plugin is off or ``gateway.run_cron`` is false.
    Replicas on a shared queue run each occurrence of a job they all have once."""
    from hermes_agent import ServiceError
    from hermes_agent.api import CRON

    if not kernel.config.get("gateway.run_cron", True):
        return None
    try:
        cron = kernel.service(CRON)
    except ServiceError:
        return None
    stop = asyncio.Event()
    replica = runner.replica
    guard = (None if replica is None else
             lambda occurrence: replica.queue.claim_occurrence(replica.name, occurrence))
    task = asyncio.get_running_loop().create_task(
        cron.serve(stop, label="gateway", occurrence_guard=guard))
    return stop, task


@gateway.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """The running gateway's pid, platforms, chats and queue depth; with a shared queue
    (the postgres session store), every live replica too."""
    from hermes_agent.kits.cli import cli_kernel

    kernel = cli_kernel()
    state = StateFile(kernel.home).read()
    shared = _shared_status(kernel)
    if as_json:
        click.echo(json.dumps({"running": state is not None, **(state or {}),
                               **({"shared": shared} if shared else {})}, indent=2))
        return
    if state is None and not (shared and shared["replicas"]):
        raise click.ClickException("the gateway is not running; start it with "
                                   "`hermes gateway run`")
    if state is not None:
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(state.get("started_at", 0)))
        click.echo(f"gateway running, pid {state['pid']}, since {since}\n"
                   f"platforms: {', '.join(state.get('platforms', [])) or 'none'}\n"
                   f"chats: {state.get('chats', 0)}; turns running: "
                   f"{state.get('turns_running', 0)}; queue depth: {state.get('queue_depth', 0)}")
        if state.get("workers"):
            click.echo(f"turns run in {len(state['workers'])} worker process(es): pids "
                       f"{', '.join(str(p) for p in state['workers'])}")
        for name, reason in (state.get("failed_platforms") or {}).items():
            click.echo(f"stopped: {name}: {reason}")
    if shared:
        click.echo(f"shared queue: {shared['queue_depth']} message(s) waiting; "
                   f"{len(shared['replicas'])} replica(s) alive")
        for r in shared["replicas"]:
            receiving = (f" (receives {', '.join(r['receiving'])})"
                         if r.get("receiving") else "")
            click.echo(f"  {r['replica']}: platforms {', '.join(r.get('platforms', [])) or '-'}"
                       f"{receiving}; chats {r.get('chats', 0)}; turns running "
                       f"{r.get('turns_running', 0)}; seen {r['seen_seconds_ago']} s ago")


def _shared_status(kernel: Kernel) -> dict[str, Any] | None:
    """The replicas alive and the shared queue's depth, when the session store shares one."""
    from hermes_agent.api import SharedQueueStore, session_store

    if not kernel.config.get("gateway.shared_queue", True):
        return None
    store = session_store(kernel)
    if not isinstance(store, SharedQueueStore):
        return None
    queue = store.gateway_queue()
    ttl = float(kernel.config.get("gateway.lease_seconds", 15.0))
    try:
        return {"replicas": queue.replicas(max_age=3 * ttl), "queue_depth": queue.depth()}
    finally:
        queue.close()


@gateway.command()
def stop() -> None:
    """Ask the running gateway to stop (SIGTERM): it finishes accepted turns, then exits."""
    import os

    from hermes_agent.kits.cli import cli_kernel

    state = StateFile(cli_kernel().home).read()
    if state is None:
        raise click.ClickException("the gateway is not running")
    os.kill(int(state["pid"]), signal.SIGTERM)
    click.echo(f"asked the gateway (pid {state['pid']}) to stop; it finishes accepted turns "
               "first")
