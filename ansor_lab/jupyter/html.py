"""Static HTML building blocks: highlighted code, CSS-only tabs, badges.

Everything here is plain HTML with inline styles (and one scoped ``<style>`` for the
tabs), so a saved notebook shows it without a kernel and without JavaScript. Where a
sanitizer strips the ``<style>`` element, the tabs degrade to all panels shown one
after the other, each with its title.
"""

from __future__ import annotations

import html
import itertools
import os
import re

_COUNTER = itertools.count()

#: pygments lexer per language name we use
_LEXERS = {
    "python": "PythonLexer",
    "llvm": "LlvmLexer",
    "asm": "GasLexer",
    "cuda": "CudaLexer",
    "c": "CLexer",
    "json": "JsonLexer",
    "text": "TextLexer",
}

#: code up to this many lines is colored with inline styles, longer code with classes
INLINE_LINES = 400

_WHITESPACE_SPAN = re.compile(r"<span[^>]*>(\s+)</span>")

FONT = "font-family: var(--jp-ui-font-family, -apple-system, 'Segoe UI', sans-serif)"
MONO = "font-family: var(--jp-code-font-family, SFMono-Regular, Menlo, Consolas, monospace)"


def esc(text: object) -> str:
    """HTML-escape ``text``."""
    return html.escape(str(text), quote=True)


def uid(prefix: str = "al") -> str:
    """A unique element id (distinct across outputs of one page and across kernels)."""
    return f"{prefix}-{os.getpid():x}-{next(_COUNTER)}-{os.urandom(3).hex()}"


def highlight(
    code: str, language: str = "python", max_lines: int | None = 3000, max_height: str = "34em"
) -> str:
    """Syntax-highlighted ``code`` as HTML (pygments).

    Up to ``INLINE_LINES`` lines the colors are inline ``style`` attributes (they survive
    any sanitizer); longer code uses classes and one scoped ``<style>`` element, which is
    about ten times smaller.
    """
    from pygments import highlight as pyg_highlight, lexers
    from pygments.formatters import HtmlFormatter

    note = ""
    lines = code.splitlines()
    if max_lines is not None and len(lines) > max_lines:
        code = "\n".join(lines[:max_lines])
        note = (
            f'<div style="{FONT};font-size:11px;color:#868e96;padding:2px 6px">'
            f"… {len(lines) - max_lines} more lines not shown</div>"
        )
    lexer = getattr(lexers, _LEXERS.get(language, "TextLexer"))()
    prestyles = "margin:0;padding:6px 8px;line-height:1.35"
    style = ""
    if len(lines) <= INLINE_LINES:
        formatter = HtmlFormatter(noclasses=True, style="default", prestyles=prestyles)
    else:
        cls = uid("al-hl")
        formatter = HtmlFormatter(cssclass=cls, style="default", prestyles=prestyles)
        rules = formatter.get_background_style_defs("." + cls) + formatter.get_token_style_defs(
            "." + cls
        )
        style = "<style>" + "\n".join(rules) + "</style>"
    body = _WHITESPACE_SPAN.sub(r"\1", pyg_highlight(code, lexer, formatter))
    return (
        f'<div class="al-code" style="max-height:{max_height};overflow:auto;font-size:12px;'
        f'border:1px solid #dee2e6;border-radius:4px">{style}{body}{note}</div>'
    )


def pre(text: str, max_height: str = "34em") -> str:
    """Plain preformatted text in a scroll box."""
    return (
        f'<pre style="{MONO};font-size:12px;margin:0;padding:6px 8px;max-height:{max_height};'
        f'overflow:auto;border:1px solid #dee2e6;border-radius:4px;background:#f8f9fa">'
        f"{esc(text)}</pre>"
    )


def badge(text: str, color: str, outline: bool = False) -> str:
    """A small colored label."""
    if outline:
        style = f"border:1px solid {color};color:{color}"
    else:
        style = f"background:{color};color:#fff;border:1px solid {color}"
    return (
        f'<span style="{style};border-radius:3px;padding:0 5px;margin-left:5px;'
        f'font-size:11px;{FONT};white-space:nowrap">{esc(text)}</span>'
    )


def tabs(panels: list[tuple[str, str]], selected: int = 0) -> str:
    """CSS-only tabs (hidden radio buttons + labels); ``panels`` are (title, html) pairs."""
    if not panels:
        return ""
    box = uid("al-tabs")
    rules = [
        f"#{box} > input{{display:none}}",
        f"#{box} > label{{display:inline-block;padding:3px 12px;margin:0 2px -1px 0;"
        "border:1px solid #ced4da;border-radius:4px 4px 0 0;background:#f1f3f5;"
        "cursor:pointer;font-size:12px;color:#495057}",
        f"#{box} > .al-panel{{display:none;border:1px solid #ced4da;padding:6px;"
        "border-radius:0 4px 4px 4px}",
        f"#{box} .al-ptitle{{display:none}}",
    ]
    heads, bodies = [], []
    for k, (title, content) in enumerate(panels):
        rid = f"{box}-{k}"
        rules.append(
            f"#{rid}:checked + label{{background:#fff;font-weight:600;color:#212529;"
            "border-bottom-color:#fff}"
        )
        rules.append(f"#{rid}:checked ~ .al-p{k}{{display:block}}")
        checked = " checked" if k == selected else ""
        heads.append(
            f'<input type="radio" name="{box}" id="{rid}"{checked} '
            f'style="display:none"><label for="{rid}">{esc(title)}</label>'
        )
        bodies.append(
            f'<div class="al-panel al-p{k}"><div class="al-ptitle" style="{FONT};'
            f'font-weight:600;margin:6px 0 2px">{esc(title)}</div>{content}</div>'
        )
    style = "<style>" + "\n".join(rules) + "</style>"
    return (
        f'<div class="al-tabs" id="{box}" style="{FONT};font-size:13px">{style}'
        + "".join(heads)
        + "".join(bodies)
        + "</div>"
    )


def header(*parts: str) -> str:
    """A one-line caption: parts joined by middle dots (parts are already HTML)."""
    body = " · ".join(p for p in parts if p)
    return f'<div style="{FONT};font-size:13px;margin:2px 0 6px;color:#343a40">{body}</div>'


def fmt_seconds(seconds: float) -> str:
    """``0.123 ms``, ``45.6 us``, ``1.23 s``."""
    if seconds != seconds or seconds == float("inf"):
        return "–"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.4g} ms"
    return f"{seconds * 1e6:.4g} us"


def fmt_duration(seconds: float) -> str:
    """``1m 05s`` style, for progress."""
    if seconds != seconds or seconds == float("inf") or seconds < 0:
        return "–"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h {m:02d}m"
    if m:
        return f"{m}m {s:02d}s"
    return f"{s}s"
