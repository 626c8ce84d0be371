// The filters' widgets (templates/app/_filters.html) on dashboards, x-rays and native questions: a date's
// parts written as one value in Metabase's date syntax, the URL kept free of empty filters, and the value
// lists (asked for their values each time they open, closed by Escape or a click elsewhere).
(function () {
  "use strict";

  function part(box, name) {
    var found = box.querySelector('[data-part="' + name + '"]');
    return found ? found.value.trim() : "";
  }

  // A date filter's parts as Metabase's value ("past30days", "thismonth", "2024-01-01~2024-03-31"),
  // "" for "any time", or null while the parts are not complete (nothing is sent then).
  function dateValue(box) {
    var mode = part(box, "mode");
    var start = part(box, "start");
    var end = part(box, "end");
    switch (mode) {
      case "": return "";
      case "other": return box.querySelector("[data-date-value]").value;
      case "past":
      case "next": {
        var amount = Number(part(box, "amount"));
        if (!Number.isInteger(amount) || amount < 1) return null;
        var current = box.querySelector('[data-part="current"]').checked ? "~" : "";
        return mode + amount + part(box, "unit") + "s" + current;
      }
      case "this": return "this" + part(box, "this");
      case "on": return start || null;
      case "after": return start ? start + "~" : null;
      case "before": return end ? "~" + end : null;
      case "between": return start && end ? (start <= end ? start + "~" + end : end + "~" + start) : null;
      case "month": return /^\d{4}-\d{2}$/.test(part(box, "month")) ? part(box, "month") : null;
      case "quarter": {
        var year = part(box, "year");
        return /^\d{4}$/.test(year) ? "Q" + part(box, "quarter") + "-" + year : null;
      }
      default: return null;
    }
  }

  function showParts(box) {
    var mode = part(box, "mode");
    box.querySelectorAll("[data-modes]").forEach(function (span) {
      span.hidden = span.dataset.modes.split(" ").indexOf(mode) < 0;
    });
  }

  // Parts of a widget (data-local: a date's parts, a value list's search box) do not submit the filters
  // themselves; a date's complete value does, through its hidden input.
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!(target instanceof Element) || !target.closest("[data-local]")) return;
    event.stopPropagation();
    var box = target.closest("[data-date]");
    if (!box) return;
    if (target.dataset.part === "mode") showParts(box);
    var value = dateValue(box);
    var hidden = box.querySelector("[data-date-value]");
    if (value === null || value === hidden.value) return;
    hidden.value = value;
    hidden.dispatchEvent(new Event("change", { bubbles: true }));
  }, true);

  // The filters' URL holds only filters with a value (an emptied filter that has a default stays, empty,
  // so the default does not come back), as Metabase's links do.
  document.addEventListener("htmx:configRequest", function (event) {
    var form = event.detail.elt;
    if (!form || form.id !== "filters") return;
    var keep = (form.dataset.keepEmpty || "").split(" ").filter(Boolean);
    var data = event.detail.formData;
    var keys = [];
    data.forEach(function (_value, key) { if (keys.indexOf(key) < 0) keys.push(key); });
    keys.forEach(function (key) {
      if (keep.indexOf(key) >= 0) return;
      if (data.getAll(key).every(function (value) { return String(value).trim() === ""; })) data.delete(key);
    });
  });

  // A value list asks for its values each time it opens (on a dashboard they are chained by the other filters).
  document.addEventListener("toggle", function (event) {
    var list = event.target;
    if (list instanceof Element && list.matches("details.choices") && list.open && window.htmx) {
      window.htmx.trigger(list, "opened");
    }
  }, true);

  // A value list or a card's downloads menu closes with Escape (focus back on its summary) or a click
  // elsewhere.
  var POPUPS = "details.choices[open], details.downloads[open]";
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !(event.target instanceof Element)) return;
    var open = event.target.closest(POPUPS);
    if (!open) return;
    open.open = false;
    open.querySelector("summary").focus();
  });

  document.addEventListener("click", function (event) {
    document.querySelectorAll(POPUPS).forEach(function (open) {
      if (!(event.target instanceof Node) || !open.contains(event.target)) open.open = false;
    });
  });
})();
