// Filters: one input per parameter the API shows, their values kept in the page's own query string
// (`?slug=value`, repeated for a list, as Metabase's pages do), so a filtered page can be linked to.
import { json } from "./api.js";
import { el } from "./render.js";

// Types whose value is one string (dates in Metabase's forms: 2024-01-05, 2024-01, past30days, a~b).
function single(type) { return type.startsWith("date/") || type === "temporal-unit"; }
function isNumber(type) { return type.startsWith("number/"); }

function inputType(type) {
  if (type === "date/single") return "date";
  if (type === "date/month-year") return "month";
  return "text";
}

// The text in an input -> the value sent to the API (null when empty).
export function parse(param, text) {
  const raw = (text || "").trim();
  if (!raw) return null;
  if (single(param.type || "")) return raw;
  const parts = raw.split(",").map((s) => s.trim()).filter(Boolean);
  if (isNumber(param.type || "")) {
    const numbers = parts.map(Number);
    return numbers.some(Number.isNaN) ? parts : numbers;
  }
  return parts;
}

function show(value) {
  if (value === null || value === undefined) return "";
  return Array.isArray(value) ? value.join(", ") : String(value);
}

// Values from the page's URL by slug, else the parameter's default.
export function initialValues(parameters) {
  const search = new URLSearchParams(window.location.search);
  for (const p of parameters) {
    const given = search.getAll(p.slug);
    if (given.length) p.value = parse(p, given.join(","));
    else p.value = p.default === undefined ? null : p.default;
  }
}

export function writeUrl(parameters, extra = {}) {
  const search = new URLSearchParams();
  for (const p of parameters) {
    if (p.value === null || p.value === undefined || p.value === "") continue;
    for (const v of Array.isArray(p.value) ? p.value : [p.value]) search.append(p.slug, String(v));
  }
  for (const [key, value] of Object.entries(extra)) if (value !== null && value !== undefined) search.set(key, value);
  const text = search.toString();
  window.history.replaceState(null, "", `${window.location.pathname}${text ? `?${text}` : ""}${window.location.hash}`);
}

// Suggestions from the parameter's values endpoint, fetched once when the input is first focused.
function suggest(input, list, request) {
  if (!request) return;
  input.addEventListener("focus", async () => {
    if (list.dataset.loaded) return;
    list.dataset.loaded = "1";
    try {
      const body = await json(request);
      for (const row of (body.values || []).slice(0, 1000)) {
        const value = Array.isArray(row) ? row[0] : row;
        if (value !== null && value !== undefined) list.append(el("option", { value: String(value) }));
      }
    } catch (error) {
      // Suggestions are a convenience; typing a value still works.
    }
  });
}

// The filter bar. `onApply` runs with the parameters after a change (or the Apply button).
export function filterBar(parameters, { hidden, autoApply, valuesRequest, onApply }) {
  const bar = el("form", { class: "filters", "aria-label": "Filters" });
  const inputs = [];
  for (const p of parameters) {
    if (hidden.has(p.slug)) continue;
    const id = `filter-${p.slug}`;
    const list = el("datalist", { id: `${id}-values` });
    const input = el("input", { id, name: p.slug, type: inputType(p.type), value: show(p.value),
      placeholder: p.name, list: inputType(p.type) === "text" ? list.id : null, "data-parameter": p.id });
    suggest(input, list, inputType(p.type) === "text" ? valuesRequest(p) : null);
    inputs.push([p, input]);
    bar.append(el("label", { class: "filter", for: id }, el("span", { text: p.name || p.slug }), input, list));
    if (autoApply) input.addEventListener("change", () => apply());
  }
  let applied = JSON.stringify(parameters.map((p) => p.value));
  function apply() {
    for (const [p, input] of inputs) p.value = parse(p, input.value);
    const now = JSON.stringify(parameters.map((p) => p.value));
    if (now === applied) return;  // Enter fires both "change" and "submit"
    applied = now;
    onApply(parameters);
  }
  if (!autoApply && inputs.length) bar.append(el("button", { type: "submit", class: "apply", text: "Apply" }));
  bar.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
  return inputs.length ? bar : null;
}
