"""`tessera export DIR`, `tessera import DIR [--dry-run]` and `tessera diff DIR`."""
from __future__ import annotations

import sys
from pathlib import Path

import click


def _app():
    from core.assembly.app import create_app

    return create_app()


def _first_admin(session) -> int:
    import sqlalchemy as sa

    from core.appdb.models import User

    user_id = session.scalar(sa.select(User.id).where(User.is_superuser.is_(True), User.is_active.is_(True))
                             .order_by(User.id))
    if user_id is None:
        raise click.ClickException("no administrator: set Tessera up (or `tessera create-admin`) first")
    return user_id


def register(cli) -> None:
    @cli.command("export")
    @click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
    @click.option("--collection", "collections", type=int, multiple=True,
                  help="Export this collection and what is under it (repeatable); default every collection.")
    @click.option("--no-collections", is_flag=True, help="Leave out collections and their content.")
    @click.option("--no-settings", is_flag=True, help="Leave out settings.yaml.")
    @click.option("--no-data-model", is_flag=True, help="Leave out databases, tables and fields.")
    @click.option("--include-field-values", is_flag=True, help="Write the fields' cached values too.")
    @click.option("--include-database-secrets", is_flag=True,
                  help="Write the databases' connection details, passwords included.")
    def export_command(directory, collections, no_collections, no_settings, no_data_model, include_field_values,
                       include_database_secrets):
        """Write the content as YAML files (Metabase's serialization layout) under DIRECTORY."""
        from .export import Options
        from .service import export_dir

        app = _app()
        state = app.extensions["tessera"]
        options = Options(tuple(collections), not no_collections, not no_settings, not no_data_model,
                          include_field_values, include_database_secrets)
        with app.app_context(), state.db.session() as session:
            count = export_dir(session, options, state.settings, directory)
        click.echo(f"exported {count} files to {directory}")

    @cli.command("import")
    @click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
    @click.option("--dry-run", is_flag=True, help="Say what would be created and changed; change nothing.")
    def import_command(directory, dry_run):
        """Create or update the content of DIRECTORY's YAML files, in one transaction."""
        from .plan import read_dir
        from .service import import_files

        app = _app()
        state = app.extensions["tessera"]
        with app.app_context(), state.db.session() as session:
            report = import_files(session, read_dir(directory), acting_user=_first_admin(session),
                                  registry=state.settings, dry_run=dry_run)
        for line in report.lines():
            click.echo(line, err=line.startswith("error:"))
        if not report.ok:
            sys.exit(1)
        click.echo("dry run: nothing changed" if dry_run else "imported")

    @cli.command("diff")
    @click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
    def diff_command(directory):
        """Show, as a diff of the YAML content, what importing DIRECTORY would change."""
        from .plan import read_dir
        from .service import diff

        app = _app()
        state = app.extensions["tessera"]
        with app.app_context(), state.db.session() as session:
            report = diff(session, read_dir(directory), state.settings)
        for text in report.diffs:
            click.echo(text, nl=False)
        for line in report.lines():
            click.echo(line, err=line.startswith("error:"))
        if not report.ok:
            sys.exit(1)
