"""Sphinx extension: drop the second copy of an inline <script> that Sphinx 7.4 emits twice.

sphinx-thebe and sphinx-togglebutton add inline scripts with ``app.add_js_file(None, body=...)``
after the HTML builder exists; Sphinx 7.4 adds each to the builder then, and again in
``prepare_writing`` as ``''`` instead of ``None``, which its de-duplication treats as a new file. The
second ``const THEBE_JS_URL = ...`` is a SyntaxError in the reader's console on every page
(tests/browser_checks.py checks the console). This keeps the first of any identical inline scripts.
"""

from __future__ import annotations

from typing import Any


def _key(script: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    attributes = getattr(script, "attributes", {}) or {}
    return getattr(script, "filename", str(script)) or "", tuple(sorted((k, str(v)) for k, v in attributes.items()))


def dedupe_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        key = _key(script)
        if key[0] == "" and key in seen:
            continue
        seen.add(key)
        kept.append(script)
    context["script_files"] = kept


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
