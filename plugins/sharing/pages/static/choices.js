// The value-list filter widget (categories, IDs, numbers compared for equality, text): the values
// chosen shown as removable chips, and a combobox whose list comes from the parameter's values route,
// or its search route once something is typed, narrowed by the other filters' values (chained filters).
// A value typed that the list does not hold is still taken with Enter. Keyboard: arrows move in the
// list, Enter picks, Escape closes, Backspace in an empty box removes the last chip.
import { json } from "./api.js";
import { el, formatValue } from "./render.js";

const SHOWN = 100;
const PAUSE_MS = 200;

// [value, label] pairs from a values answer ({values: [[v], [v, label], ...]} or plain values).
function options(body) {
  return (body.values || []).map((row) => (Array.isArray(row) ? row : [row]))
    .filter(([v]) => v !== null && v !== undefined)
    .map(([v, label]) => [v, label === undefined || label === null ? formatValue(v) : String(label)]);
}

// `values(text)` is the request for the list matching `text` ("" for all); `cast` turns typed text into
// a value (null when it is not one, e.g. a number expected). `onChange` runs when the chips change.
export function choiceWidget(param, { id, values, cast, onChange }) {
  const name = param.name || param.slug;
  const chosen = (Array.isArray(param.value) ? param.value : param.value == null ? [] : [param.value]).slice();
  const labelId = `${id}-label`;
  const listId = `${id}-options`;
  const chips = el("ul", { class: "chips", "aria-label": `${name}: chosen` });
  const input = el("input", { id, type: "text", role: "combobox", name: param.slug, autocomplete: "off",
    "aria-labelledby": labelId, "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": listId,
    placeholder: chosen.length ? "" : `Search ${name}`, "data-parameter": param.id });
  const list = el("ul", { id: listId, role: "listbox", class: "options", "aria-label": `${name}: values`,
    "aria-multiselectable": "true", hidden: true });
  // "No values" is said here, not in the list: a listbox holds options only.
  const note = el("p", { class: "options-note", role: "status", hidden: true });
  const box = el("div", { class: "filter choice-filter", "data-parameter": param.id, "data-slug": param.slug },
    el("span", { id: labelId, class: "filter-label", text: name }),
    el("div", { class: "combo" }, chips, input, list, note));
  box.value = null;
  let active = -1;
  let timer = null;
  let asked = 0;

  function same(a, b) { return String(a) === String(b); }

  function sync() {
    box.value = chosen.length ? chosen.slice() : null;
    chips.replaceChildren(...chosen.map((v) => {
      const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${formatValue(v)}`, text: "×" });
      remove.addEventListener("click", () => { toggle(v); input.focus(); });
      return el("li", { class: "chip" }, el("span", { text: formatValue(v) }), remove);
    }));
    input.placeholder = chosen.length ? "" : `Search ${name}`;
    for (const option of list.children) {
      option.setAttribute("aria-selected", String(chosen.some((v) => same(v, option.choice))));
    }
  }

  function toggle(value) {
    const at = chosen.findIndex((v) => same(v, value));
    if (at >= 0) chosen.splice(at, 1); else chosen.push(value);
    sync();
    onChange();
  }

  function close() {
    list.hidden = true;
    note.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  }

  function highlight(index) {
    const items = [...list.children].filter((o) => o.getAttribute("role") === "option");
    if (!items.length) return;
    active = (index + items.length) % items.length;
    items.forEach((o, i) => o.classList.toggle("active", i === active));
    input.setAttribute("aria-activedescendant", items[active].id);
    items[active].scrollIntoView({ block: "nearest" });
  }

  async function load() {
    const text = input.value.trim();
    const ticket = ++asked;
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
    list.setAttribute("aria-busy", "true");
    let found = [];
    try {
      found = options(await json(values(text)));
    } catch (error) {
      found = [];  // The list is a help; a typed value still works.
    }
    if (ticket !== asked) return;
    list.removeAttribute("aria-busy");
    active = -1;
    input.removeAttribute("aria-activedescendant");
    const items = found.slice(0, SHOWN).map(([v, label], i) => {
      const option = el("li", { id: `${listId}-${i}`, role: "option", class: "option", text: label });
      option.choice = v;  // not `value`: an <li>'s value is a number
      option.addEventListener("mousedown", (event) => event.preventDefault());  // keep the focus in the box
      option.addEventListener("click", () => { toggle(v); input.value = ""; });
      return option;
    });
    list.replaceChildren(...items);
    list.hidden = !items.length;
    input.setAttribute("aria-expanded", String(items.length > 0));
    note.textContent = items.length ? "" : text ? "No values match; Enter takes the text typed." : "No values to list.";
    note.hidden = items.length > 0;
    sync();
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(load, PAUSE_MS);
  }

  function typed() {
    const value = cast(input.value.trim());
    if (value === null) return;
    input.value = "";
    if (!chosen.some((v) => same(v, value))) toggle(value);
    later();
  }

  input.addEventListener("focus", load);
  input.addEventListener("input", later);
  input.addEventListener("blur", () => { clearTimeout(timer); close(); });
  input.addEventListener("keydown", (event) => {
    const options = [...list.children].filter((o) => o.getAttribute("role") === "option");
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (list.hidden) { load(); return; }
      highlight(active + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter") {
      event.preventDefault();  // not the form's submit: Enter picks here
      if (active >= 0 && options[active]) { toggle(options[active].choice); input.value = ""; later(); } else typed();
    } else if (event.key === "Escape") {
      close();
    } else if (event.key === "Backspace" && !input.value && chosen.length) {
      toggle(chosen[chosen.length - 1]);
    }
  });
  sync();
  return box;
}
