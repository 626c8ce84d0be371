// The expression editor (templates/app/_expression_editor.html; interface in plugins/app/expressions.py):
// suggestions for the word at the cursor, asked of the server and drawn by it, chosen with the arrow
// keys and Enter or Tab (Escape closes, a click chooses); the input's validity follows the server's
// check, which htmx asks for as the person types. Listeners are on the document, so editors that htmx
// brings in later work the same.
(function () {
  "use strict";

  var pending = new WeakMap();

  function editorOf(input) { return input.closest("[data-expression-editor]"); }
  function listOf(input) { return document.getElementById(input.getAttribute("aria-controls")); }
  // The server counts characters (code points); the input counts UTF-16 units.
  function points(text) { return Array.from(text).length; }
  function units(text, count) { return Array.from(text).slice(0, count).join("").length; }

  function close(input) {
    var list = listOf(input);
    if (!list) return;
    list.hidden = true;
    list.innerHTML = "";
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function options(input) {
    var list = listOf(input);
    return list && !list.hidden ? Array.prototype.slice.call(list.querySelectorAll("[role=option]")) : [];
  }

  function activate(input, index) {
    var all = options(input);
    if (!all.length) return;
    index = (index + all.length) % all.length;
    all.forEach(function (option, i) { option.setAttribute("aria-selected", i === index ? "true" : "false"); });
    input.setAttribute("aria-activedescendant", all[index].id);
    all[index].scrollIntoView({block: "nearest"});
  }

  function active(input) {
    return options(input).filter(function (o) { return o.getAttribute("aria-selected") === "true"; })[0] || null;
  }

  function accept(input, option) {
    var text = input.value;
    var start = units(text, Number(option.dataset.start));
    var end = units(text, Number(option.dataset.end));
    var insert = option.dataset.insert;
    input.value = text.slice(0, start) + insert + text.slice(end);
    var caret = start + insert.length;
    input.setSelectionRange(caret, caret);
    close(input);
    input.focus();
    input.dispatchEvent(new Event("input", {bubbles: true}));
  }

  function suggest(input) {
    var editor = editorOf(input);
    var list = listOf(input);
    if (!editor || !list) return;
    var before = input.value.slice(0, input.selectionStart);
    var body = JSON.stringify({q: editor.dataset.q, kind: editor.dataset.kind, name: editor.dataset.name || "",
                               text: input.value, cursor: String(points(before)), id: input.id});
    var asked = input.value;
    fetch(editor.dataset.complete, {method: "POST", credentials: "same-origin", body: body,
                                    headers: {"Content-Type": "application/json", "HX-Request": "true"}})
      .then(function (response) { return response.ok ? response.text() : ""; })
      .then(function (html) {
        if (input.value !== asked || document.activeElement !== input) return;
        list.innerHTML = html;
        var any = list.querySelector("[role=option]") !== null;
        list.hidden = !any;
        input.setAttribute("aria-expanded", any ? "true" : "false");
        input.removeAttribute("aria-activedescendant");
        if (any) activate(input, 0);
      })
      .catch(function () { close(input); });
  }

  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!(input instanceof HTMLInputElement) || !input.hasAttribute("data-expression-input")) return;
    clearTimeout(pending.get(input));
    pending.set(input, setTimeout(function () { suggest(input); }, 120));
  });

  document.addEventListener("keydown", function (event) {
    var input = event.target;
    if (!(input instanceof HTMLInputElement) || !input.hasAttribute("data-expression-input")) return;
    var open = options(input).length > 0;
    if (!open) return;
    var all = options(input);
    var current = all.indexOf(active(input));
    if (event.key === "ArrowDown") {
      event.preventDefault();
      activate(input, current + 1);
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      activate(input, current < 0 ? -1 : current - 1);
    } else if ((event.key === "Enter" || event.key === "Tab") && current >= 0) {
      event.preventDefault();
      accept(input, all[current]);
    } else if (event.key === "Escape") {
      event.preventDefault();
      close(input);
    }
  });

  // mousedown, not click: the input keeps its focus (and its list) until the choice is made.
  document.addEventListener("mousedown", function (event) {
    var option = event.target instanceof Element ? event.target.closest(".expression-suggestions [role=option]") : null;
    if (!option) return;
    event.preventDefault();
    var input = document.querySelector('[aria-controls="' + option.parentElement.id + '"]');
    if (input) accept(input, option);
  });

  document.addEventListener("focusout", function (event) {
    var input = event.target;
    if (input instanceof HTMLInputElement && input.hasAttribute("data-expression-input")) close(input);
  });

  // The check's answer: an error marks the input invalid (and is read out through aria-describedby).
  document.addEventListener("htmx:afterSwap", function (event) {
    var result = event.target;
    if (!(result instanceof Element) || !result.classList.contains("expression-result")) return;
    var input = result.closest("[data-expression-editor]").querySelector("[data-expression-input]");
    if (result.querySelector(".expression-error, .form-error")) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  });
})();
