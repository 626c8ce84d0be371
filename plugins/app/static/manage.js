// Managing a collection's content (plugins/app/collections_edit*.py): an action link or the bulk form
// loads its page's .dialog-content into the page's <dialog> (htmx), which opens here; Cancel closes it.
// The checkboxes of the items feed the bulk form (their form="bulk"): its buttons wait for a selection.
(function () {
  function dialog() { return document.getElementById("action-dialog"); }

  document.addEventListener("htmx:afterSwap", function (event) {
    var box = dialog();
    if (!box || event.detail.target.id !== "dialog-body") return;
    if (!box.open) box.showModal();
    var first = box.querySelector("input:not([type=hidden]), select, textarea, button.primary");
    if (first) first.focus();
  });

  document.addEventListener("click", function (event) {
    var close = event.target.closest("#action-dialog [data-dialog-close]");
    if (!close) return;
    event.preventDefault();
    dialog().close();
  });

  // Leaving a menu open after picking from it hides the page behind it.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var menu = event.target.closest && event.target.closest("details.item-menu");
    if (menu) menu.open = false;
  });

  function refresh() {
    var form = document.getElementById("bulk");
    if (!form) return;
    var picked = document.querySelectorAll("input[form=bulk][name=item]:checked").length;
    form.querySelectorAll("[data-needs-selection]").forEach(function (button) { button.disabled = picked === 0; });
    var count = form.querySelector("[data-selected-count]");
    if (count) count.textContent = picked ? picked + " selected" : "Select items to move them or move them to the trash";
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches("input[form=bulk][name=item]")) refresh();
  });
  document.addEventListener("DOMContentLoaded", refresh);
})();
