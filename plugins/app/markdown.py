"""Text cards' Markdown as safe HTML, through markdown-it-py (CommonMark with tables and strikethrough).

Raw HTML is never passed through: the parser runs with `html` off, so `<script>` or an `onerror=`
attribute in a card's text is escaped and shown as the characters typed. Links keep only the schemes
markdown-it allows (no javascript:, vbscript:, file: or data:), open nothing in the page's name
(rel=noopener noreferrer) and images are not drawn (the page's CSP loads pictures from Tessera alone).
Headings move one level down, so a card's "# Title" sits under the dashboard's own h1.
"""
from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup

_PARSER = (MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
           .enable(["table", "strikethrough"]).disable("image"))


def _heading_open(self, tokens, idx, options, env):
    token = tokens[idx]
    token.tag = f"h{min(6, int(token.tag[1]) + 1)}"
    return self.renderToken(tokens, idx, options, env)


def _heading_close(self, tokens, idx, options, env):
    token = tokens[idx]
    token.tag = f"h{min(6, int(token.tag[1]) + 1)}"
    return self.renderToken(tokens, idx, options, env)


def _link_open(self, tokens, idx, options, env):
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


_PARSER.add_render_rule("heading_open", _heading_open)
_PARSER.add_render_rule("heading_close", _heading_close)
_PARSER.add_render_rule("link_open", _link_open)


def to_html(text: object) -> Markup:
    """`text` (a card's Markdown) as HTML in which every character of raw markup is escaped."""
    return Markup(_PARSER.render(str(text or "")))
