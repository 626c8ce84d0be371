// Filters: one widget per parameter the API shows, by the parameter's type (dates.js for dates,
// choices.js for value lists, number fields for comparisons), their values kept in the page's own query
// string (`?slug=value`, repeated for a list, as Metabase's pages do), so a filtered page can be linked to.
import { choiceWidget } from "./choices.js";
import { dateWidget } from "./dates.js";
import { el } from "./render.js";

const UNITS = ["minute", "hour", "day", "week", "month", "quarter", "year"];

// Types whose value is one string (dates in Metabase's forms, a time grouping).
function single(type) { return type.startsWith("date/") || type === "temporal-unit"; }
function isNumber(type) { return type.startsWith("number/"); }
function isDate(type) { return type.startsWith("date/"); }

function number(text) {
  const value = Number(text);
  return text !== "" && Number.isFinite(value) ? value : null;
}

// Values from the URL (strings) -> the value sent to the API (null when none).
export function parse(param, given) {
  const parts = given.map((s) => s.trim()).filter(Boolean);
  if (!parts.length) return null;
  if (single(param.type || "")) return parts[0];
  if (isNumber(param.type || "")) {
    const numbers = parts.map(number);
    return numbers.includes(null) ? parts : numbers;
  }
  return parts;
}

// Values from the page's URL by slug, else the parameter's default.
export function initialValues(parameters) {
  const search = new URLSearchParams(window.location.search);
  for (const p of parameters) {
    const given = search.getAll(p.slug);
    if (given.length) p.value = parse(p, given);
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

// number/between: two fields (both needed); >=, <= and the like: one.
function numberWidget(param, { id, onChange }) {
  const name = param.name || param.slug;
  const between = param.type === "number/between";
  const given = Array.isArray(param.value) ? param.value : param.value == null ? [] : [param.value];
  const fields = (between ? [`${name}: from`, `${name}: to`] : [name]).map((label, i) =>
    el("input", { type: "number", step: "any", "aria-label": label, value: given[i] ?? "", name: i ? null : param.slug,
      id: i ? null : id, class: "number-input" }));
  const box = el("fieldset", { class: "filter number-filter", "data-parameter": param.id, "data-slug": param.slug },
    el("legend", { text: name }),
    el("span", { class: "filter-row" }, ...fields.flatMap((f, i) => (i ? [el("span", { class: "to", text: "–" }), f] : [f]))));
  const read = () => {
    const numbers = fields.map((f) => number(f.value.trim()));
    if (numbers.includes(null)) return null;
    return numbers;
  };
  box.value = read();
  for (const field of fields) {
    field.addEventListener("change", () => {
      const value = read();
      // A half-filled range changes nothing until both ends are there; emptying every field clears it.
      if (value === null && fields.some((f) => f.value.trim())) return;
      box.value = value;
      onChange();
    });
  }
  return box;
}

function selectWidget(param, { id, onChange }, choices) {
  const name = param.name || param.slug;
  const select = el("select", { id, name: param.slug, "aria-label": name });
  for (const [value, text] of [["", "Any"], ...choices]) {
    select.append(el("option", { value, text, selected: String(param.value ?? "") === value }));
  }
  const box = el("label", { class: "filter", for: id, "data-parameter": param.id, "data-slug": param.slug },
    el("span", { class: "filter-label", text: name }), select);
  box.value = param.value ?? null;
  select.addEventListener("change", () => { box.value = select.value || null; onChange(); });
  return box;
}

function widget(param, context) {
  const type = param.type || "";
  if (isDate(type)) return dateWidget(param, context);
  if (type === "temporal-unit") return selectWidget(param, context, UNITS.map((u) => [u, u[0].toUpperCase() + u.slice(1)]));
  if (type === "boolean/=") return selectWidget(param, context, [["true", "True"], ["false", "False"]]);
  if (isNumber(type) && !["number/=", "number/!="].includes(type)) return numberWidget(param, context);
  const cast = isNumber(type) ? number : (text) => text || null;
  return choiceWidget(param, { ...context, cast });
}

// The filter bar. `valuesRequest(param, text, parameters)` is a parameter's values request; `onApply` runs with the
// parameters after a change (at once when the dashboard applies filters automatically, else on Apply).
export function filterBar(parameters, { hidden, autoApply, valuesRequest, onApply }) {
  const bar = el("form", { class: "filters", "aria-label": "Filters" });
  const widgets = [];
  for (const p of parameters) {
    if (hidden.has(p.slug)) continue;
    const context = { id: `filter-${p.slug}`, values: (text) => valuesRequest(p, text, current()), onChange: () => changed() };
    const node = widget(p, context);
    widgets.push([p, node]);
    bar.append(node);
  }
  let applied = JSON.stringify(parameters.map((p) => p.value));
  let apply = null;
  // Every parameter with the value its widget shows now (chained lists use these, applied or not).
  function current() {
    const shown = new Map(widgets.map(([p, node]) => [p, node.value]));
    return parameters.map((p) => ({ ...p, value: shown.has(p) ? shown.get(p) : p.value }));
  }
  function run() {
    for (const [p, node] of widgets) p.value = node.value;
    const now = JSON.stringify(parameters.map((p) => p.value));
    if (apply) apply.disabled = true;
    if (now === applied) return;
    applied = now;
    onApply(parameters);
  }
  function changed() {
    if (autoApply) run();
    else if (apply) apply.disabled = JSON.stringify(current().map((p) => p.value)) === applied;
  }
  if (!autoApply && widgets.length) {
    apply = el("button", { type: "submit", class: "apply", text: "Apply", disabled: true });
    bar.append(apply);
  }
  bar.addEventListener("submit", (event) => { event.preventDefault(); run(); });
  return widgets.length ? bar : null;
}
