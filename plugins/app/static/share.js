// The share pages' copy buttons: [data-copy=<id>] copies the text of the field with that id (a public
// link, its iframe code, the embed token code) and says so on the button for a moment.
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button) return;
  var field = document.getElementById(button.dataset.copy);
  if (!field) return;
  var done = function () {
    var label = button.textContent;
    button.textContent = "Copied";
    setTimeout(function () { button.textContent = label; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(done, function () { field.select(); });
  } else {
    // Without the clipboard API (a page over plain HTTP) the text is selected for the person to copy.
    field.select();
    done();
  }
});

// A subscription's schedule shows the fields its frequency uses (share.css reads data-schedule).
document.addEventListener("change", function (event) {
  if (event.target.id !== "sub-schedule") return;
  var fieldset = event.target.closest(".schedule");
  if (fieldset) fieldset.dataset.schedule = event.target.value;
});
