// Drill-through on a question page (plugins/app/drill_menu.py). A chart's bars and points carry what
// they draw (data-drill, from core.charts.drill) and are focusable; a table's cells take their row from
// the page's JSON block of raw values (.drill-rows), one cell in the tab order and arrows to move. A
// click, Enter or Space asks the page's drill route (#question's data-drill) for the menu of ad-hoc
// questions; Escape, a click elsewhere or a new page closes it and focus returns to what was clicked.
// The rows block is {rows: the page's rows as the API gave them, cols: the result column of each shown
// column} (a table may show its columns reordered or hidden).
(function () {
  var menu = null, opener = null;

  function close(refocus) {
    if (!menu) return;
    menu.remove();
    menu = null;
    if (refocus && opener && document.contains(opener)) opener.focus();
  }

  function open(target, at) {
    var question = document.getElementById("question");
    if (!question || !question.dataset.drill) return;
    close(false);
    opener = target;
    menu = document.createElement("div");
    menu.className = "drill-menu";
    menu.setAttribute("role", "dialog");
    menu.setAttribute("aria-label", "Drill into this");
    menu.innerHTML = '<p class="status" role="status">Looking at what was clicked…</p>';
    place(target);
    document.body.appendChild(menu);
    var opened = menu;
    fetch(question.dataset.drill + "&at=" + encodeURIComponent(JSON.stringify(at)),
          { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (menu !== opened) return;
        menu.innerHTML = html;
        place(target);
        var first = menu.querySelector("a");
        if (first) first.focus();
      })
      .catch(function () {
        if (menu === opened) menu.innerHTML = '<p class="form-error" role="alert">The menu could not be loaded.</p>';
      });
  }

  function place(target) {
    var box = target.getBoundingClientRect();
    var width = Math.min(320, document.documentElement.clientWidth - 16);
    var left = Math.max(8, Math.min(box.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 8));
    menu.style.left = left + "px";
    menu.style.top = (box.bottom + window.scrollY + 6) + "px";
    menu.style.width = width + "px";
  }

  function markClick(mark) {
    try { open(mark, JSON.parse(mark.getAttribute("data-drill"))); } catch (e) { /* not a drillable mark */ }
  }

  function rowsOf(cell) {
    var question = cell.closest("#question");
    var block = question && question.querySelector(".drill-rows");
    if (!block) return null;
    try { return JSON.parse(block.textContent); } catch (e) { return null; }
  }

  function cellClick(cell) {
    var shown = rowsOf(cell);
    var row = shown && shown.rows[cell.parentElement.sectionRowIndex];
    var col = shown && shown.cols[cell.cellIndex];
    if (!row || col === undefined) return;
    var dims = row.map(function (value, index) { return [index, value]; });
    open(cell, { dims: dims, col: col, value: row[col], cell: true });
  }

  function drillCell(node) {
    var cell = node.closest && node.closest("td");
    return cell && cell.closest("#question[data-drill] table.result") && rowsOf(cell) ? cell : null;
  }

  document.addEventListener("click", function (event) {
    if (menu && menu.contains(event.target)) return;
    var mark = event.target.closest(".drill-mark");
    var cell = !mark && drillCell(event.target);
    if (mark) { markClick(mark); return; }
    if (cell) { cellClick(cell); return; }
    close(false);
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && menu) { close(true); return; }
    var target = event.target;
    if (event.key === "Enter" || event.key === " ") {
      if (target.classList && target.classList.contains("drill-mark")) { event.preventDefault(); markClick(target); }
      else if (target.tagName === "TD" && drillCell(target)) { event.preventDefault(); cellClick(target); }
      return;
    }
    var moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (target.tagName === "TD" && moves[event.key] && drillCell(target)) {
      var rows = target.closest("tbody").rows;
      var r = target.parentElement.sectionRowIndex + moves[event.key][0];
      var next = rows[r] && rows[r].cells[target.cellIndex + moves[event.key][1]];
      if (next) { event.preventDefault(); target.tabIndex = -1; next.tabIndex = 0; next.focus(); }
    }
  });

  // One cell of a drillable table is in the tab order (the arrows move from it).
  function prepare() {
    close(false);
    var question = document.getElementById("question");
    if (!question || !question.dataset.drill || !question.querySelector(".drill-rows")) return;
    var cells = question.querySelectorAll("table.result tbody td");
    cells.forEach(function (cell, index) {
      cell.tabIndex = index === 0 ? 0 : -1;
      cell.classList.add("drill-cell");
    });
  }

  document.addEventListener("DOMContentLoaded", prepare);
  document.addEventListener("htmx:afterSettle", prepare);
  // A resize moves the menu with what it belongs to (a phone's browser resizes as content changes).
  window.addEventListener("resize", function () { if (menu && opener && document.contains(opener)) place(opener); });
})();
