"""Outbound: what Tessera sends out of the process on a user's behalf (e-mail over SMTP).

Must not know which feature sends, nor HTTP requests coming in.
"""
