// The dashboard editor where htmx does not reach: moving and resizing cards on the 24-column grid by
// pointer (drag a card's handle, or its corner) and by keyboard (arrow keys move the focused handle's
// card, Shift with them resizes it), each a "place" change posted with the editor's form; and telling a
// screen reader what each change did (the form's data-announce, into the page's status region).
// Written here rather than vendored: the grid is already CSS grid classes, and a layout package sets
// inline style attributes, which the page's CSP refuses.
(function () {
  "use strict";

  var COLUMNS = 24;

  function editor() { return document.getElementById("editor"); }

  function place(handle, col, row, width, height) {
    var form = editor();
    if (!form || !window.htmx) return;
    window.htmx.ajax("POST", form.dataset.apply, {
      source: form, target: "#editor", swap: "outerHTML",
      values: { op: "place:" + handle.dataset.id, col: String(col), row: String(row),
                size_x: String(width), size_y: String(height) }
    });
  }

  function current(handle) {
    return { col: Number(handle.dataset.col), row: Number(handle.dataset.row),
             w: Number(handle.dataset.w), h: Number(handle.dataset.h) };
  }

  document.addEventListener("keydown", function (event) {
    var handle = event.target instanceof Element ? event.target.closest("[data-move]") : null;
    if (!handle) return;
    var steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[event.key];
    if (!steps) return;
    event.preventDefault();
    var at = current(handle);
    if (event.shiftKey) {
      place(handle, at.col, at.row, Math.max(1, Math.min(COLUMNS - at.col, at.w + steps[0])), Math.max(1, at.h + steps[1]));
    } else {
      place(handle, Math.max(0, Math.min(COLUMNS - at.w, at.col + steps[0])), Math.max(0, at.row + steps[1]), at.w, at.h);
    }
  });

  // Pointer: the grid's cell size turns the pointer's travel into columns and rows.
  function cellSize(grid) {
    var style = getComputedStyle(grid);
    var gap = parseFloat(style.columnGap) || 0;
    var rowHeight = parseFloat(style.gridAutoRows) || 56;
    return { x: (grid.clientWidth + gap) / COLUMNS, y: rowHeight + (parseFloat(style.rowGap) || 0) };
  }

  var drag = null;

  document.addEventListener("pointerdown", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var handle = target && target.closest("[data-move]");
    var corner = target && target.closest("[data-resize]");
    if (!handle && !corner) return;
    var card = (handle || corner).closest(".dashcard");
    var grid = card && card.closest(".grid");
    if (!grid || getComputedStyle(grid).gridTemplateColumns.split(" ").length < COLUMNS) return;
    if (corner) handle = card.querySelector("[data-move]");
    event.preventDefault();
    drag = { handle: handle, card: card, resize: Boolean(corner), x: event.clientX, y: event.clientY,
             cell: cellSize(grid) };
    card.classList.add("dragging");
  });

  document.addEventListener("pointerup", function (event) {
    if (!drag) return;
    var d = drag;
    drag = null;
    d.card.classList.remove("dragging");
    d.card.style.removeProperty("translate");
    var dx = Math.round((event.clientX - d.x) / d.cell.x), dy = Math.round((event.clientY - d.y) / d.cell.y);
    if (!dx && !dy) return;
    var at = current(d.handle);
    if (d.resize) place(d.handle, at.col, at.row, Math.max(1, Math.min(COLUMNS - at.col, at.w + dx)), Math.max(1, at.h + dy));
    else place(d.handle, Math.max(0, Math.min(COLUMNS - at.w, at.col + dx)), Math.max(0, at.row + dy), at.w, at.h);
  });

  document.addEventListener("pointermove", function (event) {
    // The card follows the pointer (through the CSSOM) until it is let go.
    if (drag && !drag.resize) drag.card.style.setProperty("translate", (event.clientX - drag.x) + "px " + (event.clientY - drag.y) + "px");
  });

  // Leaving with changes not saved asks first (Cancel included, as Metabase's "Discard your changes?").
  var changed = false, saving = false;

  window.addEventListener("beforeunload", function (event) {
    if (changed && !saving) event.preventDefault();
  });

  document.addEventListener("input", function (event) {
    if (event.target instanceof Element && event.target.closest("#editor") && event.target.id !== "dashedit-q") changed = true;
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (/\/edit\/save$/.test(event.detail.requestConfig.path)) saving = true;
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    if (/\/edit\/save$/.test(event.detail.requestConfig.path) && event.detail.xhr && event.detail.xhr.status >= 300) saving = false;
  });

  // After each change: say what it did (the keyboard stays on a moved card's handle: htmx keeps the focus
  // on an element of the same id).
  document.addEventListener("htmx:afterSwap", function (event) {
    var form = editor();
    if (!form || event.target !== form) return;
    changed = true;
    var status = document.getElementById("dashedit-status");
    if (status && form.dataset.announce) status.textContent = form.dataset.announce;
  });
})();
