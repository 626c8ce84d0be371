// The dashboard page where htmx does not reach: each card's row on the grid, the downloads menu,
// auto-refresh and full screen (the filters' widgets are static/filters.js). Positions are set through
// the CSSOM (element.style), which the page's CSP allows; the page has no inline style or script.
(function () {
  "use strict";

  // The wide grid's rows: dashcard row 0 is grid row 1 (columns and sizes are classes, see dashboard.css).
  function place(root) {
    root.querySelectorAll(".dashcard[data-row]").forEach(function (card) {
      var row = Number(card.dataset.row);
      if (Number.isInteger(row) && row >= 0) card.style.setProperty("--row", String(row + 1));
    });
  }

  // The downloads menu closes as a value list does (static/filters.js, details.downloads).

  // Auto-refresh: every card reloads itself (hx-trigger "refresh from:body"); the interval is kept in
  // the URL's fragment (#refresh=60), as Metabase keeps it.
  var timer = null;

  function hashParams() {
    return new URLSearchParams(location.hash.replace(/^#/, ""));
  }

  function refreshEvery(seconds, write) {
    if (timer !== null) clearInterval(timer);
    timer = null;
    if (seconds > 0) {
      timer = setInterval(function () {
        if (window.htmx) window.htmx.trigger(document.body, "refresh");
      }, seconds * 1000);
    }
    if (write) {
      var params = hashParams();
      if (seconds > 0) params.set("refresh", String(seconds)); else params.delete("refresh");
      var text = params.toString();
      history.replaceState(history.state, "", location.pathname + location.search + (text ? "#" + text : ""));
    }
  }

  document.addEventListener("change", function (event) {
    if (event.target instanceof Element && event.target.matches("[data-refresh]")) {
      refreshEvery(Number(event.target.value) || 0, true);
    }
  });

  // Full screen: the page's main part (title, filters, cards); Escape or the button leaves it.
  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("[data-fullscreen]") : null;
    if (!button) return;
    if (document.fullscreenElement) {
      document.exitFullscreen();
    } else {
      var main = document.getElementById("main");
      if (main && main.requestFullscreen) main.requestFullscreen();
    }
  });

  document.addEventListener("fullscreenchange", function () {
    var on = Boolean(document.fullscreenElement);
    document.querySelectorAll("[data-fullscreen]").forEach(function (button) {
      button.setAttribute("aria-pressed", on ? "true" : "false");
      button.textContent = on ? "Leave full screen" : "Full screen";
    });
  });

  // An action button's form comes into its <dialog> (htmx), which opens as a modal once htmx has
  // settled it (its hx-post is bound only then: a submit before that would be a plain GET of the page);
  // Close or Escape closes it and the browser gives focus back to the button.
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.target;
    if (target instanceof HTMLDialogElement && target.matches(".action-dialog") && !target.open) {
      target.showModal();
      var first = target.querySelector("input, select, textarea, button[type=submit]");
      if (first) first.focus();
    }
  });

  document.addEventListener("click", function (event) {
    var close = event.target instanceof Element ? event.target.closest("[data-dialog-close]") : null;
    var dialog = close ? close.closest("dialog") : null;
    if (dialog) dialog.close();
  });

  // New content (the board after a filter change or tab switch) gets its rows too.
  document.addEventListener("htmx:load", function (event) {
    if (event.target instanceof Element) place(event.target);
  });

  function start() {
    place(document);
    var chosen = Number(hashParams().get("refresh")) || 0;
    var select = document.querySelector("[data-refresh]");
    if (select && chosen > 0) {
      if (!Array.prototype.some.call(select.options, function (o) { return Number(o.value) === chosen; })) {
        select.add(new Option("Every " + chosen + " s", String(chosen)));
      }
      select.value = String(chosen);
      refreshEvery(chosen, false);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
