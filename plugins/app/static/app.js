// The app's own behaviour where htmx does not reach: the theme switch. Every write is htmx with JSON
// bodies (json-enc, on <body>), so it passes the API's cross-site rule.
document.addEventListener("click", function (event) {
  var toggle = event.target.closest("[data-theme-toggle]");
  if (!toggle) return;
  var next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  document.documentElement.dataset.theme = next;
  try { localStorage.setItem("tessera-theme", next); } catch (e) { /* the switch still holds for this page */ }
  document.cookie = "tessera-theme=" + next + "; path=/; SameSite=Lax";
});
