"""``browser_snapshot``: the page as an accessibility tree, one line per node, with a ref
(``@e5``) on every element the model can act on. One script walks the visible DOM in the page
(roles and accessible names as the ARIA rules give them, simplified), tags each actionable
element with a per-session attribute the page cannot guess, and returns the lines."""

from __future__ import annotations

from dataclasses import dataclass

# The walker: (attr, full) -> {lines: [...], refs: n}. Invisible subtrees (display:none,
# visibility:hidden, aria-hidden, hidden) are skipped, as an accessibility tree does.
WALKER = r"""
([attr, full]) => {
  const TEXT_MAX = full ? 100000 : 160;
  for (const old of document.querySelectorAll('[' + attr + ']')) old.removeAttribute(attr);
  const ROLE_OF_TAG = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox',
    H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading',
    IMG: 'img', NAV: 'navigation', MAIN: 'main', FORM: 'form', UL: 'list', OL: 'list',
    LI: 'listitem', TABLE: 'table', TR: 'row', TD: 'cell', TH: 'columnheader',
    SUMMARY: 'button', DIALOG: 'dialog', LABEL: null, OPTION: 'option'};
  const INPUT_ROLE = {button: 'button', submit: 'button', reset: 'button', image: 'button',
    checkbox: 'checkbox', radio: 'radio', range: 'slider', search: 'searchbox',
    number: 'spinbutton'};
  const ACTIONABLE = new Set(['link', 'button', 'textbox', 'searchbox', 'combobox', 'checkbox',
    'radio', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'option', 'listbox']);
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK']);
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const cut = (s) => s.length > TEXT_MAX ? s.slice(0, TEXT_MAX) + '…' : s;
  const roleOf = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(' ')[0];
    if (el.tagName === 'INPUT') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type === 'hidden') return null;
      return INPUT_ROLE[type] || 'textbox';
    }
    if (el.tagName === 'A' && !el.hasAttribute('href')) return null;
    if (el.isContentEditable && el.getAttribute('contenteditable') !== null) return 'textbox';
    return ROLE_OF_TAG[el.tagName] || null;
  };
  const NAMED_BY_TEXT = new Set(['link', 'button', 'heading', 'option', 'tab', 'menuitem',
    'cell', 'columnheader', 'checkbox', 'radio', 'switch']);
  const labelOf = (el, role) => {
    const by = el.getAttribute('aria-labelledby');
    if (by) return clean(by.split(' ').map((id) => {
      const t = document.getElementById(id); return t ? t.textContent : ''; }).join(' '));
    const aria = el.getAttribute('aria-label');
    if (aria) return clean(aria);
    if (el.labels && el.labels.length) return clean(el.labels[0].textContent);
    if (el.tagName === 'IMG') return clean(el.getAttribute('alt'));
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (['submit', 'button', 'reset'].includes(type)) return clean(el.value) || type;
      return clean(el.getAttribute('placeholder') || el.getAttribute('title')
                   || el.getAttribute('name'));
    }
    if (el.tagName === 'SELECT') return clean(el.getAttribute('name') || el.getAttribute('title'));
    if (!NAMED_BY_TEXT.has(role)) return '';  // a container: its texts follow as children
    return clean(el.innerText || el.textContent);
  };
  const hidden = (el) => {
    if (el.hidden || el.getAttribute('aria-hidden') === 'true') return true;
    const style = getComputedStyle(el);
    return style.display === 'none' || style.visibility === 'hidden';
  };
  const lines = [];
  let refs = 0;
  const walk = (node, depth) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = clean(node.textContent);
      if (text) lines.push('  '.repeat(depth) + '- text: ' + cut(text));
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || SKIP.has(node.tagName) || hidden(node)) return;
    const role = roleOf(node);
    let inner = depth;
    if (role) {
      const name = labelOf(node, role);
      let line = '  '.repeat(depth) + '- ' + role + (name ? ' "' + cut(name) + '"' : '');
      if (role === 'heading') line += ' [level=' + (node.tagName[1] || node.getAttribute('aria-level') || '2') + ']';
      if (node.tagName === 'INPUT' || node.tagName === 'TEXTAREA' || node.tagName === 'SELECT') {
        const type = (node.getAttribute('type') || '').toLowerCase();
        if (type === 'checkbox' || type === 'radio') line += node.checked ? ' [checked]' : '';
        else if (node.value && type !== 'password') line += ' [value="' + cut(clean(node.value)) + '"]';
      }
      if (node.disabled) line += ' [disabled]';
      if (ACTIONABLE.has(role) || node.hasAttribute('onclick')) {
        refs += 1;
        node.setAttribute(attr, 'e' + refs);
        line += ' [ref=@e' + refs + ']';
      }
      if (full && node.tagName === 'A' && node.href) line += ' [url=' + node.href + ']';
      lines.push(line);
      // the name already holds a leaf's text: do not repeat it below
      if (name && (NAMED_BY_TEXT.has(role) || role === 'img')) return;
      inner = depth + 1;
    }
    for (const child of node.childNodes) walk(child, inner);
  };
  walk(document.body || document.documentElement, 0);
  return {lines, refs};
}
"""


@dataclass(frozen=True)
class Snapshot:
    text: str
    refs: int  # elements with a ref
    truncated: bool = False


def render(lines: list[str], refs: int, limit: int) -> Snapshot:
    """The walker's lines as one text, cut at ``limit`` characters on a line boundary."""
    text = "\n".join(lines) or "(the page shows no text)"
    if len(text) <= limit:
        return Snapshot(text, refs)
    head = text[:limit].rsplit("\n", 1)[0]
    return Snapshot(head + f"\n… (cut at {limit} of {len(text)} characters: "
                    "browser.snapshot_char_limit; scroll or ask for less)", refs, True)


def ref_selector(attr: str, ref: str) -> str | None:
    """The CSS selector of ref ``@e5`` (also ``e5``), None for a malformed ref."""
    name = ref.strip().lstrip("@").strip("[]")
    if name.startswith("ref="):
        name = name[4:].lstrip("@")
    if not (name.startswith("e") and name[1:].isdigit()):
        return None
    return f'[{attr}="{name}"]'
