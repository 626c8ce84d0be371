"""The `tessera` command: run, migrate, create-admin, plugins, and commands plugins add."""
from __future__ import annotations

import logging
import sys

import click

from .config import load_config


@click.group()
def cli():
    """Tessera, a business-intelligence server with a Metabase-compatible API."""


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, envvar="TESSERA_HOST",
              help="Address to listen on (TESSERA_HOST); 0.0.0.0 opens it to the network.")
@click.option("--port", default=3000, show_default=True, type=int, envvar="TESSERA_PORT",
              help="Port to listen on (TESSERA_PORT).")
@click.option("--workers", default=2, show_default=True, type=int)
@click.option("--threads", default=8, show_default=True, type=int)
@click.option("--dev", is_flag=True, help="Flask's development server with the reloader.")
def run(host: str, port: int, workers: int, threads: int, dev: bool):
    """Serve the API (gunicorn with gthread workers)."""
    import os

    from .app import create_app

    # A first start shows the Sample Database, as Metabase's does; TESSERA_LOAD_SAMPLE_DATABASE=false opts out.
    app = create_app({} if "TESSERA_LOAD_SAMPLE_DATABASE" in os.environ else {"TESSERA_LOAD_SAMPLE_DATABASE": True})
    click.echo(startup_line(app))
    _print_setup_url(app, host, port)
    from core.schedule import service as scheduler

    if dev:
        if os.environ.get("WERKZEUG_RUN_MAIN") == "true":  # the reloader's child serves; its parent only watches
            if scheduler.mode(app.config) == "inprocess":
                scheduler.start_background(app)
        app.run(host=host, port=port, debug=True, use_reloader=True)
        return
    from .server import serve

    # One scheduler process per instance, started (and restarted) and stopped with the server (core.schedule.service).
    supervisor = scheduler.supervise(app)
    try:
        serve(app, host=host, port=port, workers=workers, threads=threads)
    finally:
        scheduler.stop(supervisor)


def startup_line(app) -> str:
    """What this process runs with, in one line: each driver's optional accelerations (on or off), the
    plugins and the drivers loaded. Also logged, so /api/util/logs shows it."""
    from .plugins import collect

    state = app.extensions["tessera"]
    driver_plugins = {c.plugin for c in collect(state.pm, "register_drivers")}
    plugins = [name.removeprefix("plugins.") for name, _ in state.pm.list_name_plugin()
               if not name.startswith("core.") and name not in driver_plugins]
    accelerations = [f"{engine} {name} {'on' if used else 'off'}"
                     for engine, driver in state.drivers.items() for name, used in driver.accelerations().items()]
    line = (f"Tessera {state.version['tessera']}: accelerations: {', '.join(accelerations) or 'none'}; "
            f"plugins ({len(plugins)}): {', '.join(plugins)}; drivers ({len(state.drivers)}): {', '.join(sorted(state.drivers))}")
    logging.getLogger("tessera").info(line)
    return line


def _print_setup_url(app, host: str, port: int) -> None:
    from core.appdb.models import Setting
    from core.identity.users import has_users

    with app.extensions["tessera"].db.session() as session:
        shown = "localhost" if host in ("0.0.0.0", "127.0.0.1", "::") else host
        if not has_users(session):
            row = session.get(Setting, "setup-token")
            click.echo(f"Tessera is not set up yet. Setup token: {row.value.strip(chr(34)) if row else '?'}")
            click.echo(f"Set it up at http://{shown}:{port}/ (POST /api/setup with that token)")
        else:
            click.echo(f"Tessera is running at http://{shown}:{port}/")


@cli.command()
def migrate():
    """Apply the app-DB migrations."""
    from core.appdb.db import AppDatabase
    from core.assembly.plugins import migrate_app_db

    config = load_config()
    migrate_app_db(AppDatabase(config["TESSERA_DB_URL"]), config)
    click.echo("app database is up to date")


@cli.command()
@click.option("--parent", type=int, default=None, hidden=True,
              help="Stop when this process is gone (the scheduler process a server starts).")
def worker(parent: int | None):
    """Run the scheduled jobs (syncs, model refreshes, subscriptions, housekeeping) in this process.

    Any number of workers and in-process schedulers may share one PostgreSQL app DB: each occurrence
    runs once. Serve with TESSERA_SCHEDULER=off to leave every job to the workers."""
    from core.schedule.service import run_blocking

    from .app import create_app

    app = create_app()
    click.echo(f"tessera worker: {len(app.extensions['tessera'].job_kinds)} job kinds")
    run_blocking(app, parent_pid=parent)


@cli.command("create-admin")
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--first-name", default=None)
@click.option("--last-name", default=None)
def create_admin(email: str, password: str, first_name: str | None, last_name: str | None):
    """Create a superuser without the setup flow (headless installs)."""
    from core.http.types import EMAIL_RE
    from core.identity.passwords import is_valid
    from core.identity.users import create_user, email_taken

    from .app import create_app

    app = create_app()
    state = app.extensions["tessera"]
    if not EMAIL_RE.match(email):
        raise click.ClickException("value must be a valid email address.")
    if not is_valid(password, state.config["TESSERA_PASSWORD_COMPLEXITY"], state.config["TESSERA_PASSWORD_LENGTH"]):
        raise click.ClickException("password is too common.")
    with state.db.session() as session:
        if email_taken(session, email):
            raise click.ClickException("Email address already in use.")
        user = create_user(session, email=email, first_name=first_name, last_name=last_name,
                           password_hash=state.hasher.hash(password), is_superuser=True)
        click.echo(f"created superuser {user.email} (id {user.id})")


@cli.command()
def plugins():
    """List the plugins, their versions and the hooks they implement."""
    from .plugins import describe_plugins, make_plugin_manager

    for row in describe_plugins(make_plugin_manager(load_config())):
        click.echo(f"{row['name']}\t{row['version']}\t{', '.join(row['hooks'])}")


def build_cli():
    from .plugins import make_plugin_manager

    try:
        pm = make_plugin_manager(load_config())
    except Exception as exc:  # a broken plugin set must still leave `tessera plugins` usable to diagnose it
        click.echo(f"warning: plugins not loaded: {exc}", err=True)
        return cli
    pm.hook.register_commands(cli=cli)
    return cli


def main(argv: list[str] | None = None) -> int:
    return build_cli().main(args=argv, prog_name="tessera", standalone_mode=True) or 0


if __name__ == "__main__":
    sys.exit(main())
