// The save panels of a question page (plugins/app/save.py): a panel loaded into #save-panel takes the
// focus (its first field), Cancel or Escape empties it and gives the focus back to the button that
// opened it, and in the Save panel choosing "Replace" turns the new question's fields off.
(function () {
  var opener = null;

  function panel() { return document.getElementById("save-panel"); }

  function close() {
    var here = panel();
    if (!here || !here.firstElementChild) return;
    here.innerHTML = "";
    if (opener && document.contains(opener)) opener.focus();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest(".save-actions button");
    if (button) opener = button;
    if (event.target.closest("[data-save-close]")) close();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && panel() && panel().contains(event.target)) close();
  });

  document.addEventListener("change", function (event) {
    var choice = event.target;
    if (choice.name !== "replace" || !choice.closest("#save-panel")) return;
    var fields = choice.form.querySelector(".save-new");
    if (fields) fields.disabled = choice.form.elements.replace.value === "replace";
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var here = panel();
    if (!here || event.detail.target !== here) return;
    var first = here.querySelector("input:not([type=hidden]):not(:disabled), select, textarea, button");
    if (first) first.focus();
  });
})();
