// The SQL editor (templates/app/native.html). The textarea stays the input (labelled, usable without
// scripts); this draws the SQL highlighted behind it (Prism's SQL grammar, with the template tags and
// optional clauses marked, and the database's comment and quoting rules), runs the query with the Run
// button or Ctrl+Enter (htmx posts the form to /question/native/run), cancels a run (Cancel, or leaving
// the page: the request is aborted and the API stops a query whose client has gone), inserts names from
// the schema browser and snippets at the cursor, and runs again for a sort or page link of the result.
// The result's chart/table switch, display picker and settings panel (templates/app/_viz_settings.html in
// editor mode) change how it is shown: the choice goes into the form's view state (#native-view-state)
// and the query runs again, the server applying a panel change by the question pages' rules.
(function () {
  "use strict";

  var form = document.querySelector("form[data-native]");
  if (!form) return;
  var sql = document.getElementById("native-sql");
  var code = form.querySelector(".code-highlight code");
  var run = document.getElementById("native-run");
  var cancel = document.getElementById("native-cancel");
  var status = document.getElementById("native-status");
  var dialect = form.querySelector(".code-editor").dataset.dialect || "";

  // Prism's SQL is MySQL's reading: "#" comments, `backtick` identifiers, strings in either quote. The
  // other engines quote identifiers with "double quotes", strings with 'single' ones, have no "#"
  // comment ({{#12-orders}} is a card reference), and PostgreSQL and DuckDB add $tag$ strings.
  var DOLLAR_QUOTES = { postgres: true, duckdb: true };

  function grammar() {
    var Prism = window.Prism;
    if (dialect === "mysql" || dialect === "mariadb") {
      Prism.languages.tesseraSql = Prism.languages.extend("sql", {});
    } else {
      Prism.languages.tesseraSql = Prism.languages.extend("sql", {
        comment: { pattern: /(^|[^\\])(?:\/\*[\s\S]*?\*\/|--.*)/, lookbehind: true },
        string: { pattern: /'(?:[^']|'')*'/, greedy: true },
        identifier: { pattern: /"(?:[^"]|"")*"/, greedy: true }
      });
      if (DOLLAR_QUOTES[dialect]) {
        Prism.languages.insertBefore("tesseraSql", "string", {
          "dollar-string": { pattern: /\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/, greedy: true, alias: "string" }
        });
      }
    }
    Prism.languages.insertBefore("tesseraSql", "comment", {
      "template-tag": { pattern: /\{\{[^{}]*\}\}/, greedy: true },
      "optional-clause": /\[\[|\]\]/
    });
    return Prism.languages.tesseraSql;
  }

  var language = window.Prism ? grammar() : null;

  // The textarea grows with its text (never a scrollbar of its own, which would wrap its lines at
  // another width than the picture's).
  function grow() {
    sql.style.height = "auto";
    sql.style.height = sql.scrollHeight + 2 + "px";
  }

  function highlight() {
    if (!language) return;
    grow();
    // A last empty line is drawn too, so the picture keeps the textarea's height.
    code.innerHTML = window.Prism.highlight(sql.value, language, "sql") + "\n";
    code.parentElement.scrollTop = sql.scrollTop;
    code.parentElement.scrollLeft = sql.scrollLeft;
  }

  if (language) {
    form.querySelector(".code-wrap").classList.add("highlighting");
    sql.addEventListener("input", highlight);
    sql.addEventListener("scroll", function () {
      code.parentElement.scrollTop = sql.scrollTop;
      code.parentElement.scrollLeft = sql.scrollLeft;
    });
    highlight();
  }

  // A run from the form (not a sort or page link of the result) starts again at the first page.
  function runQuery(fromLink) {
    if (!fromLink) form.querySelector("[name='native-page']").value = "";
    if (!run.disabled) htmx.trigger(run, "click");
  }

  // Ctrl+Enter (or Cmd+Enter) anywhere in the editor's form runs the query.
  form.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      runQuery();
    }
  });

  // With scripts the form's own submission (Enter in a field) runs the query; a new database reloads
  // the page with its schema (the plain GET the form makes without scripts).
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    runQuery();
  });
  form.querySelectorAll("[data-without-scripts]").forEach(function (button) { button.hidden = true; });
  form.addEventListener("change", function (event) {
    if (event.target instanceof Element && event.target.matches("[data-reload]")) {
      form.querySelectorAll("[name^='tag-field.']").forEach(function (picker) { picker.value = ""; });
      form.submit();
    }
  });

  // A sort or page link of the result runs the query again with that state.
  var RESULT_STATE = { sort: "native-sort", dir: "native-dir", page: "native-page" };
  document.getElementById("native-result").addEventListener("click", function (event) {
    var link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!link) return;
    var url = new URL(link.href, location.href);
    if (url.pathname !== form.getAttribute("action")) return;
    event.preventDefault();
    Object.keys(RESULT_STATE).forEach(function (key) {
      form.querySelector("[name='" + RESULT_STATE[key] + "']").value = url.searchParams.get(key) || "";
    });
    runQuery(true);
  });

  function running(on) {
    cancel.hidden = !on;
    run.setAttribute("aria-busy", on ? "true" : "false");
    status.textContent = on ? "Running…" : "";
  }

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt === run) running(true);
  });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt !== run) return;
    running(false);
    if (event.detail.xhr && event.detail.xhr.status === 0) status.textContent = "Cancelled.";
  });
  run.addEventListener("click", function (event) {
    if (event.isTrusted) form.querySelector("[name='native-page']").value = "";
  }, true);

  cancel.addEventListener("click", function () {
    htmx.trigger(run, "htmx:abort");
    sql.focus();
  });
  // Leaving the page aborts a run still going (browsers do too; this says so for every one of them).
  window.addEventListener("pagehide", function () { htmx.trigger(run, "htmx:abort"); });

  function setView(name, value) {
    var holder = document.getElementById("native-view-state");
    var input = holder.querySelector("[name='" + name + "']");
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      holder.appendChild(input);
    }
    input.value = value;
  }

  var result = document.getElementById("native-result");
  result.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var view = target && target.closest("[data-native-view]");
    var pick = target && target.closest("[data-native-viz] a[data-display]");
    if (view) {
      setView("native-view", view.dataset.nativeView);
      runQuery(true);
    } else if (pick) {
      event.preventDefault();
      closeSavePanel();
      setView("native-viz-change", new URLSearchParams({ display: pick.dataset.display }).toString());
      runQuery();
    }
  });

  // The save panel holds the question as it was when opened: a change of the SQL, its variables or
  // how the result is shown closes it, so a save never stores an older query than the one on screen.
  function closeSavePanel() {
    var saving = document.getElementById("save-panel");
    if (saving && saving.firstElementChild) saving.innerHTML = "";
  }
  form.addEventListener("input", closeSavePanel);
  form.addEventListener("change", closeSavePanel);

  function changeSettings(panel, submitter) {
    var data = new URLSearchParams(new FormData(panel, submitter || undefined));
    data.delete("q");  // the question is the editor's form; the panel's copy of it is for links
    setView("native-viz-change", data.toString());
    closeSavePanel();
    runQuery(true);
  }
  // viz.js stops the new-rule fields' changes before they get here ("Add rule" submits them).
  result.addEventListener("change", function (event) {
    var panel = event.target instanceof Element ? event.target.closest("form[data-native-viz]") : null;
    if (panel) changeSettings(panel);
  });
  result.addEventListener("submit", function (event) {
    var panel = event.target.closest("form[data-native-viz]");
    if (!panel) return;
    event.preventDefault();
    changeSettings(panel, event.submitter);
  });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt === run) setView("native-viz-change", "");
  });

  // The schema browser's and snippets' buttons insert their text where the cursor is.
  form.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("[data-insert]") : null;
    if (!button) return;
    var text = button.dataset.insert;
    var start = sql.selectionStart;
    sql.focus();
    sql.setRangeText(text, start, sql.selectionEnd, "end");
    sql.dispatchEvent(new Event("input", { bubbles: true }));
  });
})();
