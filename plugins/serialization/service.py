"""The serialization operations the command line and the API share: export to a directory or a
.tar.gz, import from either (or a dry run), and the content diff."""
from __future__ import annotations

import datetime as dt
import io
import shutil
import tarfile
from pathlib import Path

from . import export as ex
from . import load, plan
from .export import Options

# The parts of a directory an export owns: replaced whole, so a renamed or moved entity leaves no old file.
MANAGED = {"collections": "include_collections", "snippets": "include_collections", "actions": "include_collections",
           "databases": "include_data_model", "settings.yaml": "include_settings"}


def export_dir(session, options: Options, registry, root: Path) -> int:
    docs = ex.documents(session, options, registry)
    session.commit()  # entity ids given to rows that had none are kept: the files name them
    root.mkdir(parents=True, exist_ok=True)
    for name, flag in MANAGED.items():
        target = root / name
        # A partial export (--collection) adds to the directory: the other subtrees there stay.
        if getattr(options, flag) and not options.collections:
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    return ex.write(docs, root)


def export_archive(session, options: Options, registry, dirname: str | None) -> tuple[str, bytes]:
    """The directory name and a .tar.gz of the export under it, byte-stable: sorted members, no times or
    owners. The default name is Metabase's: the site name and the time."""
    if dirname:
        dirname = ex.slug(dirname)
    else:
        site = registry.get_or(session, "site-name", None) or "tessera"
        dirname = f"{ex.slug(site)}-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d_%H-%M}"
    docs = ex.documents(session, options, registry)
    session.commit()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for doc in docs:
            data = ex.text_of(doc).encode("utf-8")
            info = tarfile.TarInfo(f"{dirname}/{doc.path}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            archive.addfile(info, io.BytesIO(data))
    return dirname, buffer.getvalue()


class BadArchive(ValueError):
    pass


def archive_files(data: bytes) -> dict[str, str]:
    """The YAML files of an uploaded export archive, relative to its top directory."""
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise BadArchive(f"not a .tar.gz archive: {exc}") from exc
    files = {}
    with archive:
        members = [m for m in archive.getmembers() if m.isfile() and m.name.endswith(".yaml")]
        tops = {m.name.split("/", 1)[0] for m in members if "/" in m.name}
        strip = len(tops) == 1 and all("/" in m.name for m in members)
        for member in members:
            name = member.name.split("/", 1)[1] if strip else member.name
            if name.startswith("/") or ".." in name.split("/"):
                raise BadArchive(f"{member.name}: a path outside the archive")
            files[name] = archive.extractfile(member).read().decode("utf-8")
    return files


def import_files(session, files: dict[str, str], *, acting_user: int, registry, dry_run: bool = False) -> plan.Report:
    return load.run(session, files, acting_user=acting_user, registry=registry, dry_run=dry_run)


def diff(session, files: dict[str, str], registry) -> plan.Report:
    incoming, problems = plan.read(files)
    report, _ = plan.compare(session, incoming, registry)
    report.problems = problems + report.problems
    session.rollback()
    return report
