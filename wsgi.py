"""WSGI entry point: `gunicorn -c contrib/gunicorn.conf.py wsgi:app`."""
from core.assembly.app import create_app

app = create_app()
