// What the page draws itself, from JSON results: tables, single numbers, text cards. Every piece of
// text from the server goes in through textContent, never as markup.

// Displays shown from the JSON results; every other display is the server's chart (SVG).
export const HTML_DISPLAYS = new Set(["table", "object", "pivot", "scalar", "smartscalar"]);
const MAX_TABLE_ROWS = 500;

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const DATE = new Intl.DateTimeFormat("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" });
const DATE_TIME = new Intl.DateTimeFormat("en-US", { year: "numeric", month: "long", day: "numeric", hour: "numeric",
  minute: "2-digit", timeZone: "UTC" });
const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

// Dates are shown as their wall-clock text says (the server already applied the report time zone).
export function formatValue(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isInteger(value) && Math.abs(value) < 1e4 ? String(value) : NUMBER.format(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") {
    const m = ISO.exec(value);
    if (m) {
      const [, y, mo, d, h = "00", mi = "00", s = "00"] = m;
      const moment = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
      return (h === "00" && mi === "00" && s === "00") ? DATE.format(moment) : DATE_TIME.format(moment);
    }
    return value;
  }
  return JSON.stringify(value);
}

function columnName(col) {
  return col.display_name || col.name || "";
}

// A table scrolls in its card: a named region with a tab stop, so a keyboard can scroll it too.
function scrollRegion(label, ...children) {
  return el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": label || "Results" }, ...children);
}

export function table(data, label) {
  const cols = data.cols || [];
  const rows = data.rows || [];
  const head = el("tr", {}, ...cols.map((c) => el("th", { text: columnName(c) })));
  const body = el("tbody");
  for (const row of rows.slice(0, MAX_TABLE_ROWS)) {
    body.append(el("tr", {}, ...row.map((v, i) => el("td", { class: typeof v === "number" ? "number" : null,
      text: formatValue(v), "data-col": columnName(cols[i] || {}) }))));
  }
  const wrap = scrollRegion(label, el("table", { class: "results" }, el("thead", {}, head), body));
  if (rows.length > MAX_TABLE_ROWS) wrap.append(el("p", { class: "note", text: `Showing first ${MAX_TABLE_ROWS} of ${rows.length} rows.` }));
  else if (!rows.length) wrap.append(el("p", { class: "note", text: "No results." }));
  return wrap;
}

function objectView(data, label) {
  const cols = data.cols || [];
  const row = (data.rows || [])[0] || [];
  const body = el("tbody", {}, ...cols.map((c, i) => el("tr", {}, el("th", { text: columnName(c) }), el("td", { text: formatValue(row[i]) }))));
  return scrollRegion(label, el("table", { class: "results object" }, body));
}

function scalarColumn(data, settings) {
  const cols = data.cols || [];
  const wanted = settings["scalar.field"];
  const named = cols.findIndex((c) => c.name === wanted || columnName(c) === wanted);
  if (named >= 0) return named;
  const numeric = cols.findIndex((c) => /Number|Integer|Float|Decimal/.test(c.base_type || ""));
  return numeric >= 0 ? numeric : 0;
}

function scalar(data, settings) {
  const rows = data.rows || [];
  const i = scalarColumn(data, settings);
  const value = rows.length ? rows[0][i] : null;
  return el("div", { class: "scalar" }, el("span", { class: "scalar-value", text: rows.length ? formatValue(value) : "–" }));
}

// Metabase's trend number: the last row against the one before it.
function smartScalar(data, settings) {
  const rows = data.rows || [];
  const i = scalarColumn(data, settings);
  const last = rows.length ? rows[rows.length - 1][i] : null;
  const box = el("div", { class: "scalar" }, el("span", { class: "scalar-value", text: rows.length ? formatValue(last) : "–" }));
  if (rows.length > 1 && typeof last === "number" && typeof rows[rows.length - 2][i] === "number") {
    const previous = rows[rows.length - 2][i];
    const change = previous === 0 ? null : (last - previous) / Math.abs(previous);
    const text = change === null ? "N/A" : `${change >= 0 ? "↑" : "↓"} ${NUMBER.format(Math.abs(change) * 100)}%`;
    box.append(el("span", { class: `scalar-change ${change >= 0 ? "up" : "down"}`, text: `${text} vs. previous (${formatValue(previous)})` }));
  }
  return box;
}

export function results(display, body, settings, label) {
  const data = body.data || { cols: [], rows: [] };
  if (display === "scalar") return scalar(data, settings);
  if (display === "smartscalar") return smartScalar(data, settings);
  if (display === "object") return objectView(data, label);
  return table(data, label);
}

// Dashboard cards without a question: text, heading, link (only http(s) links become anchors).
export function virtualCard(settings) {
  const kind = (settings.virtual_card && settings.virtual_card.display) || "text";
  if (kind === "heading") return el("h2", { class: "heading-card", text: settings.text || "" });
  if (kind === "link") {
    const target = (settings.link && settings.link.url) || "";
    if (/^https?:\/\//i.test(target)) {
      return el("p", { class: "text-card" }, el("a", { href: target, target: "_blank", rel: "noopener noreferrer", text: target }));
    }
    return el("p", { class: "text-card", text: target });
  }
  return markdown(settings.text || "");
}

// Inline Markdown: **bold**, *italic*, `code` and [text](http(s) link); everything else stays text.
const INLINE = /\*\*([^*]+)\*\*|\*([^*]+)\*|`([^`]+)`|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g;

function inline(text) {
  const nodes = [];
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > at) nodes.push(document.createTextNode(text.slice(at, m.index)));
    if (m[1] !== undefined) nodes.push(el("strong", { text: m[1] }));
    else if (m[2] !== undefined) nodes.push(el("em", { text: m[2] }));
    else if (m[3] !== undefined) nodes.push(el("code", { text: m[3] }));
    else nodes.push(el("a", { href: m[5], target: "_blank", rel: "noopener noreferrer", text: m[4] }));
    at = m.index + m[0].length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

// A text card's Markdown, the common part of it: headings, bullet lists and paragraphs of inline text.
// Built as DOM nodes, so no markup in the text can become an element.
export function markdown(text) {
  const box = el("div", { class: "text-card" });
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((line) => line.trim());
    if (!lines.length) continue;
    const heading = /^(#{1,6})\s+(.*)$/.exec(lines[0]);
    if (heading && lines.length === 1) {
      box.append(el(`h${Math.min(6, heading[1].length + 1)}`, {}, ...inline(heading[2])));
    } else if (lines.every((line) => /^\s*[-*+]\s+/.test(line))) {
      box.append(el("ul", {}, ...lines.map((line) => el("li", {}, ...inline(line.replace(/^\s*[-*+]\s+/, ""))))));
    } else {
      const paragraph = el("p");
      lines.forEach((line, i) => { if (i) paragraph.append(el("br")); paragraph.append(...inline(line)); });
      box.append(paragraph);
    }
  }
  return box;
}
