// A public link's or a static embed's page: the question or dashboard, its filters, its tabs, each
// card drawn as the server's chart (SVG) or as a table, and download links. Reads only the API that
// api.js names. When every card on view has settled, #page gets data-state="ready".
import { json, result, send, source } from "./api.js";
import { filterBar, initialValues, writeUrl } from "./filters.js";
import { HTML_DISPLAYS, el, results, virtualCard } from "./render.js";

const root = document.getElementById("page");
const api = source(root.dataset.source, root.dataset.token);
const DOWNLOADS = [["csv", ".csv"], ["xlsx", ".xlsx"], ["json", ".json"]];

// Metabase's hash options: #bordered=false&titled=false&theme=night&hide_parameters=a,b&downloads=false
function hashOptions() {
  const hash = new URLSearchParams(window.location.hash.slice(1));
  const flag = (name, fallback) => (hash.has(name) ? hash.get(name) !== "false" : fallback);
  const theme = ["night", "transparent"].includes(hash.get("theme")) ? hash.get("theme") : "light";
  return {
    bordered: flag("bordered", false),
    titled: flag("titled", true),
    theme,
    hideParameters: new Set((hash.get("hide_parameters") || "").split(",").filter(Boolean)),
    downloads: flag("downloads", true) && !flag("hide_download_button", false),
  };
}

let options = hashOptions();
let boxes = [];

// A region that scrolls must be reachable by keyboard: a text card whose text overflows its box gets a
// tab stop and a name (tables always have one, render.js).
function markScrolling() {
  for (const node of root.querySelectorAll(".text-card")) {
    const scrolls = node.scrollHeight > node.clientHeight + 1 || node.scrollWidth > node.clientWidth + 1;
    if (scrolls) {
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "region");
      node.setAttribute("aria-label", "Text");
    } else {
      for (const name of ["tabindex", "role", "aria-label"]) node.removeAttribute(name);
    }
  }
}

function settle() {
  if (!boxes.every((box) => box.dataset.state !== "loading")) return;
  markScrolling();
  root.dataset.state = "ready";
  root.removeAttribute("aria-busy");
}

// A card's sign of life while its query runs: a moving bar, what it is doing, and for how long.
function progress(box, title) {
  const text = el("span", { class: "progress-text", text: "Running the query…" });
  const node = el("div", { class: "progress", role: "progressbar", "aria-label": `Loading ${title || "the card"}`,
    "aria-valuetext": text.textContent }, el("div", { class: "progress-track" }, el("div", { class: "progress-bar" })), text);
  const started = performance.now();
  let phase = text.textContent;
  const show = () => {
    const seconds = Math.floor((performance.now() - started) / 1000);
    text.textContent = seconds >= 1 ? `${phase} ${seconds} s` : phase;
    node.setAttribute("aria-valuetext", phase);
  };
  clearInterval(box.ticker);
  box.ticker = setInterval(show, 1000);
  node.phase = (next) => { phase = next; show(); };
  return node;
}

// The size of a card's drawing area: its body without the padding.
function innerSize(body) {
  const style = getComputedStyle(body);
  return [body.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
    body.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)];
}

function chartExtra(body) {
  const [innerWidth, innerHeight] = innerSize(body);
  const width = Math.max(80, Math.round(innerWidth || 600));
  const height = Math.max(80, Math.round(innerHeight || 400));
  return [["width", String(width)], ["height", String(height)], ["theme", options.theme === "night" ? "dark" : "light"]];
}

function downloadLink(request, format, extension) {
  return el("a", { class: "download", href: request.url, download: "", "data-format": format, text: extension });
}

function downloadMenu(requestFor) {
  if (!options.downloads) return null;
  return el("details", { class: "downloads" }, el("summary", { text: "Download" }),
    el("div", { class: "download-list" }, ...DOWNLOADS.map(([format, ext]) => downloadLink(requestFor(format), format, ext))));
}

function cardBox(title) {
  const tools = el("div", { class: "card-tools" });
  const header = el("header", { class: "card-header" }, title ? el("h2", { class: "card-title", text: title }) : null, tools);
  const body = el("div", { class: "card-body" });
  const box = el("section", { class: "card", "data-state": "loading" }, header, body);
  box.parts = { tools, body };
  boxes.push(box);
  return box;
}

// Run one card: `query()` is its JSON request, `file(format, extra)` its export request.
async function fill(box, display, settings, query, file) {
  const generation = (box.generation || 0) + 1;
  box.generation = generation;
  box.dataset.state = "loading";
  root.dataset.state = "loading";
  root.setAttribute("aria-busy", "true");
  const { body, tools } = box.parts;
  const title = box.querySelector(".card-title")?.textContent || document.title;
  const waiting = progress(box, title);
  box.setAttribute("aria-busy", "true");
  body.replaceChildren(waiting);
  tools.replaceChildren(...[downloadMenu((format) => file(format, []))].filter(Boolean));
  try {
    let node;
    if (HTML_DISPLAYS.has(display)) {
      const response = await send(query());
      if (generation === box.generation) waiting.phase("Reading the results…");
      node = results(display, await result(response), settings, title);
    } else {
      box.drawnSize = innerSize(body);
      const response = await send(file("svg", chartExtra(body)));
      if (generation === box.generation) waiting.phase("Drawing the chart…");
      const blob = await response.blob();
      node = el("img", { class: "chart", alt: title || "Chart" });
      node.src = URL.createObjectURL(blob);
      await node.decode().catch(() => {});
      if (generation !== box.generation) { URL.revokeObjectURL(node.src); return; }
      if (box.objectUrl) URL.revokeObjectURL(box.objectUrl);
      box.objectUrl = node.src;
    }
    if (generation !== box.generation) return;
    body.replaceChildren(node);
    box.dataset.state = "done";
  } catch (error) {
    if (generation !== box.generation) return;
    body.replaceChildren(el("p", { class: "error", text: error.message }));
    box.dataset.state = "error";
  }
  clearInterval(box.ticker);
  box.removeAttribute("aria-busy");
  settle();
}

function heading(item) {
  if (!options.titled) return null;
  return el("header", { class: "page-header" }, el("h1", { class: "page-title", text: item.name || "" }),
    item.description ? el("p", { class: "description", text: item.description }) : null);
}

function copyParameters(list) {
  return (list || []).map((p) => ({ ...p }));
}

async function question() {
  const card = await json(api.card());
  document.title = card.name || document.title;
  const parameters = copyParameters(card.parameters);
  initialValues(parameters);
  const settings = card.visualization_settings || {};
  const box = cardBox(null);
  box.classList.add("question");
  const run = () => fill(box, card.display, settings, () => api.cardQuery(parameters),
    (format, extra) => api.cardQuery(parameters, format, extra));
  box.run = run;
  const bar = filterBar(parameters, { hidden: options.hideParameters, autoApply: true,
    valuesRequest: (p, text, others) => api.paramValues(p, "card", others, text), onApply: () => { writeUrl(parameters); run(); } });
  root.replaceChildren(...[heading(card), bar, box].filter(Boolean));
  run();
}

function currentTab(tabs) {
  const wanted = parseInt(new URLSearchParams(window.location.search).get("tab") || "", 10);
  return tabs.find((t) => t.id === wanted) || tabs[0] || null;
}

// A dashcard's settings over its card's as the server merges them (core/export/dashcard_settings.py):
// column and series settings entry by entry, table.columns by the card's columns in the dashcard's order.
function mergedSettings(first, second) {
  const out = { ...first, ...second };
  for (const key of ["column_settings", "series_settings"]) {
    const a = first[key], b = second[key];
    if (a && b && typeof a === "object" && typeof b === "object") {
      out[key] = {};
      for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) out[key][name] = { ...a[name], ...b[name] };
    }
  }
  const a = first["table.columns"], b = second["table.columns"];
  if (Array.isArray(a) && Array.isArray(b)) {
    const named = (c) => (c && typeof c === "object" ? c.name : c);
    const listed = new Set(a.map(named));
    const kept = b.filter((c) => listed.has(named(c)));
    const taken = new Set(kept.map(named));
    out["table.columns"] = [...kept, ...a.filter((c) => !taken.has(named(c)))];
  }
  return out;
}

function dashcardBox(dashboardJson, dashcard, parameters) {
  const card = dashcard.card;
  const settings = mergedSettings((card && card.visualization_settings) || {}, dashcard.visualization_settings || {});
  const virtual = !dashcard.card_id || !card;
  const bottom = settings["text.align_vertical"] === "bottom" ? " align-bottom" : "";
  const box = virtual ? el("section", { class: `card virtual${bottom}`, "data-state": "done" }, virtualCard(settings))
    : cardBox(settings["card.title"] || card.name);
  box.style.gridColumn = `${(dashcard.col || 0) + 1} / span ${dashcard.size_x || 4}`;
  box.style.gridRow = `${(dashcard.row || 0) + 1} / span ${dashcard.size_y || 4}`;
  box.style.setProperty("--rows", String(dashcard.size_y || 4));  // its height when the cards stack (page.css)
  box.dataset.dashcard = dashcard.id;
  box.run = virtual ? () => {} : () => fill(box, card.display, settings, () => api.dashcardQuery(dashcard, parameters),
    (format, extra) => api.dashcardQuery(dashcard, parameters, format, extra));
  return box;
}

async function dashboard() {
  const dash = await json(api.dashboard());
  document.title = dash.name || document.title;
  const parameters = copyParameters(dash.parameters);
  initialValues(parameters);
  const tabs = [...(dash.tabs || [])].sort((a, b) => (a.position || 0) - (b.position || 0));
  let tab = currentTab(tabs);
  const grid = el("div", { class: "grid" });
  // The title, filters, tabs and cards share one column: centred at a fixed width, or the full width.
  root.classList.toggle("fixed-width", dash.width !== "full");
  const tabBar = tabs.length > 1 ? el("nav", { class: "tabs", role: "tablist" }) : null;

  function show() {
    boxes = [];
    const on = (dc) => !tab || dc.dashboard_tab_id === tab.id || (dc.dashboard_tab_id == null && tab === tabs[0]);
    const dashcards = (dash.dashcards || []).filter((dc) => on(dc) && !dc.action)
      .sort((a, b) => (a.row - b.row) || (a.col - b.col));
    const placed = dashcards.map((dc) => dashcardBox(dash, dc, parameters));
    grid.replaceChildren(...placed);
    if (tabBar) {
      tabBar.replaceChildren(...tabs.map((t) => {
        const button = el("button", { type: "button", role: "tab", class: "tab", "aria-selected": String(t === tab), text: t.name });
        button.addEventListener("click", () => { tab = t; writeUrl(parameters, { tab: t.id }); show(); });
        return button;
      }));
    }
    root.dataset.state = "loading";
    for (const box of placed) if (box.run) box.run();
    settle();
  }

  const bar = filterBar(parameters, { hidden: options.hideParameters, autoApply: dash.auto_apply_filters !== false,
    valuesRequest: (p, text, others) => api.paramValues(p, "dashboard", others, text),
    onApply: () => { writeUrl(parameters, { tab: tab && tabs.length > 1 ? tab.id : null }); for (const b of boxes) b.run && b.run(); } });
  root.replaceChildren(...[heading(dash), bar, tabBar, grid].filter(Boolean));
  show();
}

function applyOptions() {
  document.body.classList.toggle("bordered", options.bordered);
  document.body.classList.toggle("theme-night", options.theme === "night");
  document.body.classList.toggle("theme-transparent", options.theme === "transparent");
}

async function start() {
  options = hashOptions();
  applyOptions();
  boxes = [];
  root.dataset.state = "loading";
  try {
    await (root.dataset.resource === "dashboard" ? dashboard() : question());
  } catch (error) {
    root.replaceChildren(el("p", { class: "error page-error", text: error.message }));
    root.dataset.state = "error";
  }
}

// A chart is drawn for its box's size: when the window (or the embedding iframe) is resized, draw
// again the charts whose box changed by more than a few pixels.
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    for (const box of boxes) {
      if (!box.drawnSize || box.dataset.state === "loading") continue;
      const [width, height] = innerSize(box.parts.body);
      if (Math.abs(width - box.drawnSize[0]) > 8 || Math.abs(height - box.drawnSize[1]) > 8) box.run();
    }
    markScrolling();
  }, 250);
});

window.addEventListener("hashchange", start);
start();
