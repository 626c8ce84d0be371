// The date filter widget: what a person picks (a relative period, one day, a range, before or after a
// day, a month, a quarter) written as Metabase's date parameter value ("past30days", "thismonth",
// "2024-01-05", "2024-01-01~2024-01-31", "~2024-01-01", "2024-01-01~", "2024-01", "Q1-2024"), and such
// a value read back into the widget (from the page's URL or the filter's default).
import { el } from "./render.js";

export const PRESETS = [
  ["thisday", "Today"], ["past1days", "Yesterday"], ["past7days", "Past 7 days"], ["past30days", "Past 30 days"],
  ["thisweek", "This week"], ["lastweek", "Last week"], ["thismonth", "This month"], ["lastmonth", "Last month"],
  ["thisyear", "This year"], ["lastyear", "Last year"],
];
const UNITS = ["day", "week", "month", "quarter", "year"];
const MODES = {
  relative: "Relative", on: "On", between: "Between", before: "Before", after: "After", month: "Month", quarter: "Quarter",
};
// Which ways of picking a date each parameter type offers.
const MODES_OF = {
  "date/single": ["on"], "date/range": ["between"], "date/month-year": ["month"], "date/quarter-year": ["quarter"],
  "date/relative": ["relative"],
};
const ALL_MODES = Object.keys(MODES);

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CUSTOM = /^(past|next)(\d+)(day|week|month|quarter|year)s$/;

// A value -> [mode, parts] for the widget; an unknown value opens the widget empty.
export function readDate(value) {
  const text = value == null ? "" : String(value);
  if (!text) return [null, {}];
  if (PRESETS.some(([v]) => v === text)) return ["relative", { preset: text }];
  const custom = CUSTOM.exec(text);
  if (custom) return ["relative", { preset: "custom", direction: custom[1], amount: custom[2], unit: custom[3] }];
  if (DAY.test(text)) return ["on", { day: text }];
  if (/^\d{4}-\d{2}$/.test(text)) return ["month", { month: text }];
  const quarter = /^Q([1-4])-(\d{4})$/.exec(text);
  if (quarter) return ["quarter", { quarter: quarter[1], year: quarter[2] }];
  const [from, to] = text.split("~");
  if (text.includes("~")) {
    if (!from && DAY.test(to)) return ["before", { day: to }];
    if (!to && DAY.test(from)) return ["after", { day: from }];
    if (DAY.test(from) && DAY.test(to)) return ["between", { from, to }];
  }
  return [null, {}];
}

// [mode, parts] -> the value (null while incomplete).
export function writeDate(mode, parts) {
  const p = parts;
  if (mode === "relative") {
    if (p.preset !== "custom") return p.preset || null;
    const amount = parseInt(p.amount, 10);
    return amount > 0 ? `${p.direction}${amount}${p.unit}s` : null;
  }
  if (mode === "on") return p.day || null;
  if (mode === "before") return p.day ? `~${p.day}` : null;
  if (mode === "after") return p.day ? `${p.day}~` : null;
  if (mode === "between") return p.from && p.to ? `${p.from}~${p.to}` : null;
  if (mode === "month") return p.month || null;
  if (mode === "quarter") return p.quarter && /^\d{4}$/.test(p.year || "") ? `Q${p.quarter}-${p.year}` : null;
  return null;
}

function select(label, options, value) {
  const node = el("select", { "aria-label": label });
  for (const [v, text] of options) node.append(el("option", { value: v, text, selected: v === value }));
  return node;
}

function input(label, type, value, attrs = {}) {
  return el("input", { type, "aria-label": label, value: value || "", ...attrs });
}

// The widget: a fieldset whose `value` is the Metabase value; `onChange` runs when it changes.
export function dateWidget(param, { id, onChange }) {
  const name = param.name || param.slug;
  const modes = MODES_OF[param.type] || ALL_MODES;
  let [mode, parts] = readDate(param.value);
  // A value the widget cannot show (e.g. "past30days~" from a link) stays in force until changed here.
  const kept = mode === null && param.value ? String(param.value) : null;
  if (!modes.includes(mode)) [mode, parts] = [modes[0], {}];
  const box = el("fieldset", { class: "filter date-filter", id, "data-parameter": param.id, "data-slug": param.slug },
    el("legend", { text: name }));
  const modeSelect = modes.length > 1 ? select(`${name}: how`, modes.map((m) => [m, MODES[m]]), mode) : null;
  const area = el("span", { class: "date-parts" });
  box.append(el("span", { class: "filter-row" }, ...[modeSelect, area].filter(Boolean)));
  box.value = kept ?? writeDate(mode, parts);

  function changed() {
    const value = writeDate(mode, parts);
    // Only a complete value is applied; clearing a field clears the filter.
    if (value === box.value) return;
    box.value = value;
    onChange();
  }

  function bind(node, key) {
    node.addEventListener("change", () => {
      parts[key] = node.value;
      if (key === "preset") draw();  // "Past or next…" shows its three fields
      changed();
    });
    return node;
  }

  function draw() {
    const nodes = [];
    if (mode === "relative") {
      nodes.push(bind(select(name, [["", "Any time"], ...PRESETS, ["custom", "Past or next…"]], parts.preset || ""), "preset"));
      if (parts.preset === "custom") {
        parts.direction ||= "past";
        parts.unit ||= "day";
        nodes.push(bind(select(`${name}: past or next`, [["past", "Past"], ["next", "Next"]], parts.direction), "direction"),
          bind(input(`${name}: how many`, "number", parts.amount, { min: "1", step: "1", class: "amount" }), "amount"),
          bind(select(`${name}: unit`, UNITS.map((u) => [u, `${u}s`]), parts.unit), "unit"));
      }
    } else if (mode === "between") {
      nodes.push(bind(input(`${name}: from`, "date", parts.from), "from"), el("span", { class: "to", text: "–" }),
        bind(input(`${name}: to`, "date", parts.to), "to"));
    } else if (mode === "month") {
      nodes.push(bind(input(name, "month", parts.month, { placeholder: "YYYY-MM" }), "month"));
    } else if (mode === "quarter") {
      nodes.push(bind(select(`${name}: quarter`, [["", "Quarter"], ["1", "Q1"], ["2", "Q2"], ["3", "Q3"], ["4", "Q4"]],
        parts.quarter || ""), "quarter"),
      bind(input(`${name}: year`, "number", parts.year, { min: "1000", max: "9999", class: "year" }), "year"));
    } else {
      nodes.push(bind(input(mode === "on" ? name : `${name}: ${MODES[mode].toLowerCase()}`, "date", parts.day), "day"));
    }
    const focused = area.contains(document.activeElement) ? [...area.querySelectorAll("input, select")]
      .indexOf(document.activeElement) : -1;
    area.replaceChildren(...nodes);
    if (focused >= 0) area.querySelectorAll("input, select")[focused]?.focus();
  }

  if (modeSelect) {
    modeSelect.addEventListener("change", () => {
      // Switching between day-based modes keeps the day picked.
      const day = parts.day || parts.from;
      mode = modeSelect.value;
      parts = { day, from: day };
      draw();
      changed();
    });
  }
  draw();
  return box;
}
