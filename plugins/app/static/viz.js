// The visualization settings of the question pages (templates/app/_viz_settings.html) and the colours
// of conditional formatting. A settings change swaps the whole question, so the sections a person had
// open are opened again after it; the new-rule fields wait for "Add rule" instead of redrawing on every
// change. A cell's colour comes as data-cell-color and is set through the CSSOM: the page's CSP refuses
// style attributes written in the HTML.
(function () {
  var open = null;

  function paint(root) {
    root.querySelectorAll("[data-cell-color]").forEach(function (cell) {
      cell.style.backgroundColor = cell.dataset.cellColor;
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

  document.addEventListener("change", function (event) {
    if (event.target.closest && event.target.closest("[data-draft]")) event.stopPropagation();
  }, true);
})();
