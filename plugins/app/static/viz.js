// The visualization settings of the question pages (templates/app/_viz_settings.html) and the colours
// of conditional formatting. A settings change swaps the whole question, so the sections a person had
// open are opened again after it; the new-rule fields wait for "Add rule" instead of redrawing on every
// change. A cell's colour comes as data-cell-color and is set through the CSSOM: the page's CSP refuses
// style attributes written in the HTML.
(function () {
  var open = null;

  function channels(text) {
    var found = /rgba?\(([^)]+)\)/.exec(text || "");
    if (!found) return null;
    var parts = found[1].split(",").map(parseFloat);
    return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
  }

  function luminance(c) {
    function one(v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }
    return 0.2126 * one(c.r) + 0.7152 * one(c.g) + 0.0722 * one(c.b);
  }

  // A rule's colour is see-through: over a dark page a light colour needs dark text, and the other way
  // round, so the text is chosen for the colour as it shows over the table's own background.
  function readable(cell, color) {
    var over = channels(color), under = null, node = cell.parentElement;
    while (node && !under) {
      var bg = channels(getComputedStyle(node).backgroundColor);
      if (bg && bg.a > 0) under = bg;
      node = node.parentElement;
    }
    if (!over || !under) return;
    var shown = { r: over.r * over.a + under.r * (1 - over.a), g: over.g * over.a + under.g * (1 - over.a),
                  b: over.b * over.a + under.b * (1 - over.a) };
    // Black or white, whichever contrasts more: one of them always reaches 4.5:1 (WCAG AA).
    var light = luminance(shown);
    cell.style.color = (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) ? "#000000" : "#ffffff";
  }

  function paint(root) {
    root.querySelectorAll("[data-cell-color]").forEach(function (cell) {
      cell.style.backgroundColor = cell.dataset.cellColor;
      if (cell.tagName === "TD") readable(cell, cell.dataset.cellColor);
    });
  }

  document.addEventListener("htmx:beforeSwap", function () {
    open = {};
    document.querySelectorAll("details[data-keep-open][id]").forEach(function (details) {
      open[details.id] = details.open;
    });
  });

  htmx.onLoad(function (root) {
    paint(root);
    if (!open) return;
    root.querySelectorAll("details[data-keep-open][id]").forEach(function (details) {
      if (Object.prototype.hasOwnProperty.call(open, details.id)) details.open = open[details.id];
    });
  });

  // Empty fields mean the same as absent ones to /question/viz: left out, a wide table's settings stay
  // within the server's request-line limit (gunicorn's 4 KB).
  document.addEventListener("htmx:configRequest", function (event) {
    if (!event.detail.elt || event.detail.elt.id !== "viz-form") return;
    var data = event.detail.formData, empty = [];
    data.forEach(function (value, name) {
      if (value === "" && data.getAll(name).every(function (one) { return one === ""; })) empty.push(name);
    });
    empty.forEach(function (name) { delete event.detail.parameters[name]; });
  });

  document.addEventListener("change", function (event) {
    if (event.target.closest && event.target.closest("[data-draft]")) event.stopPropagation();
  }, true);
})();
